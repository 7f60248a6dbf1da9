"""``kseg logdir --spark``: the partition directories read on Spark's executors give the local run's rows,
text and exit code -- across log directories (a topic ID differing between replicas, judged with every
replica at once), a fleet root and an S3 log directory -- and a bin whose task keeps dying is ``failed``
with its cause (exit 2), the other rows standing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kseg.spark.job import KILL_WORKER_ENV
from tests.conftest import run_cli
from tests.ops.logdir.kafka_dir import directory_id, log_dir, partition_metadata
from tests.ops.logdir.test_logdir_places import OLD_ORDERS_ID, fleet
from tests.spark.shared import run_on_spark

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")

LOCAL2 = ["--spark", "--master", "local[2]"]


def _run(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> tuple[int, list[str], str]:
    """``kseg logdir ARGS`` in this process, its --spark job on the shared session (tests/spark/shared.py),
    ``env`` in the environment of that job's Python workers."""
    r = run_on_spark(["logdir", *args], worker_env=env) if "--spark" in args else run_cli(["logdir", *args])
    assert "Traceback" not in r.errtext, r.errtext[-3000:]
    return r.exit_code, r.text.splitlines(), r.errtext


def test_logdir_on_spark_equals_the_local_run(s3, tmp_path: Path) -> None:
    """A fleet root (broker 2's orders-0 under the topic's old ID) and a third broker's log directory on
    S3: the same JSON rows, text, --report and exit code as the local command."""
    fleet(tmp_path / "fleet")
    log_dir(tmp_path / "b3", node_id=3)
    s3.upload_tree(tmp_path / "b3", "logdir-b3")
    inputs = [str(tmp_path / "fleet"), s3.uri("logdir-b3")]
    local_json = _run(["--format", "json", *inputs], tmp_path)
    local_text = _run(["--report", str(tmp_path / "local.jsonl"), *inputs], tmp_path)
    spark_text = _run([*LOCAL2, "--report", str(tmp_path / "spark.jsonl"), *inputs], tmp_path)
    assert spark_text[:2] == local_text[:2] and spark_text[0] == 1
    assert (tmp_path / "spark.jsonl").read_text() == (tmp_path / "local.jsonl").read_text()
    rows = [json.loads(line) for line in (tmp_path / "spark.jsonl").read_text().splitlines()]
    assert [json.dumps(r, separators=(",", ":")) for r in rows] == [
        json.dumps(json.loads(line), separators=(",", ":")) for line in local_json[1]
    ]
    orders = [r for r in rows if r.get("partition") == "orders-0"]
    assert len(orders) == 3 and all(OLD_ORDERS_ID in r["problems"][0] for r in orders)  # all replicas judged


def test_recovery_is_judged_on_the_executors_as_locally(tmp_path: Path) -> None:
    """After a crash (no .kafka_cleanshutdown), a CRC fault past a partition's recovery point: the executors
    validate the batches a broker's recovery reads, as the local run does -- the same truncation, log end,
    rows, note and exit code."""
    from tests.ops.logdir.test_logdir_recovery import SEG1, _batch_positions, _crashed, _flip

    d = _crashed(tmp_path / "d", 300)
    _flip(d / "plain-0" / SEG1, _batch_positions(d / "plain-0" / SEG1)[3][0] + 70)
    local = _run(["--format", "json", str(d)], tmp_path)
    spark = _run([*LOCAL2, "--format", "json", str(d)], tmp_path)
    assert spark[:2] == local[:2] and spark[0] == 1
    assert [line for line in spark[2].splitlines() if "note:" in line] == [
        line for line in local[2].splitlines() if "note:" in line
    ]
    plain = next(json.loads(line) for line in spark[1] if '"partition":"plain-0"' in line.replace(" ", ""))
    assert plain["problems"][0].startswith("recovery truncates at offset ") and plain["logEndOffset"] < 420


def test_txnindex_sanity_is_judged_on_the_executors_as_locally(tmp_path: Path) -> None:
    """A ``.txnindex`` entry below its segment's base offset over an invalid batch (the segment recovered on load
    and truncated), and one of version 1 in the next segment (the broker does not start): the executors read the
    indexes as the local run does -- the same rows, text, notes and exit code."""
    from tests.ops.logdir.test_logdir_txnindex import SEG0, SEG36, _corrupt_batch, _rewrite, _txnindex, txn_dir

    d = txn_dir(tmp_path / "d")
    _rewrite(_txnindex(d, SEG0), 0, last=-1)
    _corrupt_batch(d, SEG0, 2)
    _rewrite(_txnindex(d, SEG36), 1, version=1)
    runs = {}
    for args in (["--format", "json", str(d)], [str(d)]):
        runs[len(args)] = local = _run(args, tmp_path)
        spark = _run([*LOCAL2, *args], tmp_path)
        assert spark == local and spark[0] == 1
    part = next(row for row in map(json.loads, runs[3][1]) if row["type"] == "partition")
    assert [q.split(" ")[:2] for q in part["problems"]] == [["load", "fails:"], ["recovery", "truncates"]]


def test_cross_partition_rules_are_judged_on_the_driver(tmp_path: Path) -> None:
    """The rules that need every partition of a node at once (issue 32), with the partitions read on the
    executors: node 1's two log directories both hold plain-0 (and share a directory ID), d1 holds orders-0
    and orders-00 (one partition to Kafka), orders-1 of d2 carries another topic ID -- the local run's rows."""
    import shutil

    d1 = log_dir(tmp_path / "n1" / "d1")
    d2 = log_dir(tmp_path / "n1" / "d2", directory=directory_id(1))
    shutil.copytree(d1 / "orders-0", d1 / "orders-00")
    (d2 / "orders-0").rename(d2 / "orders-1")
    (d2 / "orders-1" / "partition.metadata").write_text(partition_metadata(OLD_ORDERS_ID))
    inputs = ["--format", "json", str(d1), str(d2)]
    local = _run(inputs, tmp_path)
    code, lines, err = _run([*LOCAL2, *inputs], tmp_path)
    assert (code, lines) == local[:2] and code == 1, err[-3000:]
    rows = [json.loads(line) for line in lines]
    problems = {(r["logDir"], r.get("partition")): r["problems"] for r in rows}
    assert any("duplicate log directories for orders-0 on one node" in p for p in problems[(str(d1), "orders-00")])
    assert any("duplicate log directories for plain-0 on one node" in p for p in problems[(str(d2), "plain-0")])
    assert any("topic ID differs between partitions of topic orders" in p for p in problems[(str(d2), "orders-1")])
    assert any("directory.id" in p and "more than one log directory" in p for p in problems[(str(d1), None)])


def test_a_bin_whose_task_dies_is_failed_with_its_cause(tmp_path: Path) -> None:
    dirs = fleet(tmp_path / "fleet")
    local = _run(["--format", "json", str(tmp_path / "fleet")], tmp_path)
    code, lines, err = _run(
        [*LOCAL2, "--format", "json", str(tmp_path / "fleet")], tmp_path, env={KILL_WORKER_ENV: "logdir:plain-0"}
    )
    assert code == 2, err[-3000:]
    got, want = [json.loads(line) for line in lines], [json.loads(line) for line in local[1]]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if g.get("partition") == "plain-0":
            assert g["status"] == "failed" and g["logEndOffset"] is None
        else:
            assert g == w
    causes = [line for line in err.splitlines() if "plain-0: not read: Spark gave up its task" in line]
    assert len(causes) == 2 and all(line.startswith("kseg: error: ") for line in causes)
    assert {line.split(": not read")[0].removeprefix("kseg: error: ") for line in causes} == {
        str(d / "plain-0") for d in dirs
    }
