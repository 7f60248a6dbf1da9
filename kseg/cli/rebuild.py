"""``kseg rebuild-index``: rebuild ``.index``, ``.timeindex`` and ``.txnindex`` as Kafka's recovery does."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from kseg.cli import parts
from kseg.cli.options import (
    HELP,
    Run,
    capped_jobs,
    format_option,
    int32_option,
    jobs_option,
    max_message_size_option,
    rsm_key_option,
    run_options,
)
from kseg.errors import KsegError
from kseg.limits import decompression_limit

if TYPE_CHECKING:
    from kseg.storage.outputs import Destination


@parts.command(context_settings=HELP)
@click.argument("paths", nargs=-1, required=True, metavar="SEGMENT.log|DIR...", type=click.Path(readable=False))
@parts.option("--check", is_flag=True, help="Compare with the existing files and report differences; write nothing.")
@parts.option(
    "--output-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write the rebuilt files here instead of beside each log.",
)
@parts.option("--force", is_flag=True, help="Replace existing files that differ.")
@int32_option("--index-interval-bytes", 4096, "The topic's index.interval.bytes.")
@int32_option(
    "--max-index-bytes",
    10 * 1024 * 1024,
    "The topic's segment.index.bytes (bounds the entries an index holds).",
    minimum=12,
)
@format_option
@max_message_size_option
@run_options
@rsm_key_option
@jobs_option
def rebuild_index(
    paths: tuple[str, ...],
    check: bool,
    output_dir: str | None,
    force: bool,
    index_interval_bytes: int,
    max_index_bytes: int,
    output_format: str,
    max_message_size: int,
    jobs: int,
    run: Run,
) -> None:
    """Rebuild the indexes of segment .log files, or of every segment of
    partition directories (and log roots), exactly as Kafka's recovery
    (LogSegment.recover) does after an unclean shutdown.

    .index and .timeindex get the entries recovery writes (the same rule of
    index.interval.bytes, the same final time-index entry, trimmed);
    .txnindex gets the aborted transactions, with producer state carried
    across the segments of the directory.  Recovery stops at the first
    invalid batch (bad CRC, too small, corrupt length): kseg reports how many
    bytes Kafka would truncate and never changes a .log.

    Existing files are replaced only with --force; identical ones are left
    alone.  Every write is atomic: a crash leaves the old file or the new
    one, never a mix.

    \b
    Exit codes:
      0    every index rebuilt, already identical, or healthy and kept (as
           verify-index judges it); every log valid
      1    --check found differences, or a log holds invalid bytes recovery
           would truncate, or Kafka's recovery would fail on a segment
      2    usage error, nothing to rebuild, a file or directory could not be
           read or written, or an existing file differs, is not healthy, and
           --force was not given
      130  interrupted (Ctrl-C)
      141  stdout was closed early (killed by SIGPIPE)
    """
    from kseg.ops.rebuild.run import Settings, rebuild_all
    from kseg.ops.rebuild.targets import clean_stale_indexes, log_bytes, work
    from kseg.render import progress
    from kseg.render.rebuild import RebuildReport

    if check and (output_dir or force):
        raise click.UsageError(
            "--check compares with the files beside each log and writes nothing; "
            "it takes neither --output-dir nor --force"
        )
    from kseg.storage.outputs import destination

    output = destination(output_dir) if output_dir else None  # its store chosen once, here
    targets, notes = _targets(run, paths, output, check)
    jobs = min(capped_jobs(run, jobs), len(targets))
    run.read_in(jobs)
    bar = progress.make(run.quiet, screen=True)  # per segment, inside it (recover_segment advances it)
    report = RebuildReport(run.out if bar is None else bar.writer(run.out), output_format, run.quiet)
    settings = Settings(check, force, index_interval_bytes, max_index_bytes, decompression_limit(max_message_size))
    todo, unreadable = work(targets, output)
    for part in unreadable:  # a directory that cannot be listed: a failed row, exit 2
        report.unreadable(part)
    if not check:
        for removed in clean_stale_indexes(todo):
            run.removed(removed)
    segment_bar = bar  # --jobs: a partition at a time (rebuild_all); else the bytes read, inside each segment
    if bar is not None and (jobs <= 1 or len(todo) <= 1):
        bar.reads("rebuild-index", log_bytes(todo), run.context.observers)
        segment_bar = None
    code = 0
    try:
        for done in rebuild_all(todo, settings, jobs, segment_bar):
            code = max(code, _show(run, report, done))
    finally:
        if bar is not None:
            bar.close()
    sys.exit(max(code, report.summary(notes)))


def _targets(run: Run, paths: tuple[str, ...], output: Destination | None, check: bool) -> tuple[list[Any], list[str]]:
    """The targets (:func:`kseg.ops.rebuild.targets.plan`) and the notes of finding them, printed; what
    cannot be done is the one error line and exit 2, before any work."""
    from kseg.ops.rebuild.targets import plan

    notes: list[str] = []
    try:
        targets = plan(list(paths), notes, output=output, check=check)
    except KsegError as exc:
        run.notes(notes)
        run.fail(exc)
    run.notes(notes)
    return targets, notes


def _show(run: Run, report: Any, done: Any) -> int:
    """One segment rebuilt, on the report; a refused or failed write is also the one error line; a
    partition that failed is its error line (exit 2)."""
    from kseg.ops.rebuild.write import FAILED, REFUSED

    if done.error is not None:
        return run.error(done.error)
    report.segment(done.rec, done.outcomes)
    for o in done.outcomes:  # a refusal says so: the one error line, as well as the report's row
        if o.status == REFUSED:
            run.error(f"{o.path}: not written: the existing file differs; give --force to replace it")
        elif o.status == FAILED:
            run.error(f"{o.path}: {o.failure()}")
    return 0
