"""One local[2] SparkSession per test process, shared by the tests that do not test Spark's start-up.

Starting a JVM and a SparkContext costs a ``kseg --spark`` run ~10-20 s of CPU on the test machine, most of
what such a test spends.  A test that checks what a job computes -- rows, text, exit code -- runs the real CLI
in this process (:func:`run_on_spark`) on the shared session instead of ``python -m kseg ... --spark`` in a
child: kseg's ``SparkSession.builder...getOrCreate()`` finds the session running, and its ``stop()`` at the
end leaves it running for the next test.  What only a fresh process shows stays on a fresh process: Spark's
output kept off stderr, settings read when the JVM starts (``--spark-conf spark.default.parallelism``,
``spark.executorEnv.*`` as kseg's option handling passes it), the spark-submit entry point, a standalone
cluster, start-up errors.  The environment of the Python workers (``KSEG_TEST_KILL_WORKER``, a worker that
dies) is not one of them: PySpark gives each job's functions the context's ``environment`` (what
``spark.executorEnv.*`` fills at start-up) and starts Python workers for each distinct one, so
:func:`run_on_spark`'s ``worker_env`` puts it there for one run.

A test that stops the session (``spark.stop()``) only costs the next one a new SparkContext in the same JVM.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import Result, run_cli

#: what every shared session is given (the tests' own spark-defaults.conf is read as well: tests/spark/jvm_archive.py)
SETTINGS = ("spark.sql.shuffle.partitions=2", "spark.app.name=kseg tests")

_session = None


def shared_session():
    """The process's local[2] session with kseg's data source registered; started on first use, or again
    after a test stopped it."""
    global _session
    if _session is None or _session.sparkContext._jsc is None:
        import kseg.spark
        from kseg.spark.session import session

        before = dict(os.environ)  # kseg sets PYSPARK_PYTHON, SPARK_LOCAL_IP for its JVM: not for later tests
        try:
            _session = session("local[2]", SETTINGS)
        finally:
            os.environ.clear()
            os.environ.update(before)
        kseg.spark.register(_session)
    return _session


def run_on_spark(args: list[str], cwd: Path | str | None = None, worker_env: dict[str, str] | None = None) -> Result:
    """``kseg ARGS`` (with ``--spark``) run in this process through click, its job on :func:`shared_session`,
    which it leaves running.  Paths in ARGS must be absolute (the JVM keeps its own working directory).
    ``worker_env`` is added to the environment of the Python workers of this run's jobs (as
    ``spark.executorEnv.*`` would be), not to the driver's."""
    from pyspark.sql import SparkSession

    env = shared_session().sparkContext.environment
    kept = dict(env)
    env.update(worker_env or {})
    before = dict(os.environ)
    stop = SparkSession.stop
    SparkSession.stop = lambda self: None  # type: ignore[method-assign] - kseg's stop at the end of its run
    try:
        return run_cli(args, cwd=cwd)
    finally:
        SparkSession.stop = stop  # type: ignore[method-assign]
        os.environ.clear()
        os.environ.update(before)
        env.clear()
        env.update(kept)
