"""``kseg rebuild-index``: rebuild ``.index``, ``.timeindex`` and ``.txnindex`` as Kafka's recovery does."""

from __future__ import annotations

import os
import sys

import click

from kseg.cli.options import (
    binary_streams,
    capped_jobs,
    fail,
    format_option,
    io_options,
    jobs_option,
    max_message_size_option,
    note,
    notes_grouped,
    quiet_option,
)
from kseg.cli.options import say as write_line
from kseg.errors import error_line
from kseg.limits import decompression_limit


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, metavar="SEGMENT.log|DIR...", type=click.Path(readable=False))
@click.option("--check", is_flag=True, help="Compare with the existing files and report differences; write nothing.")
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write the rebuilt files here instead of beside each log.",
)
@click.option("--force", is_flag=True, help="Replace existing files that differ.")
@click.option(
    "--index-interval-bytes",
    type=click.IntRange(min=0, max=0x7FFFFFFF),
    default=4096,
    show_default=True,
    help="The topic's index.interval.bytes.",
)
@click.option(
    "--max-index-bytes",
    type=click.IntRange(min=12, max=0x7FFFFFFF),
    default=10 * 1024 * 1024,
    show_default=True,
    help="The topic's segment.index.bytes (bounds the entries an index holds).",
)
@format_option
@max_message_size_option
@quiet_option
@io_options
@jobs_option
def rebuild_index(
    paths,
    check,
    output_dir,
    force,
    index_interval_bytes,
    max_index_bytes,
    output_format,
    max_message_size,
    quiet,
    jobs,
    max_rate,
    drop_cache,
) -> None:
    """Rebuild the indexes of segment .log files, or of every segment of
    partition directories (and log roots), exactly as Kafka's recovery
    (LogSegment.recover) does after an unclean shutdown.

    .index and .timeindex get the entries recovery writes (the same
    --index-interval-bytes rule, the same final time-index entry, trimmed);
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
    from kseg.errors import KsegError
    from kseg.limits import EXIT_ERROR
    from kseg.ops.rebuild.rebuild import resolve
    from kseg.ops.rebuild.run import Settings, rebuild_all
    from kseg.ops.rebuild.write import FAILED, REFUSED
    from kseg.render import progress as progress_mod
    from kseg.render.rebuild import RebuildReport
    from kseg.storage.partition import check_exists, nothing_found, nothing_in

    if check and (output_dir or force):
        raise click.UsageError(
            "--check compares with the files beside each log and writes nothing; "
            "it takes neither --output-dir nor --force"
        )
    out, err = binary_streams()
    notes: list[str] = []

    def say(line: str) -> None:
        write_line(err, line)

    try:
        if output_dir:  # before any work, --force or not
            from kseg.storage.outputs import refuse_on_inputs

            refuse_on_inputs(
                output_dir, list(paths), "--output-dir", hint="to write beside each log, leave out --output-dir"
            )
        for path in paths:
            check_exists(path)
        targets = _unique(resolve(list(paths), notes))
        if nothing_in([t.partition for t in targets]):
            raise nothing_found(list(paths))
        if output_dir:
            _check_output_names(targets)
        elif not check:
            _refuse_remote_writes(targets)
    except KsegError as exc:
        notes_grouped(err, notes)
        fail(err, exc)
    notes_grouped(err, notes)
    jobs = min(capped_jobs(err, jobs), len(targets))
    from kseg.storage import read_policy

    read_policy.split(min(jobs, len(targets)))
    bar = progress_mod.make(quiet, screen=True)  # per segment, inside it (recover_segment advances it)
    report = RebuildReport(out if bar is None else bar.writer(out), output_format, quiet)
    code = 0
    settings = Settings(check, force, index_interval_bytes, max_index_bytes, decompression_limit(max_message_size))
    work = []
    for target in targets:
        if target.partition.error is not None:  # a directory that cannot be listed: a failed row, exit 2
            report.unreadable(target.partition)
            continue
        directory = None
        if output_dir:
            directory = os.path.join(output_dir, target.output_subdir) if target.output_subdir else output_dir
        work.append((target, directory))
    if not check:
        _clean_stale_temp_files(err, work)
    segment_bar = bar  # --jobs: a partition at a time (rebuild_all); else the bytes read, inside each segment
    if bar is not None and (jobs <= 1 or len(work) <= 1):
        bar.reads(
            "rebuild-index",
            sum(
                seg.log_size()
                for target, _ in work
                for seg in target.partition.segments
                if seg.log and (target.selected is None or seg.base_offset in target.selected)
            ),
        )
        segment_bar = None
    try:
        for done in rebuild_all(work, settings, jobs, segment_bar):
            if done.error is not None:
                say(error_line(done.error))
                code = EXIT_ERROR
                continue
            report.segment(done.rec, done.outcomes)
            for o in done.outcomes:  # a refusal says so: the one error line, as well as the report's row
                if o.status == REFUSED:
                    say(error_line(f"{o.path}: not written: the existing file differs; give --force to replace it"))
                elif o.status == FAILED:
                    say(error_line(f"{o.path}: {o.failure()}"))
    finally:
        if bar is not None:
            bar.close()
    sys.exit(max(code, report.summary(notes)))


def _clean_stale_temp_files(err, work: list) -> None:
    """Before writing: the temporary index files a killed run left (``.<name>.<hex>.kseg-tmp``, a kill
    between the link and the rename) in the directories this run writes to are removed, with a note."""
    from kseg.storage import location
    from kseg.storage.atomic import clean_stale
    from kseg.storage.files import INDEX, TIME_INDEX, TXN_INDEX

    def ours(name: str) -> bool:
        return name.endswith((INDEX, TIME_INDEX, TXN_INDEX))

    seen = set()
    for target, directory in work:
        where = directory or target.partition.path
        if location.is_remote(where) or where in seen:
            continue
        seen.add(where)
        removed = clean_stale(where, ours)
        if removed:
            note(
                err,
                f"removed {len(removed)} temporary file{'s' * (len(removed) != 1)} an interrupted kseg "
                f"run left: {', '.join(removed)}",
            )


def _unique(targets: list) -> list:
    """Each partition directory once (given twice, or directly and through its log root)."""
    seen: dict[str, object] = {}
    out = []
    for target in targets:
        key = os.path.realpath(target.partition.path)
        first = seen.get(key)
        if first is None:
            seen[key] = target
            out.append(target)
        elif target.selected is None or first.selected is None:
            if first.selected is not None:  # the whole directory supersedes single files of it
                first.selected = None
        else:
            first.selected |= target.selected
    return out


def _refuse_remote_writes(targets: list) -> None:
    """Indexes are written beside a log only on local disk (atomic rename); a remote log needs
    ``--check`` or ``--output-dir``."""
    from kseg.errors import UsageError
    from kseg.storage import location

    for target in targets:
        if location.is_remote(target.partition.path):
            raise UsageError(
                "kseg writes indexes beside a log only on local disk",
                path=target.partition.path,
                hint="compare with --check, or write the rebuilt files to a local --output-dir",
            )


def _check_output_names(targets: list) -> None:
    """Two log roots holding partitions of one name would write one --output-dir subdirectory."""
    from kseg.errors import InputError

    where: dict[str, str] = {}
    for target in targets:
        if not target.output_subdir:
            continue
        other = where.setdefault(target.output_subdir, target.partition.path)
        if other != target.partition.path:
            raise InputError(
                f"{other} and {target.partition.path} would both be written to "
                f"--output-dir subdirectory {target.output_subdir}/ (replicas from two log "
                "directories): rebuild one log directory at a time"
            )
