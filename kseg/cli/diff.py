"""``kseg diff``: compare replicas of one partition (or every partition under several log roots)."""

from __future__ import annotations

import sys

import click

from kseg.cli.options import (
    binary_streams,
    check_spark,
    fail,
    format_option,
    io_options,
    notes_grouped,
    quiet_option,
    reading_bar,
    spark_options,
)
from kseg.cli.options import error as report_error


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False))
@click.option(
    "--roots",
    is_flag=True,
    help="PATHS are log roots (one per broker): compare every partition found under more than one.",
)
@format_option
@quiet_option
@io_options
@spark_options
def diff(paths, roots, output_format, quiet, spark, master, spark_conf, verbose, max_rate, drop_cache) -> None:
    """Compare replicas of a partition: directories of the same partition from
    different brokers, or a backup against a live copy.  Batches are aligned by
    offset and compared on base and last offset, partition leader epoch, CRC and
    record count.  Reports each replica's log start and end, the first divergent
    offset with the leader epochs on each side (batches and leader-epoch-checkpoint),
    and the offset ranges each replica has that no other has.  A replica that is a
    prefix of another is lagging, not divergent.  With --roots, --spark runs
    one PySpark task per replica set.

    \b
    Exit codes:
      0  identical, or only lagging
      1  divergent, or a replica could not be read past a corrupt or partial
         batch (it is "unreadable from offset N", never lagging)
      2  usage error, or a file could not be read (the OS's reason)
    """
    from kseg.jsonlines import dumps
    from kseg.ops.diff.diff import replica_sets
    from kseg.render.diff import text_lines
    from kseg.storage.partition import scan_partition

    check_spark(spark, master, spark_conf, verbose)
    out, err = binary_streams()
    if spark and not roots:
        fail(err, "--spark takes --roots (one task per replica set)")
    notes: list[str] = []
    if spark:  # executors do not run in this directory: every local path absolute (docs/spark.md)
        from kseg.spark.paths import absolute_all

        paths = absolute_all(paths)
    if roots:  # an unreadable path raises InputError: its one line, exit 2 (kseg.cli.main.fatal)
        sets = replica_sets(list(paths), notes)
    else:
        if len(paths) < 2:
            fail(err, "diff takes two or more partition directories (or --roots with log roots)")
        sets = [[_partition(p, scan_partition, notes) for p in paths]]
    notes_grouped(err, notes)
    if not sets:
        fail(err, "no partition is found under more than one of the roots given: nothing compared")

    bar = None
    if spark:
        results = _spark_results(sets, master, spark_conf, verbose, err)
    else:
        bar, out = reading_bar("diff", [part for s in sets for part in s], out)
        results = (_local(s) for s in sets)
    code = 0
    try:
        for set_rows, error in results:
            if error is not None:
                code = report_error(err, error)
                continue
            lines = [dumps(r) for r in set_rows] if output_format == "json" else text_lines(set_rows)
            out.write(("\n".join(lines) + "\n").encode("utf-8", "replace"))
            for row in set_rows[:-1]:
                if row.get("status") == "unreadable":
                    report_error(
                        err, f"replica {row['replica']}: unreadable from offset {row['logEndOffset']}: {row['stopped']}"
                    )
            code = max(code, set_rows[-1]["exitCode"])
        out.flush()
    finally:
        if bar is not None:
            bar.close()
    sys.exit(code)


def _partition(path: str, scan, notes):
    from kseg.errors import InputError
    from kseg.storage import files
    from kseg.storage.partition import is_partition_dir

    if not files.exists(path):
        raise InputError("no such file or directory", path=path)
    if not files.isdir(path):
        raise InputError("not a directory: diff takes partition directories", path=path)
    part = scan(path, notes)  # a directory that cannot be listed: InputError with the OS's reason
    if not is_partition_dir(path):
        raise InputError("no segment files here: not a partition directory (log roots need --roots)", path=path)
    return part


def _local(partitions):
    from kseg.errors import KsegError
    from kseg.ops.diff.diff import compare
    from kseg.render.diff import rows

    try:
        return rows(compare(partitions)), None
    except KsegError as exc:
        return None, exc.describe()


def _spark_results(sets, master, spark_conf, verbose, err):
    import importlib.util

    from kseg.spark import INSTALL_HINT

    if importlib.util.find_spec("pyspark") is None:
        fail(err, INSTALL_HINT)
    from kseg.spark import diff_job
    from kseg.spark.driver import SparkLog, SparkSetupError, start_session

    log = SparkLog(verbose)
    try:
        spark = start_session(master or "local[*]", ("spark.app.name=kseg diff", *spark_conf), log)
    except (ValueError, SparkSetupError) as exc:
        log.close()
        fail(err, str(exc))
    try:
        return diff_job.run(spark, sets)
    finally:
        spark.stop()
        log.close()
