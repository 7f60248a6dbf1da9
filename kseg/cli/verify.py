"""``kseg verify-index``: verify partition directories (locally, or on Spark with ``--spark``)."""

from __future__ import annotations

import sys

import click

from kseg.cli.options import (
    binary_streams,
    capped_jobs,
    check_spark,
    clean_stale_output,
    fail,
    format_option,
    io_options,
    jobs_option,
    max_message_size_option,
    notes_grouped,
    quiet_option,
    spark_options,
)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False))
@click.option(
    "--strict",
    is_flag=True,
    help="Apply Kafka's --verify-index-only rule: report pre-KAFKA-806 multi-batch-append entries.",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(),
    help="Write one JSON Lines row per segment and per problem; with --spark a directory of "
    "part files written by the executors (JSON Lines, or Parquet for a .parquet path, "
    "local or a URI).  Checked before any work; never inside an input.",
)
@click.option("--force", is_flag=True, help="Replace an existing --report file (atomically).")
@jobs_option
@max_message_size_option
@format_option
@quiet_option
@io_options
@spark_options
def verify_index(
    paths,
    strict,
    report_path,
    force,
    jobs,
    max_message_size,
    output_format,
    quiet,
    spark,
    master,
    spark_conf,
    verbose,
    max_rate,
    drop_cache,
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
    from kseg.errors import InputError, KsegError
    from kseg.ops.verify.report import JsonlReport, check_target
    from kseg.storage.location import is_remote
    from kseg.storage.outputs import refuse_on_inputs
    from kseg.storage.partition import discover, nothing_found, nothing_in

    check_spark(spark, master, spark_conf, verbose, local_verbose=True)
    if spark:  # executors do not run in this directory: every local path absolute (docs/spark.md)
        from kseg.spark.paths import travel

        paths, report_path = travel(paths, report_path)
    if force and not report_path:
        fail(binary_streams()[1], "--force replaces an existing --report file; give it with --report")
    out, err = binary_streams()
    report = None
    notes: list[str] = []
    try:  # the report path first: a run must not end on a path it cannot write
        if report_path:
            refuse_on_inputs(report_path, list(paths), "--report")
        if report_path and report_path.endswith(".parquet") and not spark:
            raise InputError(
                "a .parquet report needs --spark; the local command writes JSON Lines (give a .jsonl path)",
                path=report_path,
            )
        if report_path and spark:
            if not is_remote(report_path):
                check_target(report_path, directory_ok=True)
        elif report_path and is_remote(report_path):
            raise InputError(
                "a report on a store needs --spark (its executors write it); the local command writes a local file",
                path=report_path,
            )
        elif report_path:
            report = JsonlReport(report_path, force=force)
            clean_stale_output(err, report_path)
        partitions = discover(list(paths), notes)
        if nothing_in(partitions):  # "0 segments verified, clean" would be a pass for nothing read
            raise nothing_found(list(paths))
    except KsegError as exc:  # one line, exit 2, before any work
        if report is not None:
            report.discard()
        notes_grouped(err, notes)
        fail(err, exc)
    notes_grouped(err, notes)
    if not spark:
        jobs = capped_jobs(err, jobs)
    if spark:
        from kseg.spark.driver import run_spark_cli

        code = run_spark_cli(
            partitions,
            strict=strict,
            report_path=report_path,
            master=master,
            spark_conf=spark_conf,
            max_message_size=max_message_size,
            output_format=output_format,
            out=out,
            err=err,
            verbose=verbose,
        )
        sys.exit(code)

    from kseg.ops.verify.run import several_log_dirs, verify_all, work_items
    from kseg.render import progress as progress_mod
    from kseg.render.verify import PartitionSummary, render_result, render_summary
    from kseg.storage import read_policy

    read_policy.split(jobs)
    full_names = several_log_dirs(partitions)
    progress = progress_mod.make(quiet, screen=True)
    if progress is not None:
        total = sum(item.segment.log_size() for item in work_items(partitions) if item.segment is not None)
        if jobs == 1:  # the bytes this process reads, inside each segment
            progress.reads("verify-index", total)
        else:  # the workers read: a segment at a time, as results come
            progress.start("verify-index", total)
        out = progress.writer(out)
    done = 0

    from kseg.render import table

    per_partition = PartitionSummary(full_names) if output_format == "text" and table.wanted(out) else None
    labels = (
        [
            f"{it.partition}/{it.segment.name}.log" if it.segment is not None else it.partition
            for it in work_items(partitions)
        ]
        if progress is not None and jobs > 1
        else []
    )
    if labels:
        progress.describe(labels.pop(0))

    from kseg.render.notes import NoteGroups

    groups = (
        NoteGroups("file", "--verbose or --format json lists every one")
        if output_format == "text" and not verbose
        else None
    )

    def on_result(res) -> None:
        nonlocal done
        render_result(out, res, output_format, full_names, notes=groups, quiet=quiet)
        if per_partition is not None:
            per_partition.add(res)
        if report is not None:
            report.add(res)
        if progress is not None and jobs > 1:
            done += res.bytes
            if labels:  # results come in order: the next one is being read
                progress.describe(labels.pop(0))
            progress.advance_to(done)

    try:
        result = verify_all(
            partitions, strict=strict, jobs=jobs, max_message_size=max_message_size, on_result=on_result
        )
        if groups is not None and not quiet:
            groups.write(out)
        if per_partition is not None:
            per_partition.write(out)
        render_summary(out, result, output_format)
        out.flush()
        if report is not None:
            report.commit()
    finally:  # a KsegError raised here is its one line, exit 2 (kseg.cli.main.fatal); the report is discarded
        if progress is not None:
            progress.close()
        if report is not None:
            report.discard()
    sys.exit(result.exit_code)
