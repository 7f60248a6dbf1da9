"""kseg on a real Spark standalone cluster on loopback (tests/spark/cluster.py): a master and two
workers, each its own JVM, executors in their own work directories -- what ``local[2]`` cannot show.

Every run here is compared with the local command on the same files.  Starting a driver and its executors
costs a cluster run most of its time, so the runs share one application (tests/spark/cluster_app.py,
:func:`app`), its executors without the store's settings (the workers have no AWS variable); the runs that
read the store with them hand them to their jobs' Python workers (:func:`store_settings`, what
``spark.executorEnv.*`` fills for them); the run a worker is killed under comes last in it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kseg.ops.verify.report import sort_key
from tests.cli.test_verify import _report_rows
from tests.conftest import CORPUS_DATA, run_cli
from tests.spark import cluster_app

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


@pytest.fixture(scope="module")
def local_verify(workdir: Path, tmp_path_factory) -> tuple:
    """The local ``verify-index --verbose --report`` of the tree (absolute paths): its result and rows."""
    report = tmp_path_factory.mktemp("local-verify") / "local.jsonl"
    r = run_cli(["verify-index", "--verbose", "--report", str(report), str(workdir / "data/b1/data")])
    assert r.exit_code == 1, r.errtext
    return r, rows(report)


def store_settings(s3) -> dict[str, str]:
    """The S3 settings handed to the executors' Python workers, as an operator must on a cluster (the S3
    server's, set in this process's environment)."""
    import os

    return {k: os.environ[k] for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")}


#: one segment of the two-broker tree on the S3 server (its 3 files' failed reads take ~8 s)
SEGMENT = "brokers/b1/data/v2-logappendtime-0"
#: the data source's loads of the segment: with the default options, and unreadable segments as rows
UNREADABLE_QUERIES = ("", "onUnreadable=rows")
#: the rows of ``data/b1/data`` (relative: from the operator's directory), pickled
ROWS_QUERY = "data/b1/data?"
#: the segment the Python worker dies on in the "poison" run (the test-only hook, given to its Python workers)
POISON = f"large-v2-0/{0:020d}"
#: the shared application's ``spark.task.maxFailures`` (Spark's default on a cluster is 4): a task that keeps
#: failing -- the poison segment's, the load whose executors cannot read the store -- is given up after two
#: attempts, a retry still made and counted in the cause
ATTEMPTS = 2
#: a variable the application hands its executors with ``--spark-conf spark.executorEnv.*``: the wrapper that
#: is their Python records it
GIVEN = ("KSEG_TEST_GIVEN", "by-spark-conf")


# -- one application: the operator's commands and the store's -------------------------------------------


@pytest.fixture(scope="module")
def app(spark_cluster, s3, workdir: Path, tmp_path_factory) -> tuple[dict, dict[tuple[str, str], str], Path, list]:
    """One application, its driver run in the operator's directory ``workdir`` with relative paths: the
    commands whose results the tests below compare with the local runs (by name), then the data source's
    loads (by query, and whether the executors had the store's settings).  Its settings: both executors
    registered before work (the refusal names "2 of the 2 executors"); ``spark.pyspark.python`` naming a
    wrapper that records each start (the executors' Python) and :data:`GIVEN`; :data:`ATTEMPTS` attempts a
    task; its driver run with no SPARK_LOCAL_IP and no PYSPARK_PYTHON.  Runs that give their jobs' Python
    workers an environment of their own: the store's settings (:func:`store_settings`) for the "store" run
    and the loads "with"; the test-only hook that kills the Python worker on :data:`POISON` (no other segment
    is affected) for the "poison" run.  Last, after the loads, the "lost" run, worker 2 killed under it
    (:func:`kill_worker_2_under`).  The commands' results by name, the loads' lines by (query, "without" or
    "with"), the directory holding the wrapper's record and the reports of the poison and lost runs, and what
    the kill saw."""
    import os
    import sys

    from tests.ops.logdir.test_logdir_places import fleet
    from tests.trees import two_brokers

    spark_cluster.ready()  # both workers (the refusal names "2 of the 2 executors")
    two_brokers(workdir / "t")
    fleet(workdir / "fleet")
    (workdir / "out").mkdir(exist_ok=True)  # a report's parent must exist (docs/spark.md, "The report")
    base = tmp_path_factory.mktemp("store-app")
    marker = base / "used"
    wrapper = base / "python"
    wrapper.write_text(f'#!/bin/sh\necho "$$ ${{{GIVEN[0]}-}}" >> {marker}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    store = store_settings(s3)
    commands = [  # the first starts the session, as a fresh ``kseg --spark`` process does
        ("refused", ["verify-index", "--spark", "--report", "out/refused", DRIVER_ONLY], {}),
        ("verify", ["verify-index", "--spark", "--verbose", "--report", "out/r", "data/b1/data"], {}),
        ("export", ["export", "--spark", "data/b1/data", "-o", "out/exp"], {}),
        ("diff", ["diff", "--roots", "t/b1/data", "t/b2/data", "--spark"], {}),
        ("logdir", ["logdir", "--spark", "--format", "json", "fleet"], {}),
        ("grep", [*GREP, "--spark"], {}),
        ("store-without", ["verify-index", "--spark", s3.uri(SEGMENT)], {}),
        ("python", ["verify-index", "--spark", str(workdir / "data/b1/data/v2-logappendtime-0")], {}),
        ("store", ["verify-index", "--spark", s3.uri(SEGMENT)], store),
        (
            "poison",
            ["verify-index", "--spark", "--report", str(base / "poison"), str(workdir / "data/b1/data")],
            {"KSEG_TEST_KILL_WORKER": POISON},
        ),
    ]
    loads = [(q, "without") for q in UNREADABLE_QUERIES] + [(ROWS_QUERY, "without")]
    loads += [(q, "with") for q in UNREADABLE_QUERIES]
    conf = spark_cluster.settings(
        "spark.cores.max=2",
        "spark.scheduler.minRegisteredResourcesRatio=1.0",
        f"spark.pyspark.python={wrapper}",
        f"spark.executorEnv.{GIVEN[0]}={GIVEN[1]}",
        f"spark.task.maxFailures={ATTEMPTS}",
    )
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_LOCAL_IP", "PYSPARK_PYTHON")}
    lost = ("lost", ["verify-index", "--spark", "--report", str(base / "lost"), str(workdir / "data/b1/data")], {})
    killed: list[str] = []
    results, lines = cluster_app.run(
        commands,
        spark_cluster.master,
        conf,
        cwd=workdir,
        out=workdir / "app.json",
        env=env,
        queries=tuple((q, store if how == "with" else {}) for q, how in loads),
        uri=s3.uri(SEGMENT),
        rows_to=workdir / "rows.pickle",
        after=(lost,),
        during=lambda name, running: kill_worker_2_under(spark_cluster, name, running, killed),
    )
    return results, dict(zip(loads, lines, strict=True)), base, killed


def kill_worker_2_under(cluster, name: str, running, killed: list[str]) -> None:
    """When the driver starts the "lost" run: once an executor on worker 2 has started a task of it, SIGKILL
    worker 2 and its executor (``killed`` says so; nothing if the run ended first).  Worker 2 is started again
    by the next user of the cluster (``spark_cluster.ready()``)."""
    import time

    if name != "lost":
        return
    before = cluster.started_tasks(2)
    deadline = time.monotonic() + 300
    while cluster.started_tasks(2) == before:
        if not running() or time.monotonic() > deadline:
            return
        time.sleep(0.05)  # a task of this run is short: kill while it runs
    cluster.kill_worker(2)
    killed.append("worker 2, under a task")


#: a path that is the data for the driver (run in ``workdir``) and nothing for an executor
DRIVER_ONLY = "/proc/self/cwd/data/b1/data"
GREP = ["grep", "--value-regex", "sierra (romeo|tango) india", "data/b1/data"]


def test_verify_on_the_cluster_equals_the_local_run(app, local_verify, workdir: Path) -> None:
    """The local command's rows and lines, from a relative input and --report run in the operator's
    directory: executors work in their own work directories, so kseg makes the paths absolute on the
    driver (docs/spark.md, "Paths travel")."""
    local, expected = local_verify
    r = app[0]["verify"]
    report = workdir / "out" / "r"
    assert r.exit_code == 1, r.errtext[-3000:]
    assert "FAILED" not in r.text
    assert {row["kind"] for row in expected if row["type"] == "problem"} >= {"crc"}
    assert rows(report) == expected
    assert (report / "_SUCCESS").exists()
    assert r.text == local.text.replace(f"{workdir}/", "")  # the local run was given absolute paths, --spark relative


def test_a_path_only_the_driver_sees_is_refused_up_front(app, workdir: Path) -> None:
    """``/proc/self/cwd/data/b1/data`` is the data for the driver (run in ``workdir``) and nothing for an
    executor (its own working directory): a disk only the driver has.  Before any work, every executor is
    asked (both of the two: the session waits for both to register) and the run is refused in one line
    naming the path and an executor, exit 2."""
    r = app[0]["refused"]
    assert r.exit_code == 2, r.errtext[-3000:]
    assert len(r.errtext.splitlines()) == 1 and r.text == "", r.errtext
    line = r.errtext
    assert line.startswith(f"kseg: error: {DRIVER_ONLY}: not visible from the executor on ") and "(working in " in line
    assert "; 2 of the 2 executors do not see it" in line and "on a mount every executor sees" in line
    assert not list((workdir / "out" / "refused").glob("part-*"))  # refused before the main job


def test_export_to_a_relative_directory_writes_the_files_there(app, workdir: Path, tmp_path: Path) -> None:
    """``export --spark -o out/exp`` with a relative input: the Parquet files are in ``out/exp`` (where
    the summary line says), and they hold the local export's rows."""
    from tests.spark.test_datasource import ORDER, pq

    r = app[0]["export"]
    assert r.exit_code == 1, r.errtext[-3000:]  # the damaged batch, and corrupt-* partitions of the corpus
    out = workdir / "out" / "exp"
    files = sorted(out.glob("part-*.parquet"))
    assert (out / "_SUCCESS").exists() and 1 <= len(files) < 30  # coalesced: not one file a split (>= 30)
    got = [row for f in files for row in pq.read_table(f).to_pylist()]
    local = tmp_path / "local.parquet"
    assert run_cli(["export", str(workdir / "data/b1/data"), "-o", str(local)]).exit_code == 1
    want = pq.read_table(local).to_pylist()

    def key(row: dict) -> tuple:  # files now hold several partitions: their order is the plan's
        return tuple((row[k] is None, row[k]) for k in ("topic", "partition", *ORDER))

    assert len(got) == len(want) > 1000
    assert sorted(got, key=key) == sorted(want, key=key)
    assert f"{sum(row['corruption'] is None for row in want)} records" in r.text and "written to out/exp" in r.text


def test_diff_roots_on_the_cluster_equals_the_local_run(app, workdir: Path) -> None:
    """``diff --roots --spark`` with relative roots: the local command's lines and exit code."""
    local = run_cli(["diff", "--roots", "t/b1/data", "t/b2/data"], cwd=workdir)  # the same relative roots
    spark = app[0]["diff"]
    assert local.exit_code == spark.exit_code == 1, spark.errtext[-3000:]
    assert spark.text == local.text and "damaged" in spark.text  # paths as given, in both (issue 33)


def test_logdir_on_the_cluster_equals_the_local_run(app, workdir: Path) -> None:
    """kseg logdir --spark on the standalone cluster, from a relative fleet root: the local rows."""
    local = run_cli(["logdir", "--format", "json", "fleet"], cwd=workdir)
    r = app[0]["logdir"]
    assert (r.exit_code, r.text) == (local.exit_code, local.text) == (1, local.text), r.errtext[-3000:]


def test_grep_on_the_cluster_equals_the_local_run(app, workdir: Path) -> None:
    """``grep --spark`` with a relative root: one task per partition on the cluster's executors, the local
    command's lines (paths as given), corrupt lines and exit code."""
    local = run_cli(GREP, cwd=workdir)
    spark = app[0]["grep"]
    assert local.exit_code == spark.exit_code == 0, spark.errtext[-3000:]
    assert spark.text == local.text and "data/b1/data/" in spark.text
    said = [line for line in spark.errtext.splitlines() if line.startswith("kseg: ")]
    assert sorted(said) == sorted(line for line in local.errtext.splitlines() if line.startswith("kseg: "))
    assert any(line.startswith("kseg: corrupt: data/b1/data/") for line in said)


def test_data_source_rows_on_the_cluster_are_the_export_rows(app, workdir: Path, tmp_path: Path) -> None:
    """``load("data/b1/data")`` (relative, from the operator's directory) on the cluster: the rows of the
    local ``kseg export`` of the same tree."""
    import pickle

    from tests.spark.test_datasource import ORDER, epoch_ms, exported

    got = app[1][ROWS_QUERY, "without"]
    want = exported([str(workdir / "data/b1/data")], tmp_path)
    assert got == f"COUNT {len(want)}", got
    rows = pickle.loads((workdir / "rows.pickle").read_bytes())
    for row in rows:  # collected as Arrow (cluster_app.query): binary as bytes, the timestamp an aware datetime
        row["timestamp"] = epoch_ms(row["timestamp"])
    assert sorted(rows, key=lambda r: tuple((r[k] is None, r[k]) for k in ORDER)) == want


# -- the store: executors without its settings, and given them ---------------------------------------------


def test_data_source_fails_the_query_when_executors_cannot_read_the_store(spark_cluster, s3, app) -> None:
    """No count made of unreadable segments: the query fails, naming the object and the cause; with the
    settings given to the executors the same load counts every record."""
    from tests.spark.test_datasource import exported

    uri = s3.uri(SEGMENT)
    got = app[1]["", "without"]
    assert got.startswith("FAILED ") and "cannot read" in got and uri in got, got
    want = len(exported([uri], Path(spark_cluster.root)))
    assert app[1]["", "with"] == f"COUNT {want}"


def test_data_source_marks_what_executors_cannot_read_when_asked(spark_cluster, s3, app) -> None:
    """``onUnreadable=rows``: the segment the executors cannot read is one row marked ``unreadable``
    (not a corruption row, not a record); with the settings, no such row and every record."""
    assert app[1]["onUnreadable=rows", "without"] == "UNREADABLE 1 OTHER 0"
    from tests.spark.test_datasource import exported

    want = len(exported([s3.uri(SEGMENT)], Path(spark_cluster.root)))
    got = app[1]["onUnreadable=rows", "with"]
    assert got == f"UNREADABLE 0 OTHER {want}", got


def test_verify_with_executors_that_cannot_read_the_store_is_failed(app, local_brokers) -> None:
    """Every segment the executors could not read is ``failed`` (exit 2), naming the executor and the
    cause, without the local-mount hint (a URI is not on a mount); with the settings, the local rows."""
    r = app[0]["store-without"]
    assert r.exit_code == 2, r.errtext[-3000:]
    assert "FAILED: executor" in r.text and "cannot read" in r.text and "mount" not in r.text, r.text
    assert r.text.splitlines()[-1] == "1 segment verified (0 bytes), 0 clean, 1 failed."
    ok = app[0]["store"]
    local = run_cli(["verify-index", str(local_brokers / "b1/data/v2-logappendtime-0")])
    assert ok.exit_code == local.exit_code == 0, ok.errtext[-3000:]
    assert ok.text.splitlines()[-1] == local.text.splitlines()[-1]


def test_spark_pyspark_python_is_honoured(app) -> None:
    """``--spark-conf spark.pyspark.python=…`` is the executors' Python when kseg starts Spark itself (it
    was ignored: pyspark reads only PYSPARK_PYTHON); the driver's address is found from the route to the
    master (no SPARK_LOCAL_IP, no spark.driver.host given); ``--spark-conf spark.executorEnv.*`` reaches
    the executors' Python (the wrapper records :data:`GIVEN`)."""
    results, _, base, _ = app
    r = results["python"]
    assert r.exit_code == 0, r.errtext[-3000:]
    marker = base / "used"
    assert marker.exists() and marker.read_text().split()
    assert any(line.split()[1:] == [GIVEN[1]] for line in marker.read_text().splitlines())


def test_a_poison_segment_fails_only_its_bin(app, local_verify) -> None:
    """The Python worker dies on one segment (the test-only hook, given to this run's Python workers) on
    every one of Spark's attempts (:data:`ATTEMPTS`): that bin's segments are failed rows naming the cause,
    exit 2; every other segment's rows are the local run's, and the report is complete."""
    _, expected = local_verify
    results, _, base, _ = app
    r = results["poison"]
    report = base / "poison"
    assert r.exit_code == 2, r.errtext[-3000:]
    got = rows(report)
    failed = {(row["partition"], row["segment"]) for row in got if row.get("status") == "failed"}
    assert ("large-v2-0", f"{0:020d}") in failed
    assert all(f"its task failed {ATTEMPTS} times" in row["error"] for row in got if row.get("status") == "failed")
    assert [row for row in got if (row["partition"], row["segment"]) not in failed] == [
        row for row in expected if (row["partition"], row["segment"]) not in failed
    ]
    assert (report / "_SUCCESS").exists()


# -- the cluster itself: a lost worker ---------------------------------------------------------------------


def test_a_worker_killed_mid_run_changes_nothing(app, local_verify) -> None:
    """Worker 2 (and its executor) SIGKILLed while it runs a task of the shared application's last run
    (:func:`kill_worker_2_under`): Spark re-runs its tasks (and the lost shuffle output) on worker 1, and
    the verdict is the local command's."""
    _, expected = local_verify
    results, _, base, killed = app
    assert killed == ["worker 2, under a task"], "no task of the run ever ran on worker 2"
    r = results["lost"]
    assert r.exit_code == 1, r.errtext[-3000:]
    assert rows(base / "lost") == expected
