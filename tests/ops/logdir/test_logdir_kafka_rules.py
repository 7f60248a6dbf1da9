"""``kseg logdir`` refuses what a broker starting on the log directories refuses (issue 32): each case
through the real CLI, with a healthy twin that stays clean.

The rules and their Kafka sources: docs/logdir.md, ``kseg.ops.logdir.across``, ``kseg.ops.logdir.rules``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import as_unprivileged_root, kseg_argv, run_cli
from tests.ops.logdir.kafka_dir import (
    CLUSTER_ID,
    ORDERS_END,
    PLAIN_END,
    TOPIC_IDS,
    checkpoint,
    directory_id,
    log_dir,
    partition_metadata,
    properties,
)

OTHER_ID = "p5Cj7YkYQhOEiYvvxLZ2KA"
ENDS = [("orders", 0, ORDERS_END), ("plain", 0, PLAIN_END)]


def _run(*paths: Path | str) -> tuple[int, list[dict], str]:
    r = run_cli(["logdir", "--format", "json", *map(str, paths)])
    assert "Traceback" not in r.errtext, r.errtext
    return r.exit_code, [json.loads(line) for line in r.text.splitlines()], r.errtext


def _parts(rows: list[dict]) -> dict[tuple[str, str], dict]:
    return {(r["logDir"], r["partition"]): r for r in rows if r["type"] == "partition"}


def _problems(rows: list[dict]) -> list[str]:
    return [p for r in rows for p in r["problems"]]


def _copy(d: Path, source: str, name: str) -> None:
    shutil.copytree(d / source, d / name)


# -- duplicate partition directories -----------------------------------------------------------------------


@pytest.mark.parametrize("twin", ["orders-00", "orders-+0", "orders-\u0660", "orders-\uff10"])
def test_two_names_of_one_partition_in_a_log_dir_are_refused(tmp_path: Path, twin: str) -> None:
    """parseTopicPartitionName reads the partition with Integer.parseInt: every name here is orders 0 to
    Kafka (checked with Java 17), and LogManager.loadLog stops on the second one."""
    d = log_dir(tmp_path / "b1")
    _copy(d, "orders-0", twin)
    code, rows, err = _run(d)
    assert code == 1, err
    parts = _parts(rows)
    for name in ("orders-0", twin):
        (problem,) = parts[(str(d), name)]["problems"]
        assert problem.startswith(
            f"duplicate log directories for orders-0 on one node: {d / 'orders-0'} and {d / twin}"
        )
        assert "LogManager.loadLog" in problem and "UnifiedLog.parseTopicPartitionName" in problem
    assert parts[(str(d), "plain-0")]["problems"] == []


def test_names_of_other_partitions_stay_clean(tmp_path: Path) -> None:
    """The twin: ``orders-1`` and ``orders-10`` are other partitions (in the checkpoints: a clean shutdown)."""
    d = log_dir(tmp_path / "b1")
    for name in ("orders-1", "orders-10"):
        _copy(d, "orders-0", name)
    ends = [*ENDS, ("orders", 1, ORDERS_END), ("orders", 10, ORDERS_END)]
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        (d / name).write_text(checkpoint(ends))
    code, rows, err = _run(d)
    assert (code, _problems(rows)) == (0, []), err
    assert len(_parts(rows)) == 4


def test_one_partition_in_two_log_dirs_of_one_node_is_refused(tmp_path: Path) -> None:
    """A node's two log directories both holding orders-0 and plain-0 (a disk copied onto another)."""
    d1 = log_dir(tmp_path / "n1" / "d1")
    d2 = log_dir(tmp_path / "n1" / "d2", directory=directory_id(1, 1))
    code, rows, err = _run(d1, d2)
    assert code == 1, err
    for (_, name), row in _parts(rows).items():
        (problem,) = row["problems"]
        assert problem.startswith(f"duplicate log directories for {name} on one node: {d1 / name} and {d2 / name}")
    assert [r["problems"] for r in rows if r["type"] == "logdir"] == [[], []]


def test_one_partition_on_two_nodes_is_replicas_and_clean(tmp_path: Path) -> None:
    """The twin: the same partitions on nodes 1 and 2 are replicas."""
    code, rows, err = _run(log_dir(tmp_path / "b1"), log_dir(tmp_path / "b2", node_id=2))
    assert (code, _problems(rows)) == (0, []), err


# -- meta.properties across log directories ----------------------------------------------------------------


def _meta(d: Path, **values: object) -> None:
    pairs = {"cluster.id": CLUSTER_ID, "directory.id": directory_id(1), "node.id": 1, "version": 1}
    pairs.update({k.replace("_", "."): v for k, v in values.items()})
    (d / "meta.properties").write_text(properties({k: v for k, v in pairs.items() if v is not None}))


def _two_nodes(tmp_path: Path) -> tuple[Path, Path]:
    return log_dir(tmp_path / "b1"), log_dir(tmp_path / "b2", node_id=2, topic_ids=TOPIC_IDS)


def test_a_directory_id_in_two_log_dirs_is_refused(tmp_path: Path) -> None:
    """A disk cloned onto a second broker: MetaPropertiesEnsemble.verify (one node) and
    ClusterControlManager.registerBroker (two nodes) refuse one directory ID twice."""
    b1, b2 = _two_nodes(tmp_path)
    _meta(b2, node_id=2, directory_id=directory_id(1))
    code, rows, err = _run(b1, b2)
    assert code == 1, err
    for row in (r for r in rows if r["type"] == "logdir"):
        (problem,) = row["problems"]
        assert problem.startswith(
            f"directory.id {directory_id(1)} in more than one log directory: {b1 / 'meta.properties'}, "
            f"{b2 / 'meta.properties'}: "
        )
        assert "MetaPropertiesEnsemble.verify" in problem and "ClusterControlManager.registerBroker" in problem
    assert _problems([r for r in rows if r["type"] == "partition"]) == []


def test_a_cluster_id_differing_between_log_dirs_is_refused(tmp_path: Path) -> None:
    b1, b2 = _two_nodes(tmp_path)
    _meta(b2, node_id=2, directory_id=directory_id(2), cluster_id="ZZU3OEVBNTcwNTJENDM2Qg")
    code, rows, err = _run(b1, b2)
    assert code == 1, err
    for row in (r for r in rows if r["type"] == "logdir"):
        (problem,) = row["problems"]
        assert problem.startswith(
            f"cluster.id differs between log directories: {CLUSTER_ID} in {b1 / 'meta.properties'}, "
            f"ZZU3OEVBNTcwNTJENDM2Qg in {b2 / 'meta.properties'}: "
        )
        assert "InconsistentClusterIdException" in problem


def test_a_node_id_differing_between_one_brokers_log_dirs_is_refused(tmp_path: Path) -> None:
    """A fleet root's broker directory holds one node's log directories: two node IDs are refused
    ("Stored node id ... doesn't match previous node id"); their partitions differ, so no duplicate."""
    root = tmp_path / "fleet"
    d1 = log_dir(root / "broker-1" / "data1")
    d2 = log_dir(root / "broker-1" / "data2", node_id=2)
    shutil.rmtree(d2 / "orders-0")
    shutil.rmtree(d1 / "plain-0")
    for d, keep in ((d1, ENDS[:1]), (d2, ENDS[1:])):
        for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
            (d / name).write_text(checkpoint(keep))
    (d1 / "cleaner-offset-checkpoint").write_text(checkpoint([]))
    code, rows, err = _run(root)
    assert code == 1, err
    for row in (r for r in rows if r["type"] == "logdir"):
        (problem,) = row["problems"]
        assert problem.startswith(
            f"node.id differs between log directories: 1 in {d1 / 'meta.properties'}, 2 in {d2 / 'meta.properties'}"
        )
    assert _problems([r for r in rows if r["type"] == "partition"]) == []


def test_one_brokers_two_log_dirs_agreeing_are_clean(tmp_path: Path) -> None:
    """The twin of the three above: one node's two log directories, one cluster, one node ID, two directory
    IDs, each partition in one of them -- and another node beside it."""
    root = tmp_path / "fleet"
    d1 = log_dir(root / "broker-1" / "data1")
    d2 = log_dir(root / "broker-1" / "data2", directory=directory_id(1, 1))
    shutil.rmtree(d2 / "orders-0")
    shutil.rmtree(d1 / "plain-0")
    for d, keep in ((d1, ENDS[:1]), (d2, ENDS[1:])):
        for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
            (d / name).write_text(checkpoint(keep))
    (d1 / "cleaner-offset-checkpoint").write_text(checkpoint([]))
    log_dir(root / "broker-2" / "data1", node_id=2)
    code, rows, err = _run(root)
    assert (code, _problems(rows)) == (0, []), err
    assert len([r for r in rows if r["type"] == "logdir"]) == 3


@pytest.mark.parametrize(
    "values, pattern",
    [
        ({"cluster_id": None}, "version 1 without cluster.id"),
        ({"directory_id": "AAAAAAAAAAAAAAAAAAAAAQ"}, "is a reserved ID (DirectoryId.reserved)"),
    ],
)
def test_meta_properties_kafka_refuses_alone(tmp_path: Path, values: dict, pattern: str) -> None:
    d = log_dir(tmp_path / "b1")
    _meta(d, **values)
    code, rows, err = _run(d)
    assert code == 1, err
    (logdir,) = [r for r in rows if r["type"] == "logdir"]
    (problem,) = logdir["problems"]
    assert problem.startswith(f"{d / 'meta.properties'}: ") and pattern in problem


# -- partition.metadata by Kafka's grammar -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        f"version:\u00a00\ntopic_id: {TOPIC_IDS['orders']}",  # a no-break space: no separator to Java's \s
        f"version: 0\ntopic_id:\u2003{TOPIC_IDS['orders']}",  # an em space
    ],
)
def test_partition_metadata_with_a_non_ascii_space_is_malformed(tmp_path: Path, text: str) -> None:
    d = log_dir(tmp_path / "b1")
    (d / "orders-0" / "partition.metadata").write_text(text)
    code, rows, err = _run(d)
    assert code == 1, err
    orders = _parts(rows)[(str(d), "orders-0")]
    assert orders["topicId"] is None
    (problem,) = orders["problems"]
    assert problem.startswith(f"malformed: {d / 'orders-0' / 'partition.metadata'}: line ")
    assert "Malformed line in checkpoint file" in problem and "PartitionMetadataReadBuffer" in problem


@pytest.mark.parametrize(
    "text", ["version:\t0\ntopic_id:  {id}", "version: 0\r\ntopic_id: {id}\n", "version: 1\ntopic_id: {id}"]
)
def test_partition_metadata_kafka_reads_is_clean(tmp_path: Path, text: str) -> None:
    """The twin: what PartitionMetadataReadBuffer reads (ASCII blanks, CRLF, a later version) is clean."""
    d = log_dir(tmp_path / "b1")
    (d / "orders-0" / "partition.metadata").write_text(text.format(id=TOPIC_IDS["orders"]))
    code, rows, err = _run(d)
    assert (code, _problems(rows)) == (0, []), err
    assert _parts(rows)[(str(d), "orders-0")]["topicId"] == TOPIC_IDS["orders"]


# -- checkpoints past the log, partitions without segments -------------------------------------------------


def test_a_partition_whose_segments_were_all_deleted_is_never_clean(tmp_path: Path) -> None:
    """replication-offset-checkpoint says 269 was committed; nothing holds it any more."""
    d = log_dir(tmp_path / "b1")
    for f in (d / "orders-0").iterdir():
        if f.name.endswith((".log", ".index", ".timeindex", ".snapshot")):
            f.unlink()
    code, rows, err = _run(d)
    assert code == 1, err
    orders = _parts(rows)[(str(d), "orders-0")]
    assert (orders["segments"], orders["logEndOffset"], orders["highWatermark"]) == (0, None, ORDERS_END)
    assert orders["status"] == "problems"
    (problem,) = orders["problems"]
    assert problem.startswith("no segment: ") and "LogLoader.load" in problem
    assert f"high watermark {ORDERS_END} (replication-offset-checkpoint)" in problem
    assert f"recovery point {ORDERS_END} (recovery-point-offset-checkpoint)" in problem


def test_a_cleaner_checkpoint_past_the_log_end_is_a_problem(tmp_path: Path) -> None:
    d = log_dir(tmp_path / "b1")
    (d / "cleaner-offset-checkpoint").write_text(checkpoint([("plain", 0, PLAIN_END + 5)]))
    code, rows, err = _run(d)
    assert code == 1, err
    (problem,) = _parts(rows)[(str(d), "plain-0")]["problems"]
    assert problem.startswith(f"cleaner checkpoint {PLAIN_END + 5} (cleaner-offset-checkpoint) is past the log end")


def test_checkpoints_at_the_log_end_are_clean(tmp_path: Path) -> None:
    """The twin: every checkpoint at the log end (the cleaner's too) is what a healthy broker leaves."""
    d = log_dir(tmp_path / "b1")
    (d / "cleaner-offset-checkpoint").write_text(checkpoint([("plain", 0, PLAIN_END)]))
    code, rows, err = _run(d)
    assert (code, _problems(rows)) == (0, []), err


# -- topic IDs inside a log directory and across ------------------------------------------------------------


def _orders_1(d: Path, topic_id: str) -> None:
    _copy(d, "orders-0", "orders-1")
    (d / "orders-1" / "partition.metadata").write_text(partition_metadata(topic_id))
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        (d / name).write_text(checkpoint([*ENDS, ("orders", 1, ORDERS_END)]))


def test_partitions_of_one_topic_with_two_topic_ids_in_a_log_dir(tmp_path: Path) -> None:
    d = log_dir(tmp_path / "b1")
    _orders_1(d, OTHER_ID)
    code, rows, err = _run(d)
    assert code == 1, err
    parts = _parts(rows)
    for name in ("orders-0", "orders-1"):
        (problem,) = parts[(str(d), name)]["problems"]
        assert problem.startswith(
            f"topic ID differs between partitions of topic orders: {TOPIC_IDS['orders']} in "
            f"{d / 'orders-0' / 'partition.metadata'}, {OTHER_ID} in {d / 'orders-1' / 'partition.metadata'}: "
        )
    assert parts[(str(d), "plain-0")]["problems"] == []


def test_partitions_of_one_topic_with_two_topic_ids_across_log_dirs(tmp_path: Path) -> None:
    """orders-0 on node 1, orders-1 on node 2 under the topic's old ID."""
    b1 = log_dir(tmp_path / "b1")
    b2 = log_dir(tmp_path / "b2", node_id=2)
    _orders_1(b2, OTHER_ID)
    shutil.rmtree(b2 / "orders-0")
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        (b2 / name).write_text(checkpoint([ENDS[1], ("orders", 1, ORDERS_END)]))
    code, rows, err = _run(b1, b2)
    assert code == 1, err
    parts = _parts(rows)
    assert "topic ID differs between partitions of topic orders" in parts[(str(b1), "orders-0")]["problems"][0]
    assert "topic ID differs between partitions of topic orders" in parts[(str(b2), "orders-1")]["problems"][0]


def test_partitions_of_one_topic_with_one_topic_id_are_clean(tmp_path: Path) -> None:
    d = log_dir(tmp_path / "b1")
    _orders_1(d, TOPIC_IDS["orders"])
    code, rows, err = _run(d, log_dir(tmp_path / "b2", node_id=2))
    assert (code, _problems(rows)) == (0, []), err


# -- unreadable files: exit 2 with the OS's reason -----------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "log-start-offset-checkpoint",
        "cleaner-offset-checkpoint",
        "recovery-point-offset-checkpoint",
        "orders-0/partition.metadata",
        "orders-0/00000000000000000000.log",
        "plain-0/00000000000000000251.log",
    ],
)
def test_an_unreadable_file_named_by_the_checkpoints_is_exit_2(tmp_path: Path, name: str) -> None:
    """The checkpoints and the files of the partitions they name: exit 2, the OS's reason, no verdict on
    them (the partition whose file it is is never clean); each given with ``-q`` too (an error, never a note)."""
    d = log_dir(tmp_path / "b1")
    target = d / name
    target.chmod(0)
    try:
        p = subprocess.run(
            as_unprivileged_root(kseg_argv("logdir", "-q", "--format", "json", str(d))),
            capture_output=True,
            timeout=120,
        )
    finally:
        target.chmod(0o644)
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert f"kseg: error: {target}: " in err and "permission denied" in err.lower(), err
    assert "Traceback" not in err
    rows = [json.loads(line) for line in p.stdout.decode().splitlines()]
    holder = name.split("/")[0] if "/" in name else None  # a log directory's checkpoint: every partition's
    assert not [
        r for r in rows if r["type"] == "partition" and holder in (None, r["partition"]) and r["status"] == "clean"
    ]


@pytest.mark.parametrize("what", ["log-start-offset-checkpoint", "partition directory", "partition.metadata"])
def test_tiered_logdir_unreadable_is_exit_2(tmp_path: Path, what: str) -> None:
    """``kseg tiered --logdir``: the log directory's ``log-start-offset-checkpoint``, or the partition directory
    it joins, that the OS refuses is exit 2 with the reason (never a note and then "clean")."""
    from tests.ops.tiered import scenario as sc

    meta, store, logdir = sc.healthy().write(tmp_path)
    args = ["tiered", "-q", "--metadata-partitions", str(sc.PARTITIONS), str(meta), "--remote", str(store)]
    healthy = run_cli([*args, "--logdir", str(logdir)])
    assert healthy.exit_code == 0, healthy.errtext  # the twin
    part = logdir / f"{sc.TOPIC}-{sc.PARTITION}"
    target = {"partition directory": part, "partition.metadata": part / "partition.metadata"}.get(what, logdir / what)
    assert target.exists()
    mode = target.stat().st_mode
    target.chmod(0)
    try:
        p = subprocess.run(
            as_unprivileged_root(kseg_argv(*args, "--logdir", str(logdir))), capture_output=True, timeout=120
        )
    finally:
        target.chmod(mode)
    err = p.stderr.decode()
    assert p.returncode == 2, (p.stdout.decode(), err)
    assert f"kseg: error: {target}" in err and "permission denied" in err.lower(), err
    assert "Traceback" not in err and "clean" not in p.stdout.decode()


@pytest.mark.parametrize("blocked", ["log-start-offset-checkpoint", "orders-0"])
def test_a_partition_directory_given_with_an_unreadable_file_or_listing_is_exit_2(tmp_path: Path, blocked: str) -> None:
    """``kseg logdir <log dir>/orders-0``: its log directory's ``log-start-offset-checkpoint`` unreadable, or
    the partition directory itself unlistable: exit 2 with the OS's reason, ``-q`` or not."""
    d = log_dir(tmp_path / "b1")
    target = d / blocked
    mode = target.stat().st_mode
    target.chmod(0)
    try:
        p = subprocess.run(
            as_unprivileged_root(kseg_argv("logdir", "-q", str(d / "orders-0"))), capture_output=True, timeout=120
        )
    finally:
        target.chmod(mode)
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert f"kseg: error: {target}: " in err and "permission denied" in err.lower(), err
    assert " 0 clean, " in p.stdout.decode() or not p.stdout  # never a clean verdict for what was not read
