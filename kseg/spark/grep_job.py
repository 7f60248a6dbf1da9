"""``kseg grep --spark``: partitions searched on Spark's executors, each partition a task.

The driver lists and prunes the partitions (the key's partition, ``--topic``) as the local command does and
deals them, in order, into groups (four per core present, at most one partition each); each group is its
own Spark job (:func:`kseg.spark.pool.run_jobs`) whose tasks, one per partition, run the local search
(:func:`kseg.runtime.grep_deal.search_into`) and send back what it prints -- so the driver prints exactly what
the local command prints, in the partitions' order.  What a task finds comes back to the driver: a search
matching much wants ``--limit`` or ``--count`` (each task stops at ``--limit`` matches too).  The paths
must be visible to the executors (a shared mount, or an object store).  A partition whose task cannot read
it is its error line (exit 2), never "no match"; a group whose job fails (a task that kept dying) is run
again one partition per job, so only the partition that kills its task becomes an error line.
"""

from __future__ import annotations

import io
import os
import socket
from collections.abc import Iterator
from typing import Any

from kseg.runtime.grep_deal import Done, Task, search_into
from kseg.spark.pool import run_jobs
from kseg.storage.context import Carried


def search_task(index: int, task: Task) -> tuple[int, Done]:
    """Runs on an executor: the partition's search, what it prints in memory."""
    from kseg.errors import KsegError
    from kseg.spark.job import KILL_WORKER_ENV

    if os.environ.get(KILL_WORKER_ENV) == f"grep:{task.partition.name}":
        os._exit(17)  # test-only (docs/spark.md): a Python worker that dies, as an out-of-memory kill ends it
    out = io.BytesIO()
    try:
        done = search_into(task, out)
    except KsegError as exc:  # (search_into answers a partition's KsegError itself; this is the sink's)
        done = Done.failed(exc.describe())
    except Exception as exc:  # never let a lost task look like a partition without a match
        done = Done.failed(f"executor {socket.gethostname()}: {type(exc).__name__}: {exc}")
    done.data = out.getvalue()
    return index, done


def _search(sc: Any, indexed: list[tuple[int, Task]]) -> dict[int, Done]:
    """One Spark job: one task per partition of ``indexed``."""
    rdd = sc.parallelize(indexed, len(indexed))  # one partition directory per Spark partition
    return dict(rdd.map(Carried(lambda item: search_task(item[0], item[1]))).collect())


def run(spark: Any, tasks: list[Task]) -> Iterator[Done]:
    """Search every partition on the cluster; the answers in the partitions' order."""
    if not tasks:
        return
    from kseg.spark.session import task_failure

    sc = spark.sparkContext
    groups_wanted = max(1, min(len(tasks), 4 * sc.defaultParallelism))
    indexed = list(enumerate(tasks))
    groups = [indexed[g::groups_wanted] for g in range(groups_wanted)]
    got: dict[int, Done] = {}
    retry: list[tuple[int, Task]] = []

    def first(number: int, results: dict[int, Done] | None, exc: BaseException | None) -> None:
        if exc is None and results is not None:
            got.update(results)
        elif len(groups[number]) == 1:
            index, task = groups[number][0]
            got[index] = _given_up(task, task_failure(exc or Exception()))
        else:
            retry.extend(groups[number])

    run_jobs(sc, len(groups), lambda n: _search(sc, groups[n]), first)

    def alone(number: int, results: dict[int, Done] | None, exc: BaseException | None) -> None:
        index, task = retry[number]
        got[index] = results[index] if results else _given_up(task, task_failure(exc or Exception()))

    run_jobs(sc, len(retry), lambda n: _search(sc, [retry[n]]), alone)
    for i, task in enumerate(tasks):
        yield got.get(i) or Done.failed(f"{task.partition.path}: no result came back from the cluster")


def _given_up(task: Task, cause: str) -> Done:
    """The answer of a partition whose task Spark gave up: its error line (the partition, why)."""
    where = task.partition.path
    return Done.failed(f"{where}: not searched: Spark gave up its task (spark.task.maxFailures reached): {cause}")
