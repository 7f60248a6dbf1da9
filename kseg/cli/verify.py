"""``kseg verify-index``: verify partition directories (locally, or on Spark with ``--spark``)."""

from __future__ import annotations

import sys

import click

from kseg.cli.options import binary_streams, format_option, max_message_size_option, quiet_option
from kseg.jsonlines import dumps


def _write(out, text: str) -> None:
    out.write(text.encode("utf-8", "replace"))


def render_result(out, res, output_format: str) -> None:
    """One segment's summary line, its problem lines and notes (text), or its rows (json)."""
    from kseg.storage.report import problem_rows, segment_row

    if output_format == "json":
        for row in [segment_row(res), *problem_rows(res)]:
            _write(out, dumps(row) + "\n")
        return
    where = f"{res.partition}/{res.segment}"
    if res.status == "failed":
        _write(out, f"{where}: FAILED: {res.failed}\n")
    elif res.problems:
        _write(out, f"{where}: {len(res.problems)} problem{'s' * (len(res.problems) != 1)} "
                    f"({res.batches} batches, {res.bytes} bytes)\n")
    else:
        _write(out, f"{where}: clean ({res.batches} batches, {res.bytes} bytes)\n")
    for p in res.problems:
        _write(out, f"  problem: {p.line()}\n")
    for note in res.notes:
        _write(out, f"  note: {note}\n")


def render_summary(out, report, output_format: str) -> None:
    if output_format == "json":
        _write(out, dumps({"type": "summary", "segments": report.segments, "clean": report.clean,
                                "withProblems": report.with_problems, "failed": report.failed,
                                "problems": report.problems, "bytes": report.bytes,
                                "exitCode": report.exit_code}) + "\n")
    else:
        _write(out, report.summary() + "\n")


def write_report(path: str, all_rows: list[dict]) -> None:
    if path.endswith(".parquet"):
        raise click.UsageError("a .parquet report needs --spark (the local command writes JSON Lines)")
    from kseg.storage.report import write_jsonl

    write_jsonl(path, all_rows)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--strict", is_flag=True,
              help="Apply Kafka's --verify-index-only rule: report pre-KAFKA-806 multi-batch-append entries.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False),
              help="Write one JSON Lines row per segment and per problem (.parquet with --spark).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Verify segments in N processes.")
@max_message_size_option
@format_option
@quiet_option
@click.option("--spark", is_flag=True, help="Run the verification as a PySpark job (pip install 'kseg[spark]').")
@click.option("--master", default=None, help="Spark master URL (default local[*]); with --spark.")
@click.option("--spark-conf", multiple=True, metavar="KEY=VALUE", help="Spark configuration; with --spark.")
def verify_index(paths, strict, report_path, jobs, max_message_size, output_format, quiet, spark, master,
                 spark_conf) -> None:
    """Verify the segments of partition directories, log roots or single segment files.

    Every check of Kafka's --verify-index-only and --index-sanity-check, and
    more: index entries on batch boundaries, increasing offsets and positions,
    time-index timestamps, every batch CRC, trailing bytes, overlapping
    segments, indexes without their log.  Directories named *-delete,
    *-future and *-stray are skipped with a note.

    \b
    Exit codes:
      0  every segment is clean
      1  problems were found
      2  usage error, or a file could not be read
    """
    from kseg.errors import KsegError
    from kseg.storage.partition import discover

    out, err = binary_streams()
    notes: list[str] = []
    try:
        partitions = discover(list(paths), notes)
    except KsegError as exc:
        raise click.UsageError(exc.describe()) from None
    for note in notes:
        err.write(f"kseg: note: {note}\n".encode())
    if spark:
        from kseg.spark.driver import run_spark_cli

        code = run_spark_cli(partitions, strict=strict, report_path=report_path, master=master,
                             spark_conf=spark_conf, max_message_size=max_message_size, output_format=output_format,
                             out=out, err=err)
        sys.exit(code)

    from kseg.storage.verify_run import verify_all, work_items

    from kseg.render import progress as progress_mod

    progress = progress_mod.make(quiet)
    if progress is not None:
        total = sum(seg.log_size() for _, seg in work_items(partitions))
        progress.start("verify-index", total)
    done = 0

    def on_result(res) -> None:
        nonlocal done
        render_result(out, res, output_format)
        if progress is not None:
            done += res.bytes
            progress.advance_to(done)

    try:
        report = verify_all(partitions, strict=strict, jobs=jobs, max_message_size=max_message_size,
                            on_result=on_result)
    finally:
        if progress is not None:
            progress.close()
    render_summary(out, report, output_format)
    out.flush()
    if report_path:
        from kseg.storage.report import rows

        write_report(report_path, rows(report.results))
    sys.exit(report.exit_code)
