"""kseg on a real Spark standalone cluster on loopback (tests/spark/cluster.py): a master and two
workers, each its own JVM, executors in their own work directories -- what ``local[2]`` cannot show.

Every run here is compared with the local command on the same files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kseg.ops.verify.report import sort_key
from tests.cli.test_verify import _report_rows
from tests.conftest import CORPUS_DATA, run_subprocess

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")

DAMAGED = "plain-v2-0"  # one CRC fault, so that the rows compared hold a problem


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """``<workdir>/data/b1/data``: the Kafka-written corpus as one broker's log root, one batch damaged."""
    work = tmp_path_factory.mktemp("operator")
    root = work / "data" / "b1" / "data"
    shutil.copytree(CORPUS_DATA, root)
    log = sorted((root / DAMAGED).glob("*.log"))[0]
    data = bytearray(log.read_bytes())
    data[200] ^= 0x5A
    log.write_bytes(bytes(data))
    return work


def rows(path: Path) -> list[dict]:
    return sorted(_report_rows(path), key=sort_key)


def local_verify(workdir: Path, tmp_path: Path) -> tuple:
    report = tmp_path / "local.jsonl"
    r = run_subprocess(["verify-index", "--verbose", "--report", str(report), str(workdir / "data/b1/data")])
    assert r.exit_code == 1, r.errtext
    return r, rows(report)


def test_verify_on_the_cluster_equals_the_local_run(spark_cluster, workdir: Path, tmp_path: Path) -> None:
    """The local command's rows and lines, from a relative input and --report run in the operator's
    directory: executors work in their own work directories, so kseg makes the paths absolute on the
    driver (docs/spark.md, "Paths travel")."""
    local, expected = local_verify(workdir, tmp_path)
    report = workdir / "out" / "r"
    report.parent.mkdir(exist_ok=True)  # a report's parent must exist (docs/spark.md, "The report")
    r = run_subprocess(
        ["verify-index", "--spark", "--verbose", *spark_cluster.conf(), "--report", "out/r", "data/b1/data"],
        cwd=workdir,
        timeout=600,
    )
    assert r.exit_code == 1, r.errtext[-3000:]
    assert "FAILED" not in r.text
    assert {row["kind"] for row in expected if row["type"] == "problem"} >= {"crc"}
    assert rows(report) == expected
    assert (report / "_SUCCESS").exists()
    assert r.text == local.text.replace(f"{workdir}/", "")  # the local run was given absolute paths, --spark relative


def test_a_path_only_the_driver_sees_is_refused_up_front(spark_cluster, workdir: Path, tmp_path: Path) -> None:
    """``/proc/self/cwd/data/b1/data`` is the data for the driver (run in ``workdir``) and nothing for an
    executor (its own working directory): a disk only the driver has.  Before any work, every executor is
    asked (both of the two: the session waits for both to register) and the run is refused in one line
    naming the path and an executor, exit 2."""
    path = "/proc/self/cwd/data/b1/data"
    both = ("spark.cores.max=2", "spark.scheduler.minRegisteredResourcesRatio=1.0")
    r = run_subprocess(
        ["verify-index", "--spark", *spark_cluster.conf(*both), "--report", str(tmp_path / "r"), path],
        cwd=workdir,
        timeout=600,
    )
    assert r.exit_code == 2, r.errtext[-3000:]
    assert len(r.errtext.splitlines()) == 1 and r.text == "", r.errtext
    line = r.errtext
    assert line.startswith(f"kseg: error: {path}: not visible from the executor on ") and "(working in " in line
    assert "; 2 of the 2 executors do not see it" in line and "on a mount every executor sees" in line
    assert not list((tmp_path / "r").glob("part-*"))  # refused before the main job


def test_export_to_a_relative_directory_writes_the_files_there(spark_cluster, workdir: Path, tmp_path: Path) -> None:
    """``export --spark -o out/exp`` with a relative input: the Parquet files are in ``out/exp`` (where
    the summary line says), and they hold the local export's rows."""
    from tests.spark.test_datasource import ORDER, pq

    r = run_subprocess(
        ["export", "--spark", *spark_cluster.conf(), "data/b1/data", "-o", "out/exp"], cwd=workdir, timeout=600
    )
    assert r.exit_code == 1, r.errtext[-3000:]  # the damaged batch, and corrupt-* partitions of the corpus
    out = workdir / "out" / "exp"
    files = sorted(out.glob("part-*.parquet"))
    assert (out / "_SUCCESS").exists() and 1 <= len(files) < 30  # coalesced: not one file a split (>= 30)
    got = [row for f in files for row in pq.read_table(f).to_pylist()]
    local = tmp_path / "local.parquet"
    assert run_subprocess(["export", str(workdir / "data/b1/data"), "-o", str(local)]).exit_code == 1
    want = pq.read_table(local).to_pylist()

    def key(row: dict) -> tuple:  # files now hold several partitions: their order is the plan's
        return tuple((row[k] is None, row[k]) for k in ("topic", "partition", *ORDER))

    assert len(got) == len(want) > 1000
    assert sorted(got, key=key) == sorted(want, key=key)
    assert f"{sum(row['corruption'] is None for row in want)} records" in r.text and "written to out/exp" in r.text


# -- executors without the store's settings: the workers were started with no AWS variable -----------------

DATA_SOURCE = """
import json
import os
import pickle
import sys

import kseg.spark
from kseg.spark.session import cause, session

spark = session(sys.argv[1], ["spark.executor.memory=512m", "spark.task.maxFailures=1", *sys.argv[3:]])
kseg.spark.register(spark)
results = []  # one a query, printed together as JSON after the last
try:
    for query in json.loads(os.environ["QUERIES"]):
        path, _, query = query.rpartition("?")  # "PATH?k=v k=v": another path than the application's
        try:
            options = dict(o.split("=", 1) for o in query.split())
            df = spark.read.format("kseg").options(**options).load(path or sys.argv[2])
            if options:  # onUnreadable=rows: the rows marked unreadable, then the others
                marks = [r.unreadable for r in df.select("unreadable").collect()]
                n = sum(m is not None for m in marks)
                results.append(f"UNREADABLE {n} OTHER {len(marks) - n}")
            elif path and os.environ.get("ROWS_TO"):  # every row, pickled (binary columns as bytes)
                rows = [r.asDict(recursive=True) for r in df.collect()]
                with open(os.environ["ROWS_TO"], "wb") as f:
                    pickle.dump(rows, f)
                results.append(f"COUNT {len(rows)}")
            else:
                results.append(f"COUNT {df.count()}")
        except Exception as exc:
            results.append(f"FAILED {cause(exc)}")
    print(json.dumps(results))
finally:
    spark.stop()
"""


def executor_env(s3) -> list[str]:
    """The S3 settings handed to the executors, as an operator must on a cluster."""
    import os

    return [
        f"spark.executorEnv.{k}={os.environ[k]}"
        for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")
    ]


def data_source(
    spark_cluster,
    uri: str,
    *conf: str,
    cwd: Path | None = None,
    rows_to: Path | None = None,
    queries: tuple[str, ...] = ("",),
) -> list[str]:
    """``spark.read.format("kseg").load(uri)`` on the cluster, from a driver of its own, once for each of
    ``queries`` (its options, "k=v k=v"; "" none; "PATH?" loads PATH instead of ``uri``) in that one
    application: a result each, "COUNT n" or "FAILED <cause>"; with ``rows_to``, a "PATH?" query's rows
    pickled there; with options, the counts of rows marked ``unreadable`` and of the others."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, ROWS_TO=str(rows_to or ""), QUERIES=json.dumps(queries))
    p = subprocess.run(
        [sys.executable, "-c", DATA_SOURCE, spark_cluster.master, uri, *conf],
        capture_output=True,
        timeout=600,
        cwd=cwd,
        env=env,
    )
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")[-3000:]
    results = json.loads(p.stdout.decode().strip().splitlines()[-1])
    assert len(results) == len(queries), results
    return results


UNREADABLE_QUERIES = ("", "onUnreadable=rows")


#: the rows of ``data/b1/data`` (relative: from the operator's directory), loaded in the first application
ROWS_QUERY = "data/b1/data?"


@pytest.fixture(scope="module")
def store_loads(spark_cluster, s3, workdir: Path, tmp_path_factory) -> tuple[str, dict[str, str], dict[str, str]]:
    """One segment's URI loaded by executors without the store's settings and by executors given them
    (``spark.executorEnv.AWS_*``), each with the default options and with ``onUnreadable=rows``: the
    query's line for each, two applications (two drivers and their executors) for the four loads.  The
    first application, run in ``workdir``, also loads the relative ``data/b1/data`` whole (a local tree:
    the store's settings do not matter), its rows pickled to ``ROWS_TO`` (the result's "rows" entry)."""
    uri = s3.uri("brokers/b1/data/v2-logappendtime-0")  # one segment
    dumped = tmp_path_factory.mktemp("cluster-rows") / "rows.pickle"
    queries = (*UNREADABLE_QUERIES, ROWS_QUERY)
    without = data_source(spark_cluster, uri, cwd=workdir, rows_to=dumped, queries=queries)
    given = data_source(spark_cluster, uri, *executor_env(s3), queries=UNREADABLE_QUERIES)
    loads = dict(zip(queries, without, strict=True))
    loads["rows"] = str(dumped)
    return uri, loads, dict(zip(UNREADABLE_QUERIES, given, strict=True))


def test_data_source_fails_the_query_when_executors_cannot_read_the_store(spark_cluster, store_loads) -> None:
    """No count made of unreadable segments: the query fails, naming the object and the cause; with the
    settings given to the executors the same load counts every record."""
    from tests.spark.test_datasource import exported

    uri, without, given = store_loads
    got = without[""]
    assert got.startswith("FAILED ") and "cannot read" in got and uri in got, got
    want = len(exported([uri], Path(spark_cluster.root)))
    assert given[""] == f"COUNT {want}"


def test_data_source_marks_what_executors_cannot_read_when_asked(spark_cluster, store_loads) -> None:
    """``onUnreadable=rows``: the segment the executors cannot read is one row marked ``unreadable``
    (not a corruption row, not a record); with the settings, no such row and every record."""
    uri, without, given = store_loads
    assert without["onUnreadable=rows"] == "UNREADABLE 1 OTHER 0"
    from tests.spark.test_datasource import exported

    want = len(exported([uri], Path(spark_cluster.root)))
    got = given["onUnreadable=rows"]
    assert got == f"UNREADABLE 0 OTHER {want}", got


def test_verify_with_executors_that_cannot_read_the_store_is_failed(spark_cluster, s3, local_brokers) -> None:
    """Every segment the executors could not read is ``failed`` (exit 2), naming the executor and the
    cause, without the local-mount hint (a URI is not on a mount); with the settings, the local rows."""
    uri = s3.uri("brokers/b1/data/v2-logappendtime-0")  # one segment: its 3 files' failed reads, ~8 s
    r = run_subprocess(["verify-index", "--spark", *spark_cluster.conf(), uri], timeout=600)
    assert r.exit_code == 2, r.errtext[-3000:]
    assert "FAILED: executor" in r.text and "cannot read" in r.text and "mount" not in r.text, r.text
    assert r.text.splitlines()[-1] == "1 segment verified (0 bytes), 0 clean, 1 failed."
    conf = [a for item in executor_env(s3) for a in ("--spark-conf", item)]
    ok = run_subprocess(["verify-index", "--spark", *spark_cluster.conf(), *conf, uri], timeout=600)
    local = run_subprocess(["verify-index", str(local_brokers / "b1/data/v2-logappendtime-0")])
    assert ok.exit_code == local.exit_code == 0, ok.errtext[-3000:]
    assert ok.text.splitlines()[-1] == local.text.splitlines()[-1]


def test_spark_pyspark_python_is_honoured(spark_cluster, workdir: Path, tmp_path: Path) -> None:
    """``--spark-conf spark.pyspark.python=…`` is the executors' Python when kseg starts Spark itself (it
    was ignored: pyspark reads only PYSPARK_PYTHON); the driver's address is found from the route to the
    master (no SPARK_LOCAL_IP, no spark.driver.host given)."""
    import os
    import subprocess
    import sys

    marker = tmp_path / "used"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$$" >> {marker}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_LOCAL_IP", "PYSPARK_PYTHON")}
    p = subprocess.run(
        [sys.executable, "-m", "kseg", "verify-index", "--spark"]
        + spark_cluster.conf(f"spark.pyspark.python={wrapper}")
        + [str(workdir / "data/b1/data/v2-logappendtime-0")],
        env=env,
        capture_output=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr.decode("utf-8", "replace")[-3000:]
    assert marker.exists() and marker.read_text().split()


def test_data_source_rows_on_the_cluster_are_the_export_rows(store_loads, workdir: Path, tmp_path: Path) -> None:
    """``load("data/b1/data")`` (relative, from the operator's directory) on the cluster: the rows of the
    local ``kseg export`` of the same tree (loaded in the application of :func:`store_loads`)."""
    import pickle

    from tests.spark.test_datasource import ORDER, epoch_ms, exported

    _, loads, _ = store_loads
    got, dumped = loads[ROWS_QUERY], Path(loads["rows"])
    want = exported([str(workdir / "data/b1/data")], tmp_path)
    assert got == f"COUNT {len(want)}", got
    rows = pickle.loads(dumped.read_bytes())
    for row in rows:  # Spark's binary is bytearray, its timestamp a naive local datetime
        row["timestamp"] = epoch_ms(row["timestamp"])
        for k in ("key", "value"):
            row[k] = None if row[k] is None else bytes(row[k])
        if row["headers"] is not None:
            row["headers"] = [
                {"key": h["key"], "value": None if h["value"] is None else bytes(h["value"])} for h in row["headers"]
            ]
    assert sorted(rows, key=lambda r: tuple((r[k] is None, r[k]) for k in ORDER)) == want


def test_diff_roots_on_the_cluster_equals_the_local_run(spark_cluster, tmp_path: Path) -> None:
    """``diff --roots --spark`` with relative roots: the local command's lines and exit code."""
    from tests.trees import two_brokers

    b1, b2 = two_brokers(tmp_path / "t")
    local = run_subprocess(["diff", "--roots", "b1/data", "b2/data"], cwd=tmp_path / "t")  # the same relative roots
    spark = run_subprocess(
        ["diff", "--roots", "b1/data", "b2/data", "--spark", *spark_cluster.conf()], cwd=tmp_path / "t", timeout=600
    )
    assert local.exit_code == spark.exit_code == 1, spark.errtext[-3000:]
    assert spark.text == local.text and "damaged" in spark.text  # paths as given, in both (issue 33)


def test_a_worker_killed_mid_run_changes_nothing(spark_cluster, workdir: Path, tmp_path: Path) -> None:
    """Worker 2 (and its executor) SIGKILLed while it runs a task: Spark re-runs its tasks (and the lost
    shuffle output) on worker 1, and the verdict is the local command's.  Worker 2 is started again after."""
    import subprocess
    import sys
    import time

    _, expected = local_verify(workdir, tmp_path)
    report = tmp_path / "cluster-report"
    before = spark_cluster.apps(2)
    job = subprocess.Popen(
        [sys.executable, "-m", "kseg", "verify-index", "--spark", *spark_cluster.conf(), "--report", str(report)]
        + [str(workdir / "data/b1/data")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 300
        while not spark_cluster.running_task(2, before):  # an executor on worker 2 has started a task
            assert job.poll() is None, job.stderr.read().decode()[-3000:]
            assert time.monotonic() < deadline, "no task ever ran on worker 2"
            time.sleep(0.2)
        spark_cluster.kill_worker(2)
        out, err = job.communicate(timeout=600)
    finally:
        if job.poll() is None:
            job.kill()
        spark_cluster.start_worker(2)
    assert job.returncode == 1, err.decode()[-3000:]
    assert rows(report) == expected
    spark_cluster.wait_for_workers(2)


def test_a_poison_segment_fails_only_its_bin(spark_cluster, workdir: Path, tmp_path: Path) -> None:
    """The Python worker dies on one segment (the test-only hook, given to the executors) on every one of
    Spark's four attempts: that bin's segments are failed rows naming the cause, exit 2; every other
    segment's rows are the local run's, and the report is complete."""
    _, expected = local_verify(workdir, tmp_path)
    report = tmp_path / "cluster-report"
    poison = f"large-v2-0/{0:020d}"
    r = run_subprocess(
        ["verify-index", "--spark", *spark_cluster.conf(f"spark.executorEnv.KSEG_TEST_KILL_WORKER={poison}")]
        + ["--report", str(report), str(workdir / "data/b1/data")],
        timeout=600,
    )
    assert r.exit_code == 2, r.errtext[-3000:]
    got = rows(report)
    failed = {(row["partition"], row["segment"]) for row in got if row.get("status") == "failed"}
    assert ("large-v2-0", f"{0:020d}") in failed
    assert all("its task failed 4 times" in row["error"] for row in got if row.get("status") == "failed")
    assert [row for row in got if (row["partition"], row["segment"]) not in failed] == [
        row for row in expected if (row["partition"], row["segment"]) not in failed
    ]
    assert (report / "_SUCCESS").exists()


def test_logdir_on_the_cluster_equals_the_local_run(spark_cluster, tmp_path: Path) -> None:
    """kseg logdir --spark on the standalone cluster, from a relative fleet root: the local rows."""
    from tests.ops.logdir.test_logdir_places import fleet

    fleet(tmp_path / "fleet")
    local = run_subprocess(["logdir", "--format", "json", "fleet"], cwd=tmp_path)
    r = run_subprocess(
        ["logdir", "--spark", *spark_cluster.conf(), "--format", "json", "fleet"], cwd=tmp_path, timeout=600
    )
    assert (r.exit_code, r.text) == (local.exit_code, local.text) == (1, local.text), r.errtext[-3000:]


def test_grep_on_the_cluster_equals_the_local_run(spark_cluster, workdir: Path) -> None:
    """``grep --spark`` with a relative root: one task per partition on the cluster's executors, the local
    command's lines (paths as given), corrupt lines and exit code."""
    args = ["grep", "--value-regex", "sierra (romeo|tango) india", "data/b1/data"]
    local = run_subprocess(args, cwd=workdir)
    spark = run_subprocess([*args, "--spark", *spark_cluster.conf()], cwd=workdir, timeout=600)
    assert local.exit_code == spark.exit_code == 0, spark.errtext[-3000:]
    assert spark.text == local.text and "data/b1/data/" in spark.text
    said = [line for line in spark.errtext.splitlines() if line.startswith("kseg: ")]
    assert sorted(said) == sorted(line for line in local.errtext.splitlines() if line.startswith("kseg: "))
    assert any(line.startswith("kseg: corrupt: data/b1/data/") for line in said)
