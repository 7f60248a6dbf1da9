"""``kseg logdir``: a broker's log directories read offline -- checkpoints, topic IDs, leader epochs, leftovers."""

from __future__ import annotations

import sys

from kseg.cli import parts
from kseg.cli.options import (
    HELP,
    Run,
    Spark,
    format_option,
    json_report_options,
    paths_argument,
    rsm_key_option,
    run_options,
    spark_options,
)


@parts.command(context_settings=HELP)
@paths_argument
@json_report_options("logdir and partition")
@format_option
@run_options
@rsm_key_option
@spark_options
def logdir(
    paths: tuple[str, ...], report_path: str | None, force: bool, output_format: str, run: Run, spark: Spark
) -> None:
    """What a broker left in its log directories (each PATH a log directory, or one
    partition directory of it): meta.properties, .kafka_cleanshutdown, the high
    watermark, recovery point, log start and cleaner checkpoints, each partition's
    topic ID (partition.metadata), leader-epoch-checkpoint and segments -- checked
    against each other as Kafka will on start (docs/logdir.md).  After a crash (no
    .kafka_cleanshutdown), the batches a broker's recovery reads are checked (CRCs),
    and what it would truncate is a problem.  A PATH holding log directories below
    it (a fleet: <root>/<broker>/<log dir>) is read as all of them; a PATH may be
    a URI (s3://...).  --spark reads the partition directories on
    Spark's executors, with the same rows.

    \b
    Exit codes:
      0  every file read, no problem found
      1  problems (data recovery would truncate, offsets past the log end, bad
         checkpoints, leftovers, ...)
         or a segment that could not be read past a corrupt or partial batch
      2  usage error, a PATH holding no log directory (an unmounted disk), or a
         file or directory could not be read (the OS's reason),
         or (--spark) a partition whose task Spark gave up: a failed row
    """
    from kseg.jsonlines import dumps
    from kseg.ops.logdir.run import check_report
    from kseg.render import logdir as render
    from kseg.render.sink import write_all
    from kseg.spark.paths import absolute_all
    from kseg.storage.outcome import exit_code
    from kseg.storage.outputs import destination

    spark.check(run)
    # a log directory's report names it absolute (its identity): shown as given, here and on Spark alike
    run = run.shown_as(paths, absolute_all(paths))
    if spark.on:  # executors do not run in this directory: every local path absolute (docs/spark.md)
        paths = tuple(absolute_all(paths))
    if force and not report_path:
        run.fail("--force replaces an existing --report file; give it with --report")
    report = destination(report_path) if report_path else None  # its store chosen once, here
    if report is not None:
        check_report(report, list(paths), force)
    skipped: list[str] = []  # a fleet root's directories holding no log directory
    reports = _read(list(paths), spark, skipped)
    rows = [dumps(row) for report in reports for row in render.rows(report)]
    if report is not None:
        report.write_lines(rows, replace=force)
    if output_format == "json":
        lines = rows
    else:
        lines = [line for report in reports for line in render.text_lines(report)]
        lines.append(render.summary_line(reports))
    write_all(run.out, ("\n".join(lines) + "\n").encode("utf-8", "replace"))
    run.notes(skipped + [text for report in reports for text in report.notes])  # after the results: not checked
    failed = False
    reads = []
    for report in reports:
        for text in report.errors:
            failed = bool(run.error(text))
        for part in report.partitions:
            for text in part.errors:
                failed = bool(run.error(text))
            for read in part.log.reads:
                reads.append(read)
                if not read.complete:
                    run.error(read.describe())
    problems = any(r.problems or any(p.problems for p in r.partitions) for r in reports)
    sys.exit(exit_code(reads, problems=problems, failed=failed))


def _read(paths: list[str], spark: Spark, notes: list[str]) -> list:
    """The reports of every log directory of ``paths``, read here or on Spark's executors (the same
    rows); a path that cannot be read raises its one line, exit 2 (:func:`kseg.cli.ending.fatal`)."""
    from kseg.ops.logdir.run import finish_all, inspect_all, open_all

    if not spark.on:
        return inspect_all(paths, notes)
    from kseg.spark.logdir_job import read_on_spark
    from kseg.spark.session import require

    require()  # before any file is read
    opened = open_all(paths, notes)  # the log directories' own files, on the driver
    read_on_spark(opened, spark.master, spark.conf, spark.verbose)  # SparkSetupError: its one line, exit 2
    return finish_all(opened)
