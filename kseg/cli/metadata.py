"""``kseg metadata``: the cluster metadata image a broker builds from ``__cluster_metadata-0``."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from typing import Any

import click

from kseg.cli import parts
from kseg.cli.options import HELP, Run, paths_argument, reading_options
from kseg.cli.params import Int
from kseg.limits import INT32_MAX, INT64_MAX, decompression_limit


@parts.command(context_settings=HELP)
@paths_argument
@parts.option("--from-start", is_flag=True, help="Replay the whole log from offset 0, no snapshot.")
@parts.option("--snapshot-only", is_flag=True, help="The newest snapshot alone (at or before the point asked).")
@parts.option(
    "--at-offset",
    type=Int(0, INT64_MAX),
    multiple=True,
    metavar="N",
    help="The image as of offset N (inclusive), from the newest snapshot at or before it (twice with --diff).",
)
@parts.option(
    "--at-time",
    multiple=True,
    metavar="TIME",
    help="The image as of the last batch appended at or before TIME, epoch ms or ISO-8601 (twice with --diff).",
)
@parts.option("--topic", "topics", multiple=True, metavar="NAME", help="Only this topic and its configs (repeatable).")
@parts.option(
    "--broker",
    "brokers",
    multiple=True,
    type=Int(0, INT32_MAX),
    metavar="ID",
    help="Only this broker, and the partitions it is a replica of (repeatable).",
)
@parts.option(
    "--history",
    metavar="TOPIC[-PARTITION]",
    default=None,
    help="Instead of the image: every change of the partition's registration (leader, epochs, replicas, ISR, "
    "ELR, directories) with its offset, time and records; a topic name alone: all its partitions.",
)
@parts.option(
    "--diff",
    is_flag=True,
    help="Compare two images: of two PATHs (two nodes' copies), or of one PATH at two --at-offset or "
    "--at-time points; what was created, deleted and changed.",
)
@parts.option(
    "--logdir",
    "logdirs",
    multiple=True,
    metavar="LOGDIR",
    help="Compare the image with a broker's log directory (a log directory, a partition directory or a root "
    "of them, as kseg logdir takes them; repeatable): strays, replicas with no directory, topic IDs and "
    "directory assignments that differ (exit 1).",
)
@reading_options
def metadata(
    paths: tuple[str, ...],
    from_start: bool,
    snapshot_only: bool,
    at_offset: tuple[int, ...],
    at_time: tuple[str, ...],
    topics: tuple[str, ...],
    brokers: tuple[int, ...],
    history: str | None,
    diff: bool,
    logdirs: tuple[str, ...],
    max_message_size: int,
    output_format: str,
    run: Run,
) -> None:
    """The cluster metadata image a broker would build from a __cluster_metadata-0
    directory (PATH: the directory, or the log directory holding it), read-only
    and without the lock: the newest snapshot, then the log after it replayed one
    batch at a time as Kafka's MetadataLoader does -- features, controllers,
    brokers, topics and partitions, configs, quotas, ACLs, SCRAM users (never
    their keys), delegation tokens (never their HMACs), producer ids
    (docs/metadata.md).

    \b
    Exit codes:
      0  the image, every batch up to the point asked read and applied
      1  a record Kafka's loader refuses, or the replay stopped at a corrupt
         batch (the image shown as partial, never as the current one);
         --diff: the images differ; --history: no such topic; --logdir: the
         disks disagree with the image
      2  usage error, or an input could not be read (the OS's reason)
    """
    from kseg.cli.params import reference_time
    from kseg.decoders.metadata import read_record
    from kseg.ops.metadata.history import History, chosen, selected, watched
    from kseg.ops.metadata.read import Target, replay
    from kseg.render import metadata as render
    from kseg.storage.outcome import exit_code

    if from_start and snapshot_only:
        run.fail("--from-start replays the log without a snapshot: it cannot go with --snapshot-only")
    if at_offset and at_time:
        run.fail("give --at-offset or --at-time, not both")
    times = [_at_time(t, reference_time) for t in at_time]
    points = [Target(from_start, snapshot_only, n, None) for n in at_offset] or [
        Target(from_start, snapshot_only, None, t) for t in times
    ]
    if logdirs and (diff or history is not None):
        run.fail("--logdir compares one image with the disks: it cannot go with --diff or --history")
    if diff:
        sys.exit(_diff(run, list(paths), points, decompression_limit(max_message_size), output_format, history))
    if len(points) > 1:
        run.fail("two --at-offset or --at-time points go with --diff")
    target = points[0] if points else Target(from_start, snapshot_only)
    watch = History(watched(history)) if history is not None else None
    only = render.Filter(frozenset(topics), frozenset(brokers))
    result = replay(list(paths), read_record, target, decompression_limit(max_message_size), watch)
    found = True
    if watch is not None and history is not None:
        changes = selected(watch, history)
        found = chosen(watch, history) is not None
        if not found:
            result.notes.append(f"no topic {history} (nor its partition) in the offsets replayed")
        pieces, line = iter(_history_lines(result, history, changes, output_format)), True
    else:
        if output_format == "json":
            pieces, line = render.image_json(result, only), False  # one line, a topic at a time
        else:
            from kseg.render.metadata_text import text_lines

            pieces, line = text_lines(result, only), True
    disks = _disks(result, list(logdirs)) if logdirs else None
    if disks is not None:
        pieces = itertools.chain(pieces, _disk_lines(disks, only, output_format))
    _write_pieces(run, pieces, line)
    run.notes(result.notes)
    if result.halt is not None:
        run.error(result.halt.error())
    for read in result.reads:
        if not read.complete:
            run.error(read.describe())
    problems = bool(result.loader.faults) or result.halt is not None or not found
    if disks is not None:
        run.notes(disks.notes)
        for error in disks.errors:
            run.error(error)
        problems = problems or bool(_shown(disks, only))
    sys.exit(exit_code(result.reads, problems=problems, failed=disks is not None and bool(disks.errors)))


def _disks(result: Any, logdirs: list[str]) -> Any:
    """``--logdir``: the image compared with the log directories (read before any output)."""
    from kseg.ops.metadata.disks import compare

    return compare(result.image, logdirs)


def _shown(disks: Any, only: Any) -> list:
    from kseg.render.metadata_disks import shown

    return shown(disks, only)


def _disk_lines(disks: Any, only: Any, output_format: str) -> Iterator[str]:
    """The disks' section after the image: text lines, or JSON rows after the image's one row."""
    from kseg.jsonlines import dumps
    from kseg.render import metadata_disks as render

    if output_format == "json":  # the image's row is written in pieces of one line: each row starts a line
        yield from ("\n" + dumps(row) for row in render.json_rows(disks, only))
    else:
        yield from render.text_lines(disks, only)


def _diff(run: Run, paths: list[str], points: list[Any], limit: int, output_format: str, history: str | None) -> int:
    """``--diff``: two PATHs at one point, or one PATH at two points; exit 1 when they differ."""
    from kseg.decoders.metadata import read_record
    from kseg.jsonlines import dumps
    from kseg.ops.metadata.diff import differences
    from kseg.ops.metadata.read import Target, replay
    from kseg.render import metadata as image
    from kseg.render import metadata_diff as render
    from kseg.render.sink import write_all
    from kseg.storage.outcome import exit_code

    if history is not None:
        run.fail("--history and --diff: give one")
    if len(paths) == 2 and len(points) <= 1:
        sides = [([p], points[0] if points else Target()) for p in paths]
    elif len(paths) == 1 and len(points) == 2:
        sides = [(paths, point) for point in points]
    else:
        run.fail("--diff compares two PATHs at one point, or one PATH at two --at-offset or --at-time points")
    left, right = (replay(p, read_record, point, limit) for p, point in sides)
    found = differences(image.image_row(left), image.image_row(right))
    if output_format == "json":
        lines = [dumps(render.difference_row(d)) for d in found] + [dumps(render.summary_row(left, right, found))]
    else:
        lines = render.text_lines(left, right, found)
    write_all(run.out, ("\n".join(lines) + "\n").encode("utf-8", "replace"))
    for side in (left, right):
        run.notes(side.notes)
        if side.halt is not None:
            run.error(side.halt.error())
        for read in side.reads:
            if not read.complete:
                run.error(read.describe())
    reads = left.reads + right.reads
    return exit_code(reads, problems=bool(found) or left.halt is not None or right.halt is not None)


def _write_pieces(run: Run, pieces: Iterator[str], lines: bool) -> None:
    """The output in writes of about 64 KiB: each piece a line (``lines``) or a part of one line."""
    from kseg.render.sink import write_all

    end = "\n" if lines else ""
    buf: list[str] = []
    size = 0
    for piece in pieces:
        buf.append(piece + end)
        size += len(piece)
        if size >= 1 << 16:
            write_all(run.out, "".join(buf).encode("utf-8", "replace"))
            buf, size = [], 0
    write_all(run.out, ("".join(buf) + ("" if lines else "\n")).encode("utf-8", "replace"))


def _history_lines(result: Any, asked: str, changes: list, output_format: str) -> list[str]:
    from kseg.jsonlines import dumps
    from kseg.render import metadata_history as render

    if output_format == "json":
        return [dumps(render.change_row(c)) for c in changes] + [dumps(render.summary_row(result, asked, changes))]
    return render.text_lines(result, asked, changes)


def _at_time(text: str | None, parse: Callable[[str], int | None]) -> int | None:
    if text is None:
        return None
    try:
        return parse(text)
    except click.BadParameter as exc:
        raise click.BadParameter(exc.message, param_hint="--at-time") from None
