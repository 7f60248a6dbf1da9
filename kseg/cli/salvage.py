"""``kseg salvage``: every intact batch past a partition's damage, in a new partition directory."""

from __future__ import annotations

import sys
from typing import Any

import click

from kseg.cli import parts
from kseg.cli.options import HELP, Run, format_option, max_message_size_option, rsm_key_option, run_options
from kseg.cli.params import Int
from kseg.errors import KsegError, UsageError
from kseg.limits import EXIT_OK, EXIT_PROBLEMS, INT64_MAX, decompression_limit


@parts.command(context_settings=HELP)
@click.argument("source", metavar="SRC", type=click.Path(readable=False))
@parts.option(
    "-o",
    "--output",
    type=click.Path(),
    default=None,
    help="The new partition directory (name it as the partition, orders-3); refused when it exists and is "
    "not empty, unless --force.",
)
@parts.option("--dry-run", is_flag=True, help="Report what would be kept and lost; write nothing.")
@parts.option(
    "--from-offset",
    type=Int(min=0, max=INT64_MAX),
    default=None,
    metavar="OFFSET",
    help="Leave out the batches whose offsets are all below OFFSET.",
)
@parts.option(
    "--report",
    "report_path",
    type=click.Path(),
    default=None,
    help="Also write the JSON Lines rows to this local file, atomically; never inside the input.",
)
@parts.option("--force", is_flag=True, help="Replace a non-empty -o directory and an existing --report file.")
@format_option
@max_message_size_option
@run_options
@rsm_key_option
def salvage(
    source: str,
    output: str | None,
    dry_run: bool,
    from_offset: int | None,
    report_path: str | None,
    force: bool,
    output_format: str,
    max_message_size: int,
    run: Run,
) -> None:
    """Salvage a damaged partition: every whole batch whose CRC holds, past
    torn writes, zeroed pages and overwritten lengths, copied in offset order
    into a new partition directory Kafka loads as it is (segments named by
    base offset, .index/.timeindex/.txnindex as Kafka's recovery writes them).
    SRC is a partition directory or one segment's .log; it is only read.

    Names what was lost: each damaged byte range and the offsets missing
    around it, batches dropped and why (overlapping offsets, out of place,
    compressed records that do not decode; a batch found twice is kept
    once), transactions the damage cut, and what Kafka's recovery -- which
    stops at the first invalid batch -- would have kept (docs/salvage.md).

    \b
    Exit codes:
      0    nothing lost (the output holds every batch of SRC)
      1    data lost: what could be salvaged was
      2    usage error, or a file that could not be read or written
      130  interrupted (Ctrl-C): nothing written
      141  stdout was closed early (killed by SIGPIPE)
    """
    from kseg.ops.salvage.run import resolve
    from kseg.ops.salvage.run import salvage as run_salvage

    if output is None and not dry_run:
        raise click.UsageError("give -o DIR, the new partition directory (or --dry-run to write nothing)")
    notes: list[str] = []
    bar = None
    try:
        part, selected = resolve(source, notes, run.context)
        run.notes(notes)
        _check_outputs(source, part.path, None if dry_run else output, report_path, force)
        if output is not None and not dry_run:
            _clean_stale(run, output)
        bar = _bar(run, part, selected)
        result = run_salvage(
            part,
            selected,
            None if dry_run else output,
            force=force,
            from_offset=from_offset,
            limit=decompression_limit(max_message_size),
        )
    except KsegError as exc:
        _close(bar)
        run.notes(notes)
        run.fail(exc)
    finally:
        _close(bar)
    code = EXIT_PROBLEMS if result.lost else EXIT_OK
    _show(run, result, dry_run, code, output_format, report_path)
    sys.exit(code)


def _bar(run: Run, part: Any, selected: set[int] | None) -> Any:
    """A progress bar on a terminal's stderr (never with ``-q``, never on stdout: the report is printed when
    the bar is gone) following the bytes read inside each segment; or None."""
    from kseg.render import progress

    if not progress.wanted(run.quiet, screen=True):  # the report waits for the end: stdout may be the terminal
        return None
    bar = progress.ByteProgress()
    logs = [s for s in part.segments if s.log and (selected is None or s.base_offset in selected)]
    bar.reads("salvage", sum(s.log_size() for s in logs), run.context.observers)
    return bar


def _close(bar: Any) -> None:
    """The bar gone (closing twice is harmless): before an error line, and before the report."""
    if bar is not None:
        bar.close()


def _clean_stale(run: Run, output: str) -> None:
    """Remove, with a note, the directories a killed salvage into ``output`` left beside it."""
    from kseg.storage.atomic import clean_stale_directories
    from kseg.words import noun

    removed = clean_stale_directories(output)
    if removed:
        n = len(removed)
        run.note(f"removed {n} temporary {noun(n, 'directory')} an interrupted kseg run left: {', '.join(removed)}")


def _check_outputs(source: str, partition: str, output: str | None, report: str | None, force: bool) -> None:
    """Before any read: no output onto, inside or around the input; the report's file writable."""
    import os

    from kseg.storage.outputs import check_file_target, refuse_on_inputs

    inputs = [source, partition]
    for path, option in ((output, "-o"), (report, "--report")):
        if path is None:
            continue
        if "://" in path:  # the option's grammar: a local path (stores are for inputs)
            raise UsageError(f"{option} {path}: salvage writes to a local directory and file, not to a URI")
        refuse_on_inputs(path, inputs, option, hint="salvage into a new directory outside the input")
        target = os.path.realpath(path)
        for given in inputs:
            if os.path.realpath(given).startswith(target.rstrip("/") + "/"):
                raise UsageError(f"{option} {path} holds the input {given}; kseg never writes over what it reads")
    if report is not None:
        check_file_target(report, force=force, option="--report")
    if output is not None and report is not None and os.path.realpath(report).startswith(os.path.realpath(output)):
        raise UsageError("--report lies inside -o: write it beside the salvaged directory")


def _show(run: Run, result, dry_run: bool, code: int, output_format: str, report_path: str | None) -> None:
    from kseg.render.salvage import json_lines, text_lines

    if report_path is not None:
        from kseg.storage.atomic import AtomicStream

        stream = AtomicStream(report_path)
        try:
            for line in json_lines(result, dry_run, code):
                stream.write((line + "\n").encode())
            stream.commit()
        except BaseException:
            stream.discard()
            raise
    lines = json_lines(result, dry_run, code) if output_format == "json" else text_lines(result, dry_run)
    run.out.write("".join(line + "\n" for line in lines).encode("utf-8", "replace"))
    run.out.flush()
