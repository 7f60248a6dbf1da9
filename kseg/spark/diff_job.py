"""``kseg diff --roots ... --spark``: replica sets compared in small Spark jobs, each failure its own.

The driver finds the replica sets (:func:`kseg.ops.diff.diff.replica_sets`) and deals them, in order,
into groups (four per core present, at most one set each); each group is its own Spark job
(:func:`kseg.spark.pool.run_jobs`) whose tasks, one per set, run the local comparison
(:func:`kseg.ops.diff.diff.compare`) and send back its rows (:func:`kseg.render.diff.rows`), so the
driver prints exactly what the local command prints.  The paths must be visible to the executors (a
shared mount).  A set whose task cannot read it comes back as an ``error`` row, never as identical.
A group whose job fails (a task that kept dying: ``spark.task.maxFailures`` exhausted) is run again one
set per job, so that only the set that kills its task becomes an ``error`` row naming the cause; every
other set's rows stand (a partial verdict, exit 2).
"""

from __future__ import annotations

import os
import socket
from typing import Any

from kseg.spark.pool import run_jobs
from kseg.storage.context import Carried

Outcome = tuple[list[dict] | None, str | None]


def diff_set(index: int, partitions: Any) -> tuple[int, list[dict] | None, str | None]:
    """Runs on an executor: (index, rows, None) or (index, None, error line)."""
    from kseg.errors import KsegError
    from kseg.ops.diff.diff import compare
    from kseg.render.diff import rows
    from kseg.spark.job import KILL_WORKER_ENV

    if partitions and os.environ.get(KILL_WORKER_ENV) == f"diff:{partitions[0].name}":
        os._exit(17)  # test-only (docs/spark.md): a Python worker that dies, as an out-of-memory kill ends it
    try:
        return index, rows(compare(partitions)), None
    except KsegError as exc:
        return index, None, exc.describe()
    except Exception as exc:  # never let a lost task look like a clean set
        return index, None, f"executor {socket.gethostname()}: {type(exc).__name__}: {exc}"


def _compare(sc: Any, indexed: list[tuple[int, Any]]) -> dict[int, Outcome]:
    """One Spark job: one task per replica set of ``indexed``."""
    rdd = sc.parallelize(indexed, len(indexed))  # one set per Spark partition
    return {i: (r, e) for i, r, e in rdd.map(Carried(lambda item: diff_set(item[0], item[1]))).collect()}


def run(spark: Any, sets: list) -> list[Outcome]:
    """Compare every replica set on the cluster, one task each; results in the sets' order."""
    if not sets:
        return []
    from kseg.spark.session import task_failure

    sc = spark.sparkContext
    groups_wanted = max(1, min(len(sets), 4 * sc.defaultParallelism))
    indexed = list(enumerate(sets))
    groups = [indexed[g::groups_wanted] for g in range(groups_wanted)]
    got: dict[int, Outcome] = {}
    retry: list[tuple[int, Any]] = []

    def first(number: int, results: dict[int, Outcome] | None, exc: BaseException | None) -> None:
        if exc is None and results is not None:
            got.update(results)
        elif len(groups[number]) == 1:
            index, replicas = groups[number][0]
            got[index] = (None, _given_up(replicas, task_failure(exc or Exception())))
        else:
            retry.extend(groups[number])

    run_jobs(sc, len(groups), lambda n: _compare(sc, groups[n]), first)

    def alone(number: int, results: dict[int, Outcome] | None, exc: BaseException | None) -> None:
        index, replicas = retry[number]
        got[index] = results[index] if results else (None, _given_up(replicas, task_failure(exc or Exception())))

    run_jobs(sc, len(retry), lambda n: _compare(sc, [retry[n]]), alone)
    return [got.get(i, (None, "no result came back from the cluster for this replica set")) for i in range(len(sets))]


def _given_up(replicas: Any, cause: str) -> str:
    """The error line of a replica set whose task Spark gave up: the set (its first replica's path), why."""
    where = replicas[0].path if replicas else "a replica set"
    return f"{where}: not compared: Spark gave up its task (spark.task.maxFailures reached): {cause}"
