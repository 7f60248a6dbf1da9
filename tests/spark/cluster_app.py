"""One Spark application on the test cluster (tests/spark/cluster.py) for several kseg commands and data source
queries: a driver process of its own, as a ``kseg --spark`` run is, in which each command runs through click.

Starting a driver and its executors costs a cluster run most of its time (and its first query Spark's planner
warming up); the tests of ``tests/spark/test_cluster.py`` that check what a job computes share one application
(:func:`run`).  The first command starts the session exactly as a fresh ``kseg --spark`` process does (kseg's
own session code, its ``--master`` and ``--spark-conf``, its log file); the later ones find it running, as in
``tests/spark/shared.py``, and kseg's ``stop()`` at the end of each leaves it running.  Every command of one
application is therefore given the same ``--spark-conf`` (the application's settings).

A later command or a query may give its jobs' Python workers an environment of their own (``worker_env``, as
``tests/spark/shared.py``'s ``run_on_spark`` does): PySpark hands each job's functions the context's
``environment`` (what ``spark.executorEnv.*`` filled at start-up) and starts Python workers for each distinct
one; a data source takes it when registered, so a query with its own is run on kseg's source registered again.

Run as ``python -m tests.spark.cluster_app SPEC OUT`` (:func:`run` does): SPEC is JSON --
``{"commands": [[name, [arg, ...], worker_env], ...], "master": ..., "conf": [...], "queries": [[query,
worker_env], ...], "uri": ..., "rows_to": ...}`` -- and OUT receives ``{"commands": {name: {"exit_code",
"stdout", "stderr"}}, "queries": [...]}``: a result for every command and query, whatever the others did.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


#: a command, ``(name, kseg args, worker_env)``, and a query, ``(query, worker_env)``
Command = tuple[str, list[str], dict[str, str]]
Query = tuple[str, dict[str, str]]


def run(
    commands: list[Command],
    master: str,
    conf: list[str],
    cwd: Path,
    out: Path,
    env: dict[str, str] | None = None,
    queries: tuple[Query, ...] = (),
    uri: str = "",
    rows_to: Path | None = None,
) -> tuple[dict, list[str]]:
    """Run ``commands`` (each ``(name, kseg args, worker_env)``; the application's ``--master`` and
    ``--spark-conf`` are added to each; ``worker_env`` added to its jobs' Python workers' environment, none
    for the first, which starts the session) and then ``queries`` (each ``(query, worker_env)``, see
    :func:`query`) in one application, its driver a process started in ``cwd`` with ``env`` (default: this
    process's): each command's result (a :class:`tests.conftest.Result`) by name, and each query's line."""
    assert commands and not commands[0][2], "the first command starts the session: no worker_env of its own"
    from tests.conftest import Result

    spec = out.with_suffix(".spec.json")
    spec.write_text(
        json.dumps(
            {
                "commands": commands,
                "master": master,
                "conf": conf,
                "queries": queries,
                "uri": uri,
                "rows_to": str(rows_to or ""),
            }
        )
    )
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    p = subprocess.run(
        [sys.executable, "-m", "tests.spark.cluster_app", str(spec), str(out)],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=1200,
    )
    assert p.returncode == 0 and out.exists(), p.stderr.decode("utf-8", "replace")[-3000:]
    got = json.loads(out.read_text())
    results = {
        name: Result(r["exit_code"], r["stdout"].encode(), r["stderr"].encode()) for name, r in got["commands"].items()
    }
    assert list(results) == [name for name, _, _ in commands]
    assert len(got["queries"]) == len(queries), got["queries"]
    return results, got["queries"]


def query(spark, text: str, uri: str, rows_to: str) -> str:
    """``spark.read.format("kseg")`` for one query "PATH?k=v k=v" (options; "" none; PATH empty: ``uri``):
    "COUNT n" or "FAILED <cause>"; with options (``onUnreadable=rows``), "UNREADABLE n OTHER m", the rows
    marked unreadable and the others; a PATH's rows pickled to ``rows_to`` when given."""
    from kseg.spark.session import cause

    path, _, options_text = text.rpartition("?")
    try:
        options = dict(o.split("=", 1) for o in options_text.split())
        df = spark.read.format("kseg").options(**options).load(path or uri)
        if options:
            marks = [r.unreadable for r in df.select("unreadable").collect()]
            n = sum(m is not None for m in marks)
            return f"UNREADABLE {n} OTHER {len(marks) - n}"
        if path and rows_to:  # every row, pickled (binary columns as bytes)
            rows = [r.asDict(recursive=True) for r in df.collect()]
            with open(rows_to, "wb") as f:
                pickle.dump(rows, f)
            return f"COUNT {len(rows)}"
        return f"COUNT {df.count()}"
    except Exception as exc:  # noqa: BLE001 - the query's result is its failure
        return f"FAILED {cause(exc)}"


@contextmanager
def worker_env(spark, env: dict[str, str]) -> Iterator[None]:
    """``env`` added to the environment of the Python workers of the jobs run inside, kseg's data source
    registered again under it (and after it, without it)."""
    import kseg.spark

    if not env:
        yield
        return
    environment = spark.sparkContext.environment
    kept = dict(environment)
    environment.update(env)
    kseg.spark.register(spark)
    try:
        yield
    finally:
        environment.clear()
        environment.update(kept)
        kseg.spark.register(spark)


def main(spec_path: str, out_path: str) -> None:
    from click.testing import CliRunner
    from pyspark.sql import SparkSession

    import kseg.spark
    from kseg.cli.main import cli
    from kseg.spark.session import session

    spec = json.loads(Path(spec_path).read_text())
    options = ["--master", spec["master"]] + [a for item in spec["conf"] for a in ("--spark-conf", item)]
    stop = SparkSession.stop
    SparkSession.stop = lambda self: None  # type: ignore[method-assign] - kseg's stop at the end of each command
    commands = {}
    try:
        for name, args, env in spec["commands"]:
            with worker_env(SparkSession.getActiveSession(), env):
                r = CliRunner().invoke(cli, [*args, *options], catch_exceptions=True)
            err = r.stderr_bytes.decode("utf-8", "replace")
            if r.exception is not None and not isinstance(r.exception, SystemExit):
                err += "".join(traceback.format_exception(r.exception))
            commands[name] = {
                "exit_code": r.exit_code,
                "stdout": r.stdout_bytes.decode("utf-8", "replace"),
                "stderr": err,
            }
        spark = session(spec["master"], spec["conf"])  # the running one (or started here, with no command)
        kseg.spark.register(spark)
        queries = []
        for text, env in spec["queries"]:
            with worker_env(spark, env):
                queries.append(query(spark, text, spec["uri"], spec["rows_to"]))
        Path(out_path).write_text(json.dumps({"commands": commands, "queries": queries}))
    finally:
        SparkSession.stop = stop  # type: ignore[method-assign]
        active = SparkSession.getActiveSession()
        if active is not None:
            active.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
