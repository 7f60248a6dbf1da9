"""``kseg diff --roots --spark`` on a real local[2] PySpark: one task per replica set, the local rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_diff import _three_replicas
from tests.conftest import run_cli
from tests.spark.shared import run_on_spark, shared_session
from tests.storage.forensics_data import EPOCHS_SHARED, replica_logs, write_replica

pyspark = pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")


def test_spark_gives_the_local_rows(tmp_path: Path) -> None:
    old, new = replica_logs()
    roots = [tmp_path / b / "data" for b in ("b1", "b2", "b3")]
    for i in range(4):  # four replica sets: divergent, identical, lagging, divergent
        name = f"events-{i}"
        write_replica(roots[0] / name, old.appends, EPOCHS_SHARED)
        other = {0: new.appends, 1: old.appends, 2: old.appends[:8], 3: new.appends}[i]
        write_replica(roots[1] / name, other, EPOCHS_SHARED + ("2 100\n" if other is new.appends else ""))
    (roots[1] / "events-0" / "leader-epoch-checkpoint").write_text("0\n3\n0 0\n1 50\n2 100\n")
    (roots[1] / "events-3" / "leader-epoch-checkpoint").write_text("0\n3\n0 0\n1 50\n2 100\n")
    write_replica(roots[2] / "events-1", old.appends, None)
    _three_replicas(tmp_path)  # orders-0: b1 whole, b2 lagging at a batch boundary, b3 with one damaged batch
    args = ["diff", "--roots", "--format", "json", *map(str, roots)]
    local = run_cli(args)
    spark = run_on_spark([*args, "--spark", "--master", "local[2]"])
    assert local.exit_code == spark.exit_code == 1, spark.errtext[-2000:]
    assert spark.text == local.text
    summaries = [json.loads(line) for line in spark.text.splitlines() if '"type":"summary"' in line]
    assert [(s["partition"], s["replicas"], s["status"], s["firstDivergentOffset"]) for s in summaries] == [
        ("events-0", 2, "divergent", 100),
        ("events-1", 3, "identical", None),
        ("events-2", 2, "lagging", None),
        ("events-3", 2, "divergent", 100),
        ("orders-0", 3, "damaged", None),
    ]
    reps = [json.loads(line) for line in spark.text.splitlines() if '"partition":"orders-0"' in line][:-1]
    assert [r["status"] for r in reps] == ["identical", "lagging", "damaged"]
    assert [(d["baseOffset"], d["lastOffset"]) for d in reps[2]["damaged"]] == [(31, 50)]


def test_a_set_whose_task_keeps_dying_is_an_error_the_others_stand(tmp_path: Path) -> None:
    """The Python worker dies on events-2's set (the test-only hook, in the workers' environment of this run
    on the shared session): its group is run again one set per job, so events-2 alone is an error naming the
    cause (exit 2) and every other set's rows are the local's."""
    from kseg.spark.job import KILL_WORKER_ENV

    groups = 4 * shared_session().sparkContext.defaultParallelism  # diff's groups (kseg/spark/diff_job.py)
    old, new = replica_logs()
    roots = [tmp_path / b / "data" for b in ("b1", "b2")]
    for i in range(groups + 3):  # more sets than groups: events-2 shares its group with events-<groups + 2>
        write_replica(roots[0] / f"events-{i}", old.appends, EPOCHS_SHARED)
        write_replica(roots[1] / f"events-{i}", old.appends, EPOCHS_SHARED)
    args = ["diff", "--roots", "--format", "json", *map(str, roots)]
    local = run_cli(args)
    spark = run_on_spark([*args, "--spark", "--master", "local[2]"], worker_env={KILL_WORKER_ENV: "diff:events-2"})
    assert local.exit_code == 0 and spark.exit_code == 2, spark.errtext[-2000:]
    got = [json.loads(line) for line in spark.text.splitlines()]
    want = [json.loads(line) for line in local.text.splitlines()]
    assert not [row for row in got if "events-2" in json.dumps(row)]
    assert [row for row in want if "events-2" not in json.dumps(row)] == got
    assert [row for row in got if row.get("partition") == f"events-{groups + 2}"]  # its group's other set stands
    assert spark.errtext.strip() == (
        f"kseg: error: {roots[0] / 'events-2'}: not compared: Spark gave up its task (spark.task.maxFailures "
        "reached): its task failed 1 time, the last: Python worker exited unexpectedly (crashed)"
    )
