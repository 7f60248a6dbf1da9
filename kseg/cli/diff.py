"""``kseg diff``: compare replicas of one partition (or every partition under several log roots)."""

from __future__ import annotations

import sys
from typing import Any

from kseg.cli import parts
from kseg.cli.options import (
    HELP,
    Run,
    Spark,
    format_option,
    listing_status,
    on_spark,
    paths_argument,
    reading_bar,
    rsm_key_option,
    run_options,
    spark_options,
)


@parts.command(context_settings=HELP)
@paths_argument
@parts.option(
    "--roots",
    is_flag=True,
    help="PATHS are log roots (one per broker): compare every partition found under more than one.",
)
@parts.option(
    "--any-names",
    is_flag=True,
    help="Compare directories that name different topic-partitions (orders-0 against orders-1): by default "
    "that is a usage error (exit 2).",
)
@format_option
@run_options
@rsm_key_option
@spark_options
def diff(paths: tuple[str, ...], roots: bool, any_names: bool, output_format: str, run: Run, spark: Spark) -> None:
    """Compare replicas of a partition: directories of the same partition from
    different brokers, or a backup against a live copy.  Batches are aligned by
    offset and compared on base and last offset, partition leader epoch, CRC and
    record count.  Reports each replica's log start and end, the first divergent
    offset with the leader epochs on each side (batches and leader-epoch-checkpoint),
    and the offset ranges each replica has that no other has.  A replica that is a
    prefix of another is lagging, not divergent; a batch whose CRC does not hold
    is damage in that copy (named with its bytes), not divergence.  With --roots, --spark runs
    one PySpark task per replica set.

    \b
    Exit codes:
      0  identical, or only lagging
      1  divergent, a batch damaged in a copy (its CRC does not hold), or a
         replica could not be read past a corrupt or partial batch (it is
         "unreadable from offset N", never lagging)
      2  usage error (directories of different topic-partitions without
         --any-names), or a file could not be read (the OS's reason)
    """
    from kseg.jsonlines import dumps
    from kseg.render.diff import text_lines

    spark.check(run)
    if spark.on:  # executors do not run in this directory: every local path absolute (docs/spark.md)
        from kseg.spark.paths import absolute_all

        run, paths = run.shown_as(paths, absolute_all(paths)), tuple(absolute_all(paths))
    sets = _replica_sets(run, paths, roots, spark.on, any_names)
    bar, out = None, run.out
    if spark.on:
        results = _spark_results(sets, spark)
    else:
        bar, out = reading_bar(run, "diff", [part for s in sets for part in s])
        results = (_local(s) for s in sets)
    code = 0
    try:
        for set_rows, error in results:
            if error is not None:
                code = run.error(error)
                continue
            lines = [dumps(r) for r in set_rows] if output_format == "json" else text_lines(set_rows)
            out.write(("\n".join(lines) + "\n").encode("utf-8", "replace"))
            for row in set_rows[:-1]:
                if row.get("status") == "unreadable":
                    run.error(
                        f"replica {row['replica']}: unreadable from offset {row['logEndOffset']}: {row['stopped']}"
                    )
            code = max(code, set_rows[-1]["exitCode"])
        out.flush()
    finally:
        if bar is not None:
            bar.close()
    sys.exit(code)


def _replica_sets(run: Run, paths: tuple[str, ...], roots: bool, spark: bool, any_names: bool) -> list[list[Any]]:
    """The replica sets to compare: every partition under more than one root (``--roots``), or the one set
    of the partition directories given; an unreadable path raises InputError: its one line, exit 2
    (kseg.cli.ending.fatal), as directories of different topic-partitions without ``any_names`` (the first
    line said)."""
    from kseg.ops.diff.diff import different_partitions, replica_sets
    from kseg.storage.partition import scan_partition

    if spark and not roots:
        run.fail("--spark takes --roots (one task per replica set)")
    notes: list[str] = []
    if roots:
        with listing_status(run, paths):
            sets = replica_sets(list(paths), notes)
    else:
        if len(paths) < 2:
            run.fail("diff takes two or more partition directories (or --roots with log roots)")
        sets = [[_partition(p, scan_partition, notes) for p in paths]]
        why = None if any_names else different_partitions(sets[0])
        if why is not None:
            run.fail(why)
    run.notes(notes)
    if not sets:
        run.fail("no partition is found under more than one of the roots given: nothing compared")
    return sets


def _partition(path: str, scan: Any, notes: list[str]) -> Any:
    from kseg.errors import InputError
    from kseg.storage import files
    from kseg.storage.partition import is_partition_dir
    from kseg.storage.stores.discover import store_of

    store = store_of(path)
    if not files.exists(path, store):
        raise InputError("no such file or directory", path=path)
    if not files.isdir(path, store):
        raise InputError("not a directory: diff takes partition directories", path=path)
    part = scan(path, notes, store=store)  # a directory that cannot be listed: InputError with the OS's reason
    if not is_partition_dir(path, store):
        raise InputError("no segment files here: not a partition directory (log roots need --roots)", path=path)
    return part


def _local(partitions: list[Any]) -> tuple[Any, str | None]:
    from kseg.errors import KsegError
    from kseg.ops.diff.diff import compare
    from kseg.render.diff import rows

    try:
        return rows(compare(partitions)), None
    except KsegError as exc:
        return None, exc.describe()


def _spark_results(sets: list[list[Any]], spark_options: Spark) -> Any:
    from kseg.spark import diff_job

    return on_spark(spark_options, "diff", lambda spark: diff_job.run(spark, sets))
