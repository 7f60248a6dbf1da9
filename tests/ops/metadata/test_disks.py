"""``kseg metadata --logdir``: the image against brokers' log directories (docs/metadata.md, "Against the
disks"), on real files: a metadata log written with :mod:`tests.ops.metadata.build` (and the scenario's,
:mod:`tests.ops.metadata.scenario`), log directories written as a broker writes ``meta.properties`` and
``partition.metadata`` (:mod:`tests.ops.logdir.kafka_dir`), through the real CLI."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.ops.logdir.kafka_dir import CLUSTER_ID, partition_metadata, properties
from tests.ops.metadata import scenario as sc
from tests.ops.metadata.build import Log, record, uuid

ORDERS, PAYMENTS, OLD, RECREATED = uuid(1001), uuid(1002), uuid(1003), uuid(1004)
D1A, D1B, D2, OTHER = uuid(201), uuid(202), uuid(203), uuid(204)
LOST = uuid(2)  # DirectoryId.LOST


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _broker(node: int, dirs: list[bytes]) -> bytes:
    return record(
        "RegisterBrokerRecord",
        3,
        brokerId=node,
        incarnationId=uuid(100 + node),
        brokerEpoch=10,
        endPoints=[],
        rack=None,
        fenced=False,
        logDirs=dirs,
    )


def _partition(topic: bytes, number: int, replicas: list[int], dirs: list[bytes]) -> bytes:
    return record(
        "PartitionRecord",
        1,
        partitionId=number,
        topicId=topic,
        replicas=replicas,
        isr=replicas,
        leader=replicas[0],
        leaderEpoch=0,
        partitionEpoch=0,
        directories=dirs,
    )


def cluster(tmp: Path, orders_1_dirs: tuple[bytes, bytes] = (D2, D1A)) -> Path:
    """Brokers 1 (log directories D1A, D1B) and 2 (D2); orders 0 [1,2], 1 [2,1], 2 [1,2] and payments 0 [2],
    each replica placed in a directory (KIP-858)."""
    lg = Log()
    lg.batch(record("FeatureLevelRecord", name="metadata.version", featureLevel=21))
    lg.batch(_broker(1, [D1A, D1B]), _broker(2, [D2]))
    lg.batch(
        record("TopicRecord", name="orders", topicId=ORDERS),
        _partition(ORDERS, 0, [1, 2], [D1A, D2]),
        _partition(ORDERS, 1, [2, 1], list(orders_1_dirs)),
        _partition(ORDERS, 2, [1, 2], [D1B, D2]),
        record("TopicRecord", name="payments", topicId=PAYMENTS),
        _partition(PAYMENTS, 0, [2], [D2]),
    )
    return lg.write(tmp / "meta" / "__cluster_metadata-0")


def log_dir(base: Path, node: int, directory: bytes | None, parts: dict[str, bytes | None]) -> Path:
    """A broker's log directory: ``meta.properties`` (``node.id``, ``directory.id``) and one directory per
    partition with its ``partition.metadata`` (None: none) and an empty active segment."""
    base.mkdir(parents=True)
    meta = {"cluster.id": CLUSTER_ID, "node.id": node, "version": 1}
    if directory is not None:
        meta["directory.id"] = b64(directory)
    (base / "meta.properties").write_text(properties(meta))
    for name, topic_id in parts.items():
        (base / name).mkdir()
        (base / name / "00000000000000000000.log").write_bytes(b"")
        if topic_id is not None:
            (base / name / "partition.metadata").write_text(partition_metadata(b64(topic_id)))
    return base


def healthy(tmp: Path) -> list[Path]:
    """Every replica where the image puts it."""
    node_2 = {**dict.fromkeys(["orders-0", "orders-1", "orders-2"], ORDERS), "payments-0": PAYMENTS}
    return [
        log_dir(tmp / "b1" / "d1a", 1, D1A, {"orders-0": ORDERS, "orders-1": ORDERS}),
        log_dir(tmp / "b1" / "d1b", 1, D1B, {"orders-2": ORDERS}),
        log_dir(tmp / "b2" / "d2", 2, D2, node_2),
    ]


def _run(meta: Path, dirs: list[Path], *args: str, cwd: Path | None = None):
    given = [str(d.relative_to(cwd)) if cwd else str(d) for d in (meta, *dirs)]
    return run_cli(["metadata", *args, given[0], *(a for d in given[1:] for a in ("--logdir", d))], cwd=cwd)


def _rows(meta: Path, dirs: list[Path], *args: str) -> tuple[int, list[dict]]:
    r = _run(meta, dirs, "--format", "json", *args)
    return r.exit_code, [json.loads(line) for line in r.text.splitlines()]


def test_healthy_disks_agree(tmp_path):
    meta = cluster(tmp_path)
    r = _run(meta, healthy(tmp_path))
    assert r.exit_code == 0, r.errtext
    assert "\nAgainst the disks: 3 log directories of nodes 1, 2\n  7 partition directories compared\n" in r.text
    assert r.text.rstrip().endswith("The disks agree with the image.")
    code, rows = _rows(meta, healthy(tmp_path / "again"))
    assert code == 0
    assert [row["type"] for row in rows] == ["image", "disks"]
    assert rows[-1]["compared"] == 7 and rows[-1]["disagreements"] == {}
    assert {(d["node"], d["directoryId"], d["partitions"]) for d in rows[-1]["logDirs"]} == {
        (1, b64(D1A), 2),
        (1, b64(D1B), 1),
        (2, b64(D2), 4),
    }


def test_each_cause(tmp_path):
    meta = cluster(tmp_path)
    dirs = [
        # orders-1 in d1b though the image puts it in D1A; old-0 of a deleted topic; payments-0 not node 1's;
        # nometa-0 without partition.metadata; orders-2 (D1B) missing
        log_dir(
            tmp_path / "b1" / "d1a",
            1,
            D1A,
            {"orders-0": ORDERS, "old-0": OLD, "payments-0": PAYMENTS, "nometa-0": None, "orders-7": ORDERS},
        ),
        log_dir(tmp_path / "b1" / "d1b", 1, D1B, {"orders-1": ORDERS}),
        # orders-0 of another incarnation of orders; orders-2 missing
        log_dir(tmp_path / "b2" / "d2", 2, D2, {"orders-0": RECREATED, "orders-1": ORDERS, "payments-0": PAYMENTS}),
    ]
    code, rows = _rows(meta, dirs)
    assert code == 1
    found = {(r["cause"], r["node"], r["partition"]): r for r in rows if r["type"] == "disagreement"}
    assert set(found) == {
        ("stray", 1, "old-0"),
        ("stray", 1, "payments-0"),
        ("stray", 1, "nometa-0"),
        ("stray", 1, "orders-7"),
        ("directory", 1, "orders-1"),
        ("missing", 1, "orders-2"),
        ("topicId", 2, "orders-0"),
        ("missing", 2, "orders-2"),
    }
    assert "is in no topic of the image" in found["stray", 1, "old-0"]["reason"]
    assert found["stray", 1, "payments-0"]["replicas"] == [2]
    assert "leave node 1 out" in found["stray", 1, "payments-0"]["reason"]
    assert "no partition.metadata" in found["stray", 1, "nometa-0"]["reason"]
    assert "has no partition 7" in found["stray", 1, "orders-7"]["reason"]
    d = found["directory", 1, "orders-1"]
    assert (d["directory"], d["imageDirectory"]) == (b64(D1B), b64(D1A))
    assert d["path"] == str(tmp_path / "b1" / "d1b" / "orders-1")
    t = found["topicId", 2, "orders-0"]
    assert (t["topicId"], t["imageTopicId"]) == (b64(RECREATED), b64(ORDERS))
    assert "-stray" in t["reason"]
    m = found["missing", 1, "orders-2"]
    assert m["path"] is None and m["logDir"] is None and m["replicas"] == [1, 2] and m["imageDirectory"] == b64(D1B)
    summary = rows[-1]
    assert summary["disagreements"] == {"stray": 4, "topicId": 1, "missing": 2, "directory": 1}

    text = _run(meta, dirs, cwd=tmp_path)  # paths shown as given
    assert text.exit_code == 1
    lines = text.text.splitlines()
    assert max(map(len, lines)) <= 80
    body = "\n".join(lines[lines.index("Against the disks: 3 log directories of nodes 1, 2") :])
    headings = [line for line in lines if line.endswith(")") and not line.startswith(" ")]
    assert headings[-4:] == [
        "Strays: partition directories the image does not assign to their node (4)",
        "Topic IDs that differ from the image (1)",
        "Assigned replicas with no partition directory (2)",
        "Directory assignments (KIP-858) that differ (1)",
    ]
    assert lines[-1] == "8 disagreements with the image: 4 stray, 1 topic ID, 2 missing, 1 directory"
    assert "LogManager.isStrayReplica" in body and "ReplicaManager.maybeUpdateTopicAssignment" in body


def test_filters_keep_their_rows(tmp_path):
    meta = cluster(tmp_path)
    dirs = [
        log_dir(tmp_path / "b1" / "d1a", 1, D1A, {"orders-0": ORDERS, "orders-1": ORDERS, "old-0": OLD}),
        log_dir(tmp_path / "b1" / "d1b", 1, D1B, {"orders-2": ORDERS}),
        log_dir(tmp_path / "b2" / "d2", 2, D2, {"orders-1": ORDERS, "orders-2": ORDERS, "payments-0": PAYMENTS}),
    ]
    code, rows = _rows(meta, dirs, "--broker", "2")
    assert code == 1
    assert [(r["cause"], r["partition"]) for r in rows if r["type"] == "disagreement"] == [("missing", "orders-0")]
    code, rows = _rows(meta, dirs, "--topic", "payments")
    assert code == 0 and rows[-1]["disagreements"] == {}


def test_lost_directory_and_unplaced(tmp_path):
    """LOST (the controller takes the directory for offline) differs; MIGRATING (no directory in the image)
    is not compared."""
    meta = cluster(tmp_path, orders_1_dirs=(uuid(0), LOST))
    code, rows = _rows(meta, healthy(tmp_path))
    found = [r for r in rows if r["type"] == "disagreement"]
    assert code == 1
    assert [(r["cause"], r["node"], r["imageDirectory"]) for r in found] == [("directory", 1, "LOST")]


def test_log_directories_not_given_are_not_judged(tmp_path):
    """Node 1 registered D1A and D1B; only d1a given: orders-2 (placed in D1B) is not called missing."""
    meta = cluster(tmp_path)
    dirs = healthy(tmp_path)
    r = _run(meta, [dirs[0], dirs[2]])
    assert r.exit_code == 0, r.text
    assert "1 assigned replica may be in log directories not given" in r.errtext


def test_as_of_the_point_asked(tmp_path):
    """The scenario: orders (0 [1,2], 1 [2,1]) is removed at offset 32, committed 0 [2] created at 28. Node 2's
    disk as it was before the removal: at offset 28 it agrees; at the end orders-0 and orders-1 are strays."""
    meta = sc.write(tmp_path)
    ids = {"orders-0": sc.ORDERS, "orders-1": sc.ORDERS, "committed-0": sc.COMMITTED}
    disk = log_dir(tmp_path / "b2" / "data", 2, None, ids)
    code, rows = _rows(meta, [disk], "--at-offset", "28")
    assert code == 0  # (the record Kafka's loader refuses, at offset 39, is after the point)
    assert [r for r in rows if r["type"] == "disagreement"] == []
    code, rows = _rows(meta, [disk])
    strays = [(r["cause"], r["topic"], r["partition"]) for r in rows if r["type"] == "disagreement"]
    assert strays == [("stray", "orders", "orders-0"), ("stray", "orders", "orders-1")]
    assert all("is in no topic of the image" in r["reason"] for r in rows if r["type"] == "disagreement")


def test_node_unknown_and_unreadable(tmp_path):
    meta = cluster(tmp_path)
    bare = tmp_path / "bare"
    (bare / "orders-0").mkdir(parents=True)
    (bare / "orders-0" / "00000000000000000000.log").write_bytes(b"")
    code, rows = _rows(meta, [bare])
    assert code == 1
    assert [(r["cause"], r["logDir"]) for r in rows if r["type"] == "disagreement"] == [("uncompared", str(bare))]
    bad = log_dir(tmp_path / "bad", 1, D1A, {"orders-0": ORDERS})
    (bad / "orders-0" / "partition.metadata").write_text("version: 0\ntopic_id: nope")
    code, rows = _rows(meta, [bad])
    uncompared = [r for r in rows if r["type"] == "disagreement" and r["cause"] == "uncompared"]
    assert code == 1 and uncompared[0]["path"] == str(bad / "orders-0")
    assert "not a topic ID" in uncompared[0]["reason"]


@pytest.mark.parametrize("name", ["meta.properties", "orders-0/partition.metadata"])
def test_an_unreadable_file_is_exit_2(tmp_path, name):
    """``meta.properties`` or ``partition.metadata`` the OS refuses: exit 2 with its reason, no verdict on it."""
    import subprocess

    from tests.conftest import as_unprivileged_root, kseg_argv

    meta = cluster(tmp_path)
    d = log_dir(tmp_path / "d", 1, D1A, {"orders-0": ORDERS})
    (d / name).chmod(0)
    try:
        argv = kseg_argv("metadata", "--format", "json", str(meta), "--logdir", str(d))
        p = subprocess.run(as_unprivileged_root(argv), capture_output=True, timeout=120)
    finally:
        (d / name).chmod(0o644)
    assert p.returncode == 2, p.stderr
    assert name.split("/")[-1] in p.stderr.decode() and "Permission denied" in p.stderr.decode()
    rows = [json.loads(line) for line in p.stdout.decode().splitlines()]
    assert not any(r["type"] == "disagreement" and r["path"] == str(d / "orders-0") for r in rows)


def test_missing_logdir_is_usage_error(tmp_path):
    meta = cluster(tmp_path)
    r = _run(meta, [tmp_path / "nowhere"])
    assert r.exit_code == 2 and r.text == ""
    r = run_cli(["metadata", "--diff", "--logdir", str(tmp_path), str(meta), str(meta)])
    assert r.exit_code == 2 and "--logdir" in r.errtext


def test_log_directories_on_an_object_store(s3, tmp_path):
    """The brokers' log directories on S3 (moto's server on loopback), found under one root as kseg logdir
    finds them: the same rows as from the disk, the paths the store's."""
    meta = cluster(tmp_path)
    healthy(tmp_path / "fleet")
    (tmp_path / "fleet" / "b1" / "d1a" / "orders-1").rename(tmp_path / "fleet" / "b1" / "d1b" / "orders-1")
    s3.upload_tree(tmp_path / "fleet", "metadata-disks/fleet")
    here = _rows(meta, [tmp_path / "fleet"])
    r = run_cli(["metadata", "--format", "json", str(meta), "--logdir", s3.uri("metadata-disks/fleet")])
    assert r.exit_code == here[0] == 1, r.errtext
    text = r.text.replace(s3.uri("metadata-disks/fleet"), str(tmp_path / "fleet"))
    remote = [json.loads(line) for line in text.splitlines()]
    assert remote == here[1]
    assert [(x["cause"], x["partition"]) for x in remote if x["type"] == "disagreement"] == [("directory", "orders-1")]


def test_a_partition_in_two_log_directories_of_a_node_is_judged_twice(tmp_path):
    """orders-2 in both of node 1's log directories (Kafka refuses to start; kseg logdir says so): each copy
    is judged, the old incarnation's is the one that differs."""
    meta = cluster(tmp_path)
    dirs = healthy(tmp_path)
    (dirs[0] / "orders-2").mkdir()
    (dirs[0] / "orders-2" / "partition.metadata").write_text(partition_metadata(b64(RECREATED)))
    code, rows = _rows(meta, dirs)
    assert code == 1
    found = [(r["cause"], r["path"]) for r in rows if r["type"] == "disagreement"]
    assert found == [("topicId", str(dirs[0] / "orders-2"))]
    assert rows[-1]["compared"] == 8
