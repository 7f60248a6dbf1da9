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

Commands may also run after the queries (``after``), and the test process can act while one runs (``during``:
the driver names each command in a file as it starts it), as the lost-worker run does, whose worker is killed
under it: it comes last, so that no other run of the application has one executor fewer.

Run as ``python -m tests.spark.cluster_app SPEC OUT`` (:func:`run` does): SPEC is JSON --
``{"commands": [[name, [arg, ...], worker_env], ...], "master": ..., "conf": [...], "queries": [[query,
worker_env], ...], "after": [command, ...], "uri": ..., "rows_to": ..., "started": ...}`` -- and OUT receives
``{"commands": {name: {"exit_code", "stdout", "stderr"}}, "queries": [...]}``: a result for every command and
query, whatever the others did.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
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
    after: tuple[Command, ...] = (),
    during: Callable[[str, Callable[[], bool]], None] | None = None,
) -> tuple[dict, list[str]]:
    """Run ``commands`` (each ``(name, kseg args, worker_env)``; the application's ``--master`` and
    ``--spark-conf`` are added to each; ``worker_env`` added to its jobs' Python workers' environment, none
    for the first, which starts the session), then ``queries`` (each ``(query, worker_env)``, see
    :func:`query`), then the commands ``after`` in one application, its driver a process started in ``cwd``
    with ``env`` (default: this process's): each command's result (a :class:`tests.conftest.Result`) by
    name, and each query's line.  ``during(name, running)`` is called in this process as the driver starts each
    command (``running()``: whether the driver still runs)."""
    assert commands and not commands[0][2], "the first command starts the session: no worker_env of its own"
    from tests.conftest import Result

    spec = out.with_suffix(".spec.json")
    started = out.with_suffix(".started")
    started.write_text("")
    spec.write_text(
        json.dumps(
            {
                "commands": commands,
                "master": master,
                "conf": conf,
                "queries": queries,
                "after": list(after),
                "uri": uri,
                "rows_to": str(rows_to or ""),
                "started": str(started),
            }
        )
    )
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    with open(out.with_suffix(".stderr"), "w+b") as err:
        p = subprocess.Popen(
            [sys.executable, "-m", "tests.spark.cluster_app", str(spec), str(out)],
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            _follow(p, started, during or (lambda name, running: None), time.monotonic() + 1200)
            p.wait(timeout=1)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        err.seek(0)
        assert p.returncode == 0 and out.exists(), err.read().decode("utf-8", "replace")[-3000:]
    got = json.loads(out.read_text())
    results = {
        name: Result(r["exit_code"], r["stdout"].encode(), r["stderr"].encode()) for name, r in got["commands"].items()
    }
    assert list(results) == [name for name, _, _ in [*commands, *after]]
    assert len(got["queries"]) == len(queries), got["queries"]
    return results, got["queries"]


def _follow(
    p: subprocess.Popen, started: Path, during: Callable[[str, Callable[[], bool]], None], deadline: float
) -> None:
    """Until the driver ``p`` exits (or ``deadline``): ``during(name, running)`` for each command it names in
    ``started`` as it starts it."""
    seen = 0
    while p.poll() is None and time.monotonic() < deadline:
        names = started.read_text().split("\n")[:-1]  # whole lines only
        for name in names[seen:]:
            during(name, lambda: p.poll() is None)
        seen = len(names)
        time.sleep(0.2)


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
        if path and rows_to:  # every row, pickled (collected as Arrow: binary columns as bytes, no Row each)
            rows = df.toArrow().to_pylist()
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
    commands: dict[str, dict] = {}

    def command(name: str, args: list[str], env: dict[str, str]) -> None:
        with open(spec["started"], "a") as started:
            started.write(name + "\n")
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

    try:
        for name, args, env in spec["commands"]:
            command(name, args, env)
        spark = session(spec["master"], spec["conf"])  # the running one (or started here, with no command)
        kseg.spark.register(spark)
        queries = []
        for text, env in spec["queries"]:
            with worker_env(spark, env):
                queries.append(query(spark, text, spec["uri"], spec["rows_to"]))
        for name, args, env in spec["after"]:
            command(name, args, env)
        Path(out_path).write_text(json.dumps({"commands": commands, "queries": queries}))
    finally:
        SparkSession.stop = stop  # type: ignore[method-assign]
        active = SparkSession.getActiveSession()
        if active is not None:
            active.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
