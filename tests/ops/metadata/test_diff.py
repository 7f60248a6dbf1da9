"""``kseg metadata --diff``: two points of the scenario's log, and two nodes' copies, compared; the
differences worked out by hand from the scenario's records (tests/ops/metadata/scenario.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.ops.metadata import scenario as sc
from tests.ops.metadata.test_replay import ACL, SCRAM, partition


def rows(*args: str) -> tuple[int, list[dict]]:
    r = run_cli(["metadata", "--format", "json", "--diff", *args])
    assert r.exit_code in (0, 1), r.errtext
    return r.exit_code, [json.loads(line) for line in r.text.splitlines()]


def test_two_points(tmp_path: Path) -> None:
    part = sc.write(tmp_path)
    code, found = rows("--at-offset", "20", "--at-offset", "39", str(part))
    assert code == 1
    got = [(d["section"], d["key"], d["kind"], d["before"], d["after"]) for d in found[:-1]]
    assert got == [
        ("features", "group.version", "deleted", 1, None),
        ("brokers", "1", "changed", *_broker_1_shutdown()),
        ("brokers", "2", "changed", *_broker_2_fenced()),
        ("acls", sc.b64(sc.ACL_ID), "deleted", ACL, None),
        ("scramUsers", "alice SCRAM-SHA-256", "deleted", SCRAM, None),
        ("topics", "committed", "created", None, {"id": sc.b64(sc.COMMITTED), "partitions": 1}),
        ("topics", "orders", "deleted", {"id": sc.b64(sc.ORDERS), "partitions": 2}, None),
        ("configs", "topic orders retention.ms", "deleted", "1000", None),
        ("configs", "topic temp cleanup.policy", "created", None, "compact"),
    ]
    summary = found[-1]
    assert summary["type"] == "diff" and summary["differences"] == 9
    assert (summary["left"]["offset"], summary["right"]["offset"]) == (20, 39)


def _broker_1_shutdown() -> tuple[dict, dict]:
    from tests.ops.metadata.test_replay import broker_1

    return broker_1(), broker_1(inControlledShutdown=True)


def _broker_2_fenced() -> tuple[dict, dict]:
    from tests.ops.metadata.test_replay import broker_2

    return broker_2(), broker_2(fenced=True)


def test_a_partition_changed(tmp_path: Path) -> None:
    part = sc.write(tmp_path)
    _, found = rows("--at-offset", "13", "--at-offset", "15", str(part))
    got = [(d["section"], d["key"], d["kind"], d["before"], d["after"]) for d in found[:-1]]
    assert got == [
        ("partitions", "orders-0", "changed", partition(0, [1, 2], [1, 2], 1), partition(0, [1, 2], [1], 1, 0, 1)),
        (
            "partitions",
            "orders-1",
            "changed",
            partition(1, [2, 1], [2, 1], 2),
            partition(1, [2, 1], [1], 1, 1, 1, elr=[2]),
        ),
    ]
    text = run_cli(["metadata", "--diff", "--at-offset", "13", "--at-offset", "15", str(part)]).text
    assert (
        "  ~ orders-1: isr [2,1] -> [1]  leader 2 -> 1  leaderEpoch 0 -> 1\n"
        "      partitionEpoch 0 -> 1  elr [] -> [2]\n" in text
    )
    assert all(len(line) <= 80 for line in text.splitlines())


def test_two_nodes_copies(tmp_path: Path) -> None:
    """Node b started from its snapshot, whose broker 2 has a rack the log never wrote."""
    a = sc.write(tmp_path / "a")
    b = sc.write(tmp_path / "b", snapshot=True)
    code, found = rows(str(a), str(b))
    assert code == 1
    assert [(d["section"], d["key"], d["before"]["rack"], d["after"]["rack"]) for d in found[:-1]] == [
        ("brokers", "2", None, "from-snapshot")
    ]
    code, found = rows(str(a), str(a))
    assert code == 0 and found == [found[-1]] and found[-1]["differences"] == 0
    assert run_cli(["metadata", "--diff", str(a), str(a)]).text.startswith("0 differences\n")


def test_usage(tmp_path: Path) -> None:
    part = sc.write(tmp_path)
    for args in (["--diff", str(part)], ["--at-offset", "1", "--at-offset", "2", str(part)]):
        r = run_cli(["metadata", *args])
        assert r.exit_code == 2 and r.text == "" and "Traceback" not in r.errtext, r.errtext
