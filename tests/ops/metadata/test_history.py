"""``kseg metadata --history``: a partition's registration change by change, as the images Kafka publishes
show it (an aborted transaction's records never do), worked out by hand from the scenario's records
(tests/ops/metadata/scenario.py) and Kafka's ``PartitionRegistration.merge``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.ops.metadata import scenario as sc
from tests.ops.metadata.build import T0, Log, record
from tests.ops.metadata.test_replay import partition


@pytest.fixture(scope="module")
def part(tmp_path_factory) -> Path:
    return sc.write(tmp_path_factory.mktemp("history"), snapshot=True)


def rows(*args: str) -> tuple[int, list[dict]]:
    r = run_cli(["metadata", "--format", "json", *args])
    assert r.exit_code in (0, 1), r.errtext
    return r.exit_code, [json.loads(line) for line in r.text.splitlines()]


def test_a_partition_from_offset_0(part: Path) -> None:
    _, found = rows("--from-start", "--history", "orders-1", str(part))
    changes, summary = found[:-1], found[-1]
    created = partition(1, [2, 1], [2, 1], 2)
    moved = partition(1, [2, 1], [1], 1, 1, 1, elr=[2])
    assert [(c["offset"], c["time"], c["records"], c["before"], c["after"]) for c in changes] == [
        (
            13,
            T0 + 400,
            [{"offset": 9, "record": "TopicRecord"}, {"offset": 11, "record": "PartitionRecord"}],
            None,
            created,
        ),
        (15, T0 + 500, [{"offset": 15, "record": "PartitionChangeRecord"}], created, moved),
        (32, T0 + 1100, [{"offset": 32, "record": "RemoveTopicRecord"}], moved, None),
    ]
    assert {(c["topic"], c["topicId"], c["partition"], c["partitionId"]) for c in changes} == {
        ("orders", sc.b64(sc.ORDERS), "orders-1", 1)
    }
    assert summary == {
        "type": "history",
        "v": 3,
        "asked": "orders-1",
        "changes": 3,
        "offset": 39,
        "snapshot": None,
        "complete": True,
        "stoppedAt": None,
        "halted": None,
    }


def test_from_the_snapshot(part: Path) -> None:
    """Started from the snapshot: the partition is there from its image on, its records without offsets."""
    _, found = rows("--history", "orders", str(part))
    assert [(c["partitionId"], c["offset"], [r["offset"] for r in c["records"]]) for c in found[:-1]] == [
        (0, 20, [None, None]),
        (1, 20, [None, None]),
        (0, 32, [32]),
        (1, 32, [32]),
    ]


def test_transactions(part: Path) -> None:
    """committed-0 appears when its transaction ends (offset 28); aborted-0 never does."""
    _, found = rows("--from-start", "--history", "committed-0", str(part))
    (created,) = found[:-1]
    assert created["offset"] == 28 and [r["offset"] for r in created["records"]] == [26, 27]
    r = run_cli(["metadata", "--from-start", "--history", "aborted-0", str(part)])
    assert r.exit_code == 1
    assert "no topic aborted-0 (nor its partition) in the offsets replayed" in r.errtext
    assert r.text.startswith("History of aborted-0: 0 changes\n")


def test_clear_elr_and_a_topic_named_like_a_partition(tmp_path: Path) -> None:
    """ClearElrRecord with no name empties every ELR (a partition-epoch bump, leader epoch kept); ``t-1``
    names the topic ``t-1`` when no topic ``t`` exists."""
    tid = sc.uuid(7)
    lg = Log()
    lg.batch(
        record("TopicRecord", name="t-1", topicId=tid),
        record(
            "PartitionRecord",
            1,
            partitionId=0,
            topicId=tid,
            replicas=[1, 2],
            isr=[1],
            leader=1,
            leaderEpoch=3,
            partitionEpoch=5,
        ),
    )
    lg.batch(
        record("PartitionChangeRecord", 2, partitionId=0, topicId=tid, eligibleLeaderReplicas=[2], lastKnownElr=[3])
    )
    lg.batch(record("ClearElrRecord", topicName=""))
    directory = lg.write(tmp_path / "__cluster_metadata-0")
    code, found = rows("--history", "t-1", str(directory))
    assert code == 0
    after = [
        (c["offset"], c["after"]["elr"], c["after"]["lastKnownElr"], c["after"]["partitionEpoch"]) for c in found[:-1]
    ]
    assert after == [(1, [], [], 5), (2, [2], [3], 6), (3, [], [], 7)]
    assert found[-2]["after"]["leaderEpoch"] == 3 and found[-2]["records"] == [
        {"offset": 3, "record": "ClearElrRecord"}
    ]
    text = run_cli(["metadata", "--history", "t-1", str(directory)]).text
    assert "elr 2 -> -  last known elr 3 -> -  partition epoch 6 -> 7" in text
    assert all(len(line) <= 80 for line in text.splitlines())


def test_a_topic_brought_back_in_the_delta_that_removed_it() -> None:
    """A ``PartitionChangeRecord`` after the topic's ``RemoveTopicRecord`` in one batch brings the topic back
    from the delta's starting image (Kafka's ``TopicsDelta.getOrCreateTopicDelta``; the change before the
    removal is lost): the history names the record that made the change."""
    edge = Path(__file__).resolve().parents[2] / "data" / "metadata" / "logs" / "edge" / "__cluster_metadata-0"
    _, found = rows("--history", "t1-0", str(edge))
    change = found[1]
    assert change["offset"] == 14
    assert change["records"] == [
        {"offset": 12, "record": "PartitionChangeRecord"},
        {"offset": 13, "record": "RemoveTopicRecord"},
        {"offset": 14, "record": "PartitionChangeRecord"},
    ]
    assert (change["before"]["isr"], change["after"]["isr"]) == ([1, 2], [1, 2])  # offset 12's ISR lost
    assert (change["before"]["leader"], change["after"]["leader"]) == (1, 2)
