"""``kseg logdir`` on log directories written the way Kafka writes them (kafka_dir.py): a healthy one clean
with every value equal to the file holding it, and every problem of issue 23 found, through the real CLI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, run_cli
from tests.ops.logdir.kafka_dir import (
    CLUSTER_ID,
    DIRECTORY_ID,
    ORDERS_END,
    PLAIN_END,
    TOPIC_IDS,
    checkpoint,
    log_dir,
    properties,
)


def _run(*paths: Path) -> tuple[int, list[dict], str]:
    r = run_cli(["logdir", "--format", "json", *map(str, paths)])
    assert "Traceback" not in r.errtext, r.errtext
    return r.exit_code, [json.loads(line) for line in r.text.splitlines()], r.errtext


def _rows(rows: list[dict], kind: str) -> dict[str, dict]:
    return {(r["partition"] if kind == "partition" else r["logDir"]): r for r in rows if r["type"] == kind}


def _problems(rows: list[dict]) -> list[str]:
    return [p for r in rows for p in r["problems"]]


def test_healthy_log_dir_is_clean_and_values_equal_the_files(tmp_path: Path) -> None:
    d = log_dir(tmp_path / "b1")
    code, rows, err = _run(d)
    assert code == 0, (rows, err)
    assert _problems(rows) == []
    (logdir,) = _rows(rows, "logdir").values()
    assert logdir["logDir"] == str(d)
    assert (logdir["clusterId"], logdir["nodeId"], logdir["directoryId"]) == (CLUSTER_ID, 1, DIRECTORY_ID)
    assert logdir["cleanShutdown"] == {"brokerEpoch": 42}
    assert logdir["checkpoints"] == [
        "replication-offset-checkpoint",
        "recovery-point-offset-checkpoint",
        "log-start-offset-checkpoint",
        "cleaner-offset-checkpoint",
    ]
    parts = _rows(rows, "partition")
    assert list(parts) == ["orders-0", "plain-0"]
    orders, plain = parts["orders-0"], parts["plain-0"]
    assert orders["topicId"] == TOPIC_IDS["orders"] and plain["topicId"] == TOPIC_IDS["plain"]
    assert (orders["logEndOffset"], orders["highWatermark"], orders["recoveryPoint"]) == (ORDERS_END,) * 3
    assert (plain["logEndOffset"], plain["highWatermark"], plain["recoveryPoint"]) == (PLAIN_END,) * 3
    # the log start checkpoint is present without an entry: the first segment's base offset (LogManager's rule)
    assert orders["logStartOffset"] == plain["logStartOffset"] == 0
    assert (orders["cleanerCheckpoint"], plain["cleanerCheckpoint"]) == (None, 251)
    assert (orders["leaderEpoch"], plain["leaderEpoch"]) == (3, 0)
    assert (orders["segments"], plain["segments"]) == (1, 2)
    assert plain["bytes"] == sum(p.stat().st_size for p in (d / "plain-0").glob("*.log"))
    assert (plain["firstTimestamp"], plain["lastTimestamp"]) == (1730000000011, 1730000000131)
    assert orders["status"] == plain["status"] == "clean"


def test_healthy_log_dir_of_an_older_kafka_is_clean_with_nulls(tmp_path: Path) -> None:
    """A ZooKeeper broker before 2.8/3.7: meta.properties version 0 with broker.id, an empty
    .kafka_cleanshutdown, no partition.metadata, no directory.id: clean, the missing values null."""
    d = log_dir(tmp_path / "old")
    for part in ("orders-0", "plain-0"):
        (d / part / "partition.metadata").unlink()
    (d / "meta.properties").write_text(properties({"version": 0, "broker.id": 7}))
    (d / ".kafka_cleanshutdown").write_text("")
    code, rows, err = _run(d)
    assert code == 0, (rows, err)
    (logdir,) = _rows(rows, "logdir").values()
    assert (logdir["clusterId"], logdir["nodeId"], logdir["directoryId"]) == (None, 7, None)
    assert logdir["cleanShutdown"] == {"brokerEpoch": None}
    assert all(p["topicId"] is None for p in _rows(rows, "partition").values())


def test_absent_files_are_null_never_a_guess(tmp_path: Path) -> None:
    d = tmp_path / "bare"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", d / "plain-0")
    code, rows, _ = _run(d)
    assert code == 0
    (logdir,) = _rows(rows, "logdir").values()
    assert logdir["cleanShutdown"] is None and logdir["checkpoints"] == [] and logdir["clusterId"] is None
    (plain,) = _rows(rows, "partition").values()
    for key in ("topicId", "logStartOffset", "highWatermark", "recoveryPoint", "cleanerCheckpoint", "leaderEpoch"):
        assert plain[key] is None, key
    assert plain["logEndOffset"] == PLAIN_END


def _write(d: Path, name: str, text: str) -> None:
    (d / name).write_text(text)


ENDS = [("orders", 0, ORDERS_END), ("plain", 0, PLAIN_END)]
# damage -> (what it does to a healthy directory, the partition whose row holds the problem or None, pattern)
PROBLEMS = {
    "hw_past_end": (
        lambda d: _write(d, "replication-offset-checkpoint", checkpoint([("orders", 0, 300), ENDS[1]])),
        "orders-0",
        r"high watermark 300 \(replication-offset-checkpoint\) is past the log end offset 269: 31 committed",
    ),
    "recovery_past_end": (
        lambda d: _write(d, "recovery-point-offset-checkpoint", checkpoint([ENDS[0], ("plain", 0, 500)])),
        "plain-0",
        r"recovery point 500 \(recovery-point-offset-checkpoint\) is past the log end offset 420",
    ),
    "log_start_past_end": (
        lambda d: _write(d, "log-start-offset-checkpoint", checkpoint([("plain", 0, 421)])),
        "plain-0",
        r"log start offset 421 \(log-start-offset-checkpoint\) is outside the log \[0, 420\]",
    ),
    "log_start_below_first_segment": (
        lambda d: (
            [(d / "plain-0" / f"00000000000000000000.{x}").unlink() for x in ("log", "index", "timeindex")]
            and _write(d, "log-start-offset-checkpoint", checkpoint([("plain", 0, 100)]))
        ),
        "plain-0",
        r"log start offset 100 \(log-start-offset-checkpoint\) is outside the log \[251, 420\]",
    ),
    "entry_without_directory": (
        lambda d: _write(d, "replication-offset-checkpoint", checkpoint([*ENDS, ("gone", 3, 17)])),
        None,
        r"entry without a directory: .*replication-offset-checkpoint: line 5: gone 3 17, .*no directory gone-3",
    ),
    "missing_from_checkpoint_after_clean_shutdown": (
        lambda d: _write(d, "recovery-point-offset-checkpoint", checkpoint([ENDS[0]])),
        "plain-0",
        "missing from recovery-point-offset-checkpoint: the broker shut down cleanly",
    ),
    "bad_version_line": (
        lambda d: _write(d, "replication-offset-checkpoint", checkpoint(ENDS, version=1)),
        None,
        r"malformed: .*replication-offset-checkpoint: line 1: Unrecognised version: 1, expecting: 0",
    ),
    "count_disagrees": (
        lambda d: _write(d, "recovery-point-offset-checkpoint", "0\n3\norders 0 269\nplain 0 420\n"),
        None,
        r"recovery-point-offset-checkpoint: Expected \[3\] entries in checkpoint file, but found only \[2\]",
    ),
    "unparsable_entry": (
        lambda d: _write(d, "cleaner-offset-checkpoint", "0\n1\nplain 0 two-hundred\n"),
        None,
        r"cleaner-offset-checkpoint: line 3: Malformed line in checkpoint file: 'plain 0 two-hundred'",
    ),
    "epochs_not_increasing": (
        lambda d: _write(d / "orders-0", "leader-epoch-checkpoint", checkpoint([(0, 0), (3, 132), (1, 193)])),
        "orders-0",
        r"leader-epoch-checkpoint: line 5: epoch 1 at offset 193 does not follow epoch 3 at offset 132",
    ),
    "epoch_start_disagrees": (
        lambda d: _write(d / "orders-0", "leader-epoch-checkpoint", checkpoint([(0, 0), (1, 140), (3, 193)])),
        "orders-0",
        r"line 4: epoch 1 starts at offset 140, but the first batch of epoch 1 in the log is at offset 132",
    ),
    "epoch_never_recorded": (
        lambda d: _write(d / "orders-0", "leader-epoch-checkpoint", checkpoint([(0, 0), (3, 193)])),
        "orders-0",
        r"batches of leader epoch 1 \(from offset 132\) in the log, an epoch the checkpoint never recorded",
    ),
    "epoch_earlier_batches_inside_an_entry": (
        lambda d: _write(d / "orders-0", "leader-epoch-checkpoint", checkpoint([(0, 0), (1, 120), (3, 193)])),
        "orders-0",
        r"line 4: epoch 1 starts at offset 120, but the log has a batch of the earlier epoch 0 at offset \d+, "
        r"inside epoch 1's range \(the first batch of epoch 1 is at offset 132\)",
    ),
    "malformed_partition_metadata": (
        lambda d: _write(d / "plain-0", "partition.metadata", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"),
        "plain-0",
        r"partition.metadata: line 2: Invalid topic ID in partition metadata file",
    ),
    "malformed_meta_properties": (
        lambda d: _write(d, "meta.properties", properties({"cluster.id": CLUSTER_ID, "version": 1})),
        None,
        r"meta.properties: Failed to find the 'node.id' property",
    ),
    "malformed_clean_shutdown": (
        lambda d: _write(d, ".kafka_cleanshutdown", '{"version":0'),
        None,
        r"\.kafka_cleanshutdown: expected \{\"version\":0,\"brokerEpoch\":N\}",
    ),
    "swap_file": (
        lambda d: _write(d / "plain-0", "00000000000000000251.log.swap", ""),
        "plain-0",
        r"leftover: .*00000000000000000251\.log\.swap: .*Kafka completes the swap on start",
    ),
    "swap_index": (
        lambda d: _write(d / "plain-0", "00000000000000000251.timeindex.swap", ""),
        "plain-0",
        r"leftover: .*251\.timeindex\.swap: an index of an interrupted swap: Kafka deletes it on start",
    ),
    "swap_of_unfinished_cleaning": (
        lambda d: [
            _write(d / "plain-0", n, "") for n in ("00000000000000000251.log.swap", "00000000000000000000.log.cleaned")
        ],
        "plain-0",
        r"251\.log\.swap: a swap of an unfinished cleaning .*: Kafka deletes it on start",
    ),
    "kraft_replica_without_topic_id": (
        lambda d: (d / "orders-0" / "partition.metadata").unlink(),
        "orders-0",
        r"no partition.metadata on a KRaft broker .*: Kafka takes the replica for a stray one",
    ),
    "cleaned_file": (
        lambda d: _write(d / "plain-0", "00000000000000000000.log.cleaned", ""),
        "plain-0",
        r"leftover: .*\.log\.cleaned: an interrupted cleaning: Kafka deletes it on start",
    ),
    "deleted_file": (
        lambda d: _write(d / "orders-0", "00000000000000000000.index.deleted", ""),
        "orders-0",
        r"leftover: .*\.index\.deleted: a segment whose deletion was interrupted: Kafka deletes it on start",
    ),
    "delete_dir": (
        lambda d: (d / "plain-1.a8f2d6b9c0e14f3e8b7a6c5d4e3f2a1b-delete").mkdir(),
        None,
        r"leftover: .*plain-1\.a8f2d6b9c0e14f3e8b7a6c5d4e3f2a1b-delete: a deleted partition's directory: Kafka "
        "deletes it on start",
    ),
    "future_dir": (
        lambda d: (d / "plain-2.a8f2d6b9c0e14f3e8b7a6c5d4e3f2a1b-future").mkdir(),
        None,
        r"-future: a replica being moved between log directories: Kafka resumes the move on start",
    ),
    "stray_dir": (
        lambda d: (d / "plain-3.a8f2d6b9c0e14f3e8b7a6c5d4e3f2a1b-stray").mkdir(),
        None,
        r"-stray: a replica the controller no longer assigns to this broker: Kafka deletes it",
    ),
    "unknown_file_in_log_dir": (
        lambda d: _write(d, "notes.txt", "remember to reassign\n"),
        None,
        r"unknown file: .*/notes\.txt: not a file Kafka writes",
    ),
    "unknown_file_in_partition": (
        lambda d: _write(d / "orders-0", "core.1234", ""),
        "orders-0",
        r"unknown file: .*orders-0/core\.1234: not a file Kafka writes",
    ),
    "checkpoint_tmp": (
        lambda d: _write(d, "replication-offset-checkpoint.tmp", "0\n"),
        None,
        r"leftover: .*replication-offset-checkpoint\.tmp: an interrupted atomic write",
    ),
}


@pytest.mark.parametrize("damage", sorted(PROBLEMS))
def test_each_problem_is_found(tmp_path: Path, damage: str) -> None:
    import re

    d = log_dir(tmp_path / "b1")
    make, where, pattern = PROBLEMS[damage]
    make(d)
    code, rows, err = _run(d)
    assert code == 1, (damage, rows, err)
    holder = _rows(rows, "partition")[where] if where else next(iter(_rows(rows, "logdir").values()))
    assert [p for p in holder["problems"] if re.search(pattern, p)], (pattern, holder["problems"])
    if where:
        assert holder["status"] == "problems"
    others = [r for r in rows if r is not holder]
    assert _problems(others) == [], _problems(others)


def test_directory_missing_from_a_checkpoint_is_no_problem_without_a_clean_shutdown(tmp_path: Path) -> None:
    """Without .kafka_cleanshutdown the checkpoints may predate the directory (a crash): not a problem."""
    d = log_dir(tmp_path / "b1")
    (d / ".kafka_cleanshutdown").unlink()
    (d / "recovery-point-offset-checkpoint").write_text(checkpoint([ENDS[0]]))
    code, rows, _ = _run(d)
    assert code == 0, rows
    assert _rows(rows, "partition")["plain-0"]["recoveryPoint"] is None


def test_log_start_below_the_first_segment_after_a_crash_is_no_problem(tmp_path: Path) -> None:
    """Retention deleted a segment and the broker died before the next log start checkpoint: Kafka raises
    the log start to the first segment's base offset on load; only after a clean shutdown is it a problem."""
    d = log_dir(tmp_path / "b1")
    for ext in ("log", "index", "timeindex"):
        (d / "plain-0" / f"00000000000000000000.{ext}").unlink()
    (d / "log-start-offset-checkpoint").write_text(checkpoint([("plain", 0, 100)]))
    (d / ".kafka_cleanshutdown").unlink()
    code, rows, _ = _run(d)
    assert code == 0, _problems(rows)
    assert _rows(rows, "partition")["plain-0"]["logStartOffset"] == 100


def test_topic_id_differing_between_replicas_across_log_dirs(tmp_path: Path) -> None:
    """The topic was deleted and recreated while broker 2 was away: its replica carries the old ID."""
    b1 = log_dir(tmp_path / "b1")
    b2 = log_dir(tmp_path / "b2", node_id=2, topic_ids={**TOPIC_IDS, "orders": "p5Cj7YkYQhOEiYvvxLZ2KA"})
    code, rows, _ = _run(b1, b2)
    assert code == 1
    orders = [r for r in rows if r["type"] == "partition" and r["partition"] == "orders-0"]
    assert len(orders) == 2
    for row in orders:
        (problem,) = row["problems"]
        assert problem.startswith(
            f"topic ID differs between replicas: {TOPIC_IDS['orders']} in {b1}, p5Cj7YkYQhOEiYvvxLZ2KA in {b2}: "
        )
        assert "UnifiedLog.assignTopicId" in problem
    assert all(not r["problems"] for r in rows if r.get("partition") == "plain-0")


def test_a_partition_directory_given_reads_its_log_dir_for_that_partition(tmp_path: Path) -> None:
    d = log_dir(tmp_path / "b1")
    code, rows, _ = _run(d / "plain-0")
    assert code == 0
    assert [r["type"] for r in rows] == ["logdir", "partition"]
    assert rows[1]["partition"] == "plain-0" and rows[1]["highWatermark"] == PLAIN_END


def test_metadata_log_dir_with_quorum_state(tmp_path: Path) -> None:
    """KRaft's ``__cluster_metadata-0`` holds ``quorum-state`` (FileQuorumStateStore) and is in no
    LogManager checkpoint: clean; a quorum-state that is not QuorumStateData is a problem."""
    d = log_dir(tmp_path / "b1")
    meta = d / "__cluster_metadata-0"
    shutil.copytree(CORPUS_DATA / "__cluster_metadata-0", meta)
    state = {"clusterId": "", "leaderId": 1, "leaderEpoch": 3, "votedId": -1, "appliedOffset": 0}
    (meta / "quorum-state").write_text(json.dumps({**state, "currentVoters": [{"voterId": 1}], "data_version": 0}))
    (d / "bootstrap.checkpoint").write_bytes(b"")
    code, rows, err = _run(d)
    assert code == 0, (rows, err)
    (meta / "quorum-state").write_text('{"leaderId": "one"}')
    code, rows, _ = _run(d)
    assert code == 1
    assert [p for p in _rows(rows, "partition")["__cluster_metadata-0"]["problems"] if "quorum-state" in p]


def test_text_output(tmp_path: Path) -> None:
    d = log_dir(tmp_path / "b1")
    (d / "plain-0" / "junk").write_text("x")
    r = run_cli(["logdir", str(d)])
    assert r.exit_code == 1
    lines = r.text.splitlines()
    assert lines[0] == (
        f"{d}: cluster {CLUSTER_ID}, node 1, directory {DIRECTORY_ID}, clean shutdown (broker epoch 42); "
        "checkpoints: replication-offset-checkpoint, recovery-point-offset-checkpoint, "
        "log-start-offset-checkpoint, cleaner-offset-checkpoint; 2 partitions"
    )
    assert lines[1].startswith("  orders-0: clean; topic ID ZtkM3jXGTZeXkwZ3aAJvPA, log start 0, log end 269, ")
    assert lines[3] == f"    PROBLEM unknown file: {d}/plain-0/junk: not a file Kafka writes"
    assert lines[-1] == "1 log directory, 2 partitions: 1 clean, 1 with problems, 0 failed; 0 log-directory problems"


def test_usage_errors_are_exit_2(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    for path, words in ((tmp_path / "missing", "no such file"), (f, "not a directory")):
        r = run_cli(["logdir", str(path)])
        assert r.exit_code == 2 and words in r.errtext and str(path) in r.errtext, r.errtext
    assert os.listdir(tmp_path) == ["file"]


def test_report_is_the_json_rows_written_atomically(tmp_path: Path) -> None:
    """``--report``: the JSON rows in a file, whatever ``--format`` prints; an existing file is replaced
    only with ``--force``; never inside an input; checked before anything is read."""
    d = log_dir(tmp_path / "b1")
    report = tmp_path / "logdir.jsonl"
    code, rows, _ = _run(d)
    r = run_cli(["logdir", "--report", str(report), str(d)])
    assert r.exit_code == code == 0 and r.text.splitlines()[-1].startswith("1 log directory")
    assert [json.loads(line) for line in report.read_text().splitlines()] == rows
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    again = run_cli(["logdir", "--report", str(report), str(d)])
    assert again.exit_code == 2 and "exists; not replaced (give --force to replace it)" in again.errtext
    assert run_cli(["logdir", "--force", "--report", str(report), str(d)]).exit_code == 0
    inside = run_cli(["logdir", "--report", str(d / "r.jsonl"), str(d)])
    assert inside.exit_code == 2 and "lies within the input" in inside.errtext
    assert not (d / "r.jsonl").exists()
    alone = run_cli(["logdir", "--force", str(d)])
    assert alone.exit_code == 2 and "give it with --report" in alone.errtext


@pytest.mark.parametrize(
    "name", ["replication-offset-checkpoint", "meta.properties", "orders-0/leader-epoch-checkpoint", "plain-0"]
)
def test_an_unreadable_file_is_exit_2_with_the_os_reason(tmp_path: Path, name: str) -> None:
    """A checkpoint, ``meta.properties``, a partition's file or directory the OS refuses: exit 2, its line
    with the OS's reason, never a verdict on what it holds; the rest is still read and shown."""
    import subprocess

    from tests.conftest import as_unprivileged_root, kseg_argv

    d = log_dir(tmp_path / "b1")
    target = d / name
    mode = target.stat().st_mode
    target.chmod(0)
    try:
        p = subprocess.run(
            as_unprivileged_root(kseg_argv("logdir", "--format", "json", str(d))), capture_output=True, timeout=120
        )
    finally:
        target.chmod(mode)
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert f"kseg: error: {target}: " in err and "permission denied" in err.lower(), err
    assert "Traceback" not in err
    rows = [json.loads(line) for line in p.stdout.decode().splitlines()]
    assert [r["partition"] for r in rows if r["type"] == "partition"] == ["orders-0", "plain-0"]
    assert not [r for r in rows if r["type"] == "partition" and r["status"] == "clean" and r["partition"] in name]


@pytest.mark.parametrize(
    "entries",
    [
        [(1, 150), (3, 193)],  # retention or DeleteRecords to 150: truncateFromStart moved epoch 1's entry
        [(0, 0), (1, 132), (3, 193), (4, 269)],  # a leader elected at the log end, not yet written to
        [(0, 0), (1, 132), (2, 193), (3, 193)],  # epoch 2 elected, no write, then 3 (Kafka 1.x: equal starts)
    ],
)
def test_a_healthy_leader_epoch_history_is_clean(tmp_path: Path, entries) -> None:
    """The shared rule (kseg.storage.leader_epochs): what retention, elections and old brokers leave is clean."""
    d = log_dir(tmp_path / "data")
    _write(d / "orders-0", "leader-epoch-checkpoint", checkpoint(entries))
    code, rows, _ = _run(d)
    assert _problems(rows) == [] and code == 0
    assert _rows(rows, "partition")["orders-0"]["leaderEpoch"] == entries[-1][0]


@pytest.mark.parametrize(
    "partitions, problems, expected",
    [
        (["clean"], 1, "1 log directory, 1 partition: 1 clean, 0 with problems, 0 failed; 1 log-directory problem"),
        (
            ["clean", "failed"],
            0,
            "1 log directory, 2 partitions: 1 clean, 0 with problems, 1 failed; 0 log-directory problems",
        ),
    ],
)
def test_the_summary_counts_its_words(partitions: list[str], problems: int, expected: str) -> None:
    """The summary's counts through kseg's one pluraliser (it once said "1 partitions")."""
    from types import SimpleNamespace

    from kseg.render.logdir import summary_line

    report = SimpleNamespace(partitions=[SimpleNamespace(status=s) for s in partitions], problems=["p"] * problems)
    assert summary_line([report]) == expected  # type: ignore[list-item]
