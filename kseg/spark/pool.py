"""Spark jobs submitted from a bounded pool of driver threads, each job's failure its own.

One Spark job whose task keeps failing (``spark.task.maxFailures`` exhausted) aborts only that job: run
as many small jobs, the others' results stand (verify-index's bins, diff's groups of replica sets).
Spark schedules jobs from several driver threads at once (PySpark's pinned thread mode); ``limit`` jobs
run at a time, so a fleet's ten thousand bins do not all wait in Spark's queue holding driver memory.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

T = TypeVar("T")

#: ``--spark-conf spark.kseg.concurrentBins=N``: Spark jobs running at once; default 2 per core present.
CONCURRENT_BINS_CONF = "spark.kseg.concurrentBins"


def positive_conf(sc: Any, name: str, default: int, what: str = "") -> int:
    """A positive integer from the Spark configuration, else ``default``; ValueError says why not."""
    raw = sc.getConf().get(name, None)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{name} takes a positive number{what}, got {raw!r}")
    return value


def concurrent_bins(sc: Any) -> int:
    """:data:`CONCURRENT_BINS_CONF` (a positive integer), else two per core present (at least 4)."""
    return positive_conf(sc, CONCURRENT_BINS_CONF, max(4, 2 * sc.defaultParallelism))


def context_stopped(sc: Any) -> bool:
    """The SparkContext is gone (the master lost, stopped): no later job could run either."""
    return sc._jsc is None or bool(sc._jsc.sc().isStopped())


def run_jobs(
    sc: Any,
    count: int,
    job: Callable[[int], T],
    done: Callable[[int, T | None, BaseException | None], None],
) -> None:
    """Run ``job(0)`` ... ``job(count - 1)`` (each submits Spark jobs), :func:`concurrent_bins` at once,
    in order; ``done(number, result, None)`` or ``done(number, None, exception)`` as each ends, on this
    thread.  A failed job whose SparkContext is gone is raised; Ctrl-C cancels the jobs running."""
    if count <= 0:
        return
    limit = concurrent_bins(sc)
    waiting = list(range(count))[::-1]
    running: dict[Future[T], int] = {}
    with ThreadPoolExecutor(max_workers=min(limit, count), thread_name_prefix="kseg-job") as pool:
        try:
            while waiting or running:
                while waiting and len(running) < limit:
                    number = waiting.pop()
                    # in a copy of this thread's context: the command's read context (--rsm-key) goes along
                    running[pool.submit(contextvars.copy_context().run, job, number)] = number
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(finished, key=lambda f: running[f]):
                    number = running.pop(future)
                    exc = future.exception()
                    if exc is not None and context_stopped(sc):
                        raise exc
                    done(number, None if exc is not None else future.result(), exc)
        except BaseException:
            for future in running:
                future.cancel()
            if not context_stopped(sc):
                sc.cancelAllJobs()  # Ctrl-C, a closed stdout: no job left running behind us
            raise
