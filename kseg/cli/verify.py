"""``kseg verify-index``: verify partition directories (locally, or on Spark with ``--spark``)."""

from __future__ import annotations

import sys
from typing import Any

import click

from kseg.cli import parts
from kseg.cli.options import (
    HELP,
    Run,
    Spark,
    capped_jobs,
    clean_stale_output,
    format_option,
    jobs_option,
    listing_status,
    max_message_size_option,
    paths_argument,
    reword,
    rsm_key_option,
    run_options,
    spark_options,
)
from kseg.errors import KsegError


@parts.command(context_settings=HELP)
@paths_argument
@parts.option(
    "--strict",
    is_flag=True,
    help="Apply Kafka's --verify-index-only rule: report pre-KAFKA-806 multi-batch-append entries.",
)
@parts.option(
    "--report",
    "report_path",
    type=click.Path(),
    help="Write one JSON Lines row per segment and per problem; with --spark a directory of "
    "part files, one per bin as it finishes (JSON Lines, or Parquet for a .parquet path, "
    "local or a URI).  Checked before any work; never inside an input.",
)
@parts.option("--force", is_flag=True, help="Replace an existing --report file (atomically).")
@parts.option(
    "--resume",
    "resume_path",
    type=click.Path(),
    help="Skip the segments an earlier report (a file or part-file directory, local or a URI) verified, if unchanged "
    "(same size); carry their rows into the new report (--report, else this one, replaced) and count them.",
)
@jobs_option
@max_message_size_option
@format_option
@run_options
@rsm_key_option
@spark_options
def verify_index(
    paths: tuple[str, ...],
    strict: bool,
    report_path: str | None,
    force: bool,
    resume_path: str | None,
    jobs: int,
    max_message_size: int,
    output_format: str,
    run: Run,
    spark: Spark,
) -> None:
    """Verify the segments of partition directories, log roots or single segment files.

    Every check of Kafka's --verify-index-only and --index-sanity-check, and
    more: index entries on batch boundaries, increasing offsets and positions,
    time-index timestamps, every batch CRC, trailing bytes, overlapping
    segments, indexes without their log.  Directories named *-delete,
    *-future and *-stray are skipped with a note.

    \b
    Exit codes:
      0    every segment is clean
      1    problems were found
      2    usage error, nothing to verify, or a file or directory could not
           be read (a failed row)
      130  interrupted (Ctrl-C)
      141  stdout was closed early (killed by SIGPIPE, as git is)
    """
    spark.check(run, local_verbose=True)
    if resume_path and (not report_path or report_path == resume_path):
        report_path, force = resume_path, True  # resuming a report replaces it with its rows and the new ones
    if spark.on:  # executors do not run in this directory: every local path absolute (docs/spark.md)
        from kseg.spark.paths import travel

        moved, report_path = travel(paths, report_path)
        run, paths = run.shown_as(paths, moved), tuple(moved)
    if force and not report_path:
        run.fail("--force replaces an existing --report file; give it with --report")
    from kseg.runtime.verify import VerifyRun

    keys = VerifyRun.verified(run, resume_path)
    report, partitions = _inputs(run, paths, report_path, spark.on, force)
    verify = VerifyRun(run, report_path, report)
    partitions = verify.skip(partitions, keys, resume_path)
    if verify.resumption is not None:
        run.notes(list(verify.resumption.notes))
    if spark.on:
        from kseg.spark.driver import run_spark_cli

        sys.exit(
            run_spark_cli(
                verify,
                partitions,
                strict=strict,
                master=spark.master,
                spark_conf=spark.conf,
                max_message_size=max_message_size,
                output_format=output_format,
                verbose=spark.verbose,
            )
        )
    jobs = capped_jobs(run, jobs)
    code = verify.here(
        partitions,
        strict=strict,
        jobs=jobs,
        max_message_size=max_message_size,
        output_format=output_format,
        verbose=spark.verbose,
    )
    sys.exit(code)


def _inputs(run: Run, paths: tuple[str, ...], report_path: str | None, spark: bool, force: bool) -> tuple[Any, list]:
    """The report (:func:`kseg.ops.verify.report.open_report`) and the partitions to verify, before any work
    (with ``spark``, the compact listing the driver plans from: :class:`kseg.storage.listing.Listed`);
    a path that cannot be written or read, or nothing to verify ("0 segments verified, clean" would be a
    pass for nothing read), is the one error line and exit 2."""
    from kseg.ops.verify.report import open_report
    from kseg.storage.listing import Listed
    from kseg.storage.partition import nothing_found, nothing_in
    from kseg.storage.stores.find import discover, discover_as

    report = None
    notes: list[str] = []
    try:
        report = open_report(report_path, list(paths), spark=spark, force=force)
        if report is not None:
            clean_stale_output(run, report.output)
        with listing_status(run, paths):
            partitions: list[Any] = (
                discover_as(list(paths), notes, Listed, run.context)  # each partition packed as it is found
                if spark
                else discover(list(paths), notes, run.context)
            )
        if nothing_in(partitions):
            raise nothing_found(list(paths))
    except KsegError as exc:
        if report is not None:
            report.discard()
        run.notes(notes)
        run.fail(exc)
    run.notes(notes)
    return report, partitions


reword(
    verify_index,
    verbose="Every note under its segment (else one line per kind of note); with --spark, also the clean "
    "segments and Spark's own log on stderr.",
)
