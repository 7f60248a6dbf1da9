"""``kseg logdir --spark``: the partition directories of many log directories read on Spark's executors.

The driver reads each log directory's own small files (``meta.properties``, ``.kafka_cleanshutdown``, the
offset checkpoints: :func:`kseg.ops.logdir.run.open_all`) and deals its partition directories, in order,
into bins (four per core present, at most one partition directory each); each bin is its own Spark job
(:func:`kseg.spark.pool.run_jobs`) of one task that reads its partition directories as the local command
does (:func:`kseg.ops.logdir.logdir.read_partition`: segments' batch headers and the batches a broker's
recovery reads, ``partition.metadata``,
``leader-epoch-checkpoint``) and sends back their reports and notes.  The driver then judges what needs
every partition at once -- checkpoint entries without a directory, two directories of one partition on a
node, the log directories' ``meta.properties`` against each other, a topic's IDs across its partitions
(:func:`kseg.ops.logdir.run.finish_all`, :mod:`kseg.ops.logdir.across`) -- so the rows are the local
run's.  A bin whose task keeps dying (``spark.task.maxFailures`` exhausted) makes its partition directories
``failed`` with the cause (exit 2); the other bins' rows stand.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from kseg.ops.logdir.logdir import LogDirReport, PartitionReport, Target
from kseg.spark.pool import run_jobs
from kseg.storage.context import Carried

Unit = tuple[int, int]  # (log directory's index, partition directory's index in it)
Read = tuple[int, int, PartitionReport, list[str]]


def read_bin(reports: dict[int, LogDirReport], units: list[tuple[int, int, Target]]) -> list[Read]:
    """Runs on an executor: each partition directory of the bin read against its log directory's report."""
    from kseg.ops.logdir.logdir import read_partition
    from kseg.spark.job import KILL_WORKER_ENV

    out = []
    for i, j, target in units:
        if os.environ.get(KILL_WORKER_ENV) == f"logdir:{target[1]}":
            os._exit(17)  # test-only (docs/spark.md): a Python worker that dies, as an out-of-memory kill ends it
        try:
            part, notes = read_partition(reports[i], target)
        except Exception as exc:  # never let a lost partition look clean
            cause = f"executor {socket.gethostname()}: {type(exc).__name__}: {exc}"
            part, notes = _failed(reports[i], target, cause), []
        out.append((i, j, part, notes))
    return out


def _failed(report: LogDirReport, target: Target, cause: str) -> PartitionReport:
    part = PartitionReport(report.path, target[1], target[0], store=report.store)
    part.errors.append(f"{target[0]}: not read: {cause}")
    return part


def run(spark: Any, opened: list) -> None:
    """Read every partition directory of ``opened`` (:class:`kseg.ops.logdir.run.Opened`) on the cluster,
    one bin a job; each report's ``partitions`` and ``notes`` filled in the local run's order."""
    from kseg.spark.session import task_failure

    units = [(i, j) for i, one in enumerate(opened) for j in range(len(one.targets))]
    if not units:
        return
    sc = spark.sparkContext
    count = max(1, min(len(units), 4 * sc.defaultParallelism))
    bins = [units[b * len(units) // count : (b + 1) * len(units) // count] for b in range(count)]
    got: dict[Unit, tuple[PartitionReport, list[str]]] = {}

    def job(number: int) -> list[Read]:
        chunk = [(i, j, opened[i].targets[j]) for i, j in bins[number]]
        reports = {i: opened[i].report for i in {i for i, _ in bins[number]}}
        rdd = sc.parallelize([0], 1)
        return rdd.flatMap(Carried(lambda _: read_bin(reports, chunk))).collect()  # with --rsm-key

    def done(number: int, reads: list[Read] | None, exc: BaseException | None) -> None:
        if reads is not None:
            got.update({(i, j): (part, notes) for i, j, part, notes in reads})
            return
        cause = "Spark gave up its task (spark.task.maxFailures reached): " + task_failure(exc or Exception())
        for i, j in bins[number]:
            got[(i, j)] = (_failed(opened[i].report, opened[i].targets[j], cause), [])

    run_jobs(sc, len(bins), job, done)
    for i, one in enumerate(opened):
        for j, target in enumerate(one.targets):
            part, notes = got.get((i, j)) or (_failed(one.report, target, "no result came back from the cluster"), [])
            one.report.partitions.append(part)
            one.report.notes.extend(notes)


def read_on_spark(opened: list, master: str | None, conf: tuple[str, ...], verbose: bool) -> None:
    """:func:`run` in a session of its own (:func:`kseg.spark.session.started`), after the executors were seen
    to import kseg and to see the local log directories; raises :class:`~kseg.errors.SparkSetupError` with the
    one line saying why not."""
    from kseg.spark.paths import local_roots
    from kseg.spark.session import started

    with started("logdir", master, conf, verbose=verbose) as session:
        session.probe(local_roots(one.report.path for one in opened))
        with session.job():
            run(session.spark, opened)
