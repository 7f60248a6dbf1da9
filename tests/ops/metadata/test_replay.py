"""``kseg metadata`` on the scenario's log (tests/ops/metadata/scenario.py): the image at the end, at
offsets inside batches, inside and after metadata transactions, at control records, from a snapshot, and
stopped at damage -- each expectation worked out by hand from Kafka's ``*Delta`` classes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.ops.metadata import scenario as sc
from tests.ops.metadata.build import T0

MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"


def image(*args: str, code: int | None = None) -> dict:
    r = run_cli(["metadata", "--format", "json", *args])
    assert r.exit_code in (0, 1), (r.exit_code, r.errtext)
    if code is not None:
        assert r.exit_code == code, (r.exit_code, r.errtext)
    (line,) = r.text.splitlines()
    return json.loads(line)


def broker_1(**changes) -> dict:
    return {
        "id": 1,
        "epoch": 10,
        "incarnationId": sc.b64(sc.uuid(101)),
        "rack": "r1",
        "fenced": False,
        "inControlledShutdown": False,
        "endpoints": [  # by listener name, as BrokerRegistration's map keeps them
            {"name": "PLAINTEXT", "host": "b1", "port": 9092, "securityProtocol": "PLAINTEXT"},
            {"name": "SSL", "host": "b1", "port": 9093, "securityProtocol": "SSL"},
        ],
        "directories": [sc.b64(sc.uuid(201))],
        "cordonedDirectories": None,
        "supportedFeatures": {},
        **changes,
    }


def broker_2(**changes) -> dict:
    return {
        "id": 2,
        "epoch": 20,
        "incarnationId": sc.b64(sc.uuid(102)),
        "rack": None,
        "fenced": False,
        "inControlledShutdown": False,
        "endpoints": [],
        "directories": [],
        "cordonedDirectories": None,
        "supportedFeatures": {},
        **changes,
    }


CONTROLLER = {
    "id": 3000,
    "incarnationId": sc.b64(sc.uuid(103)),
    "endpoints": [{"name": "CONTROLLER", "host": "c1", "port": 9094, "securityProtocol": "PLAINTEXT"}],
    "zkMigrationReady": False,
    "supportedFeatures": {"kraft.version": {"min": 0, "max": 1}},
}


def partition(n: int, replicas, isr, leader, leader_epoch=0, partition_epoch=0, elr=(), **more) -> dict:
    return {
        "partition": n,
        "replicas": list(replicas),
        "isr": list(isr),
        "leader": leader,
        "leaderEpoch": leader_epoch,
        "partitionEpoch": partition_epoch,
        "removingReplicas": [],
        "addingReplicas": [],
        "elr": list(elr),
        "lastKnownElr": [],
        "directories": [MIGRATING] * len(replicas),  # no directories in v0 records: DirectoryId.MIGRATING
        "leaderRecoveryState": "RECOVERED",
        **more,
    }


# orders after offset 15: partition 0's ISR shrank (partition epoch 1, leader epoch kept); partition 1's
# leader moved to 1 (leader epoch 1, partition epoch 1) with broker 2 eligible (ELR)
ORDERS_15 = {
    "name": "orders",
    "id": sc.b64(sc.ORDERS),
    "partitions": [partition(0, [1, 2], [1], 1, 0, 1), partition(1, [2, 1], [1], 1, 1, 1, elr=[2])],
}
COMMITTED = {"name": "committed", "id": sc.b64(sc.COMMITTED), "partitions": [partition(0, [2], [2], 2)]}
BROKER_DEFAULT = {"resourceType": "BROKER", "resourceName": "", "configs": {"log.retention.ms": "5000"}}
ORDERS_CONFIG = {"resourceType": "TOPIC", "resourceName": "orders", "configs": {"retention.ms": "1000"}}
TEMP_CONFIG = {"resourceType": "TOPIC", "resourceName": "temp", "configs": {"cleanup.policy": "compact"}}
QUOTA = {"entity": {"user": "alice"}, "quotas": {"producer_byte_rate": 1024.0}}
ACL = {
    "id": sc.b64(sc.ACL_ID),
    "resourceType": "TOPIC",
    "resourceName": "orders",
    "patternType": "LITERAL",
    "principal": "User:alice",
    "host": "*",
    "operation": "READ",
    "permissionType": "ALLOW",
}
SCRAM = {"name": "alice", "mechanism": "SCRAM-SHA-256", "iterations": 8192}
TOKEN = {
    "tokenId": "tok1",
    "owner": "User:alice",
    "requester": "User:alice",
    "renewers": ["User:bob"],
    "issueTimestamp": 1,
    "maxTimestamp": 3,
    "expiryTimestamp": 2,
}


def sections(row: dict) -> dict:
    keep = ("offset", "epoch", "time", "features", "brokers", "controllers", "topics", "configs", "producerIds")
    return {k: row[k] for k in keep + ("acls", "clientQuotas", "scramUsers", "delegationTokens", "problems")}


AT_20 = {
    "offset": 20,
    "epoch": 1,
    "time": T0 + 600,
    "features": {"metadata.version": 21, "group.version": 1},  # kraft.version's FeatureLevelRecord skipped
    "brokers": [broker_1(), broker_2()],
    "controllers": [CONTROLLER],
    "topics": [ORDERS_15],
    "configs": [ORDERS_CONFIG, BROKER_DEFAULT],  # by ConfigResource.Type id (TOPIC 2, BROKER 4), then name
    "producerIds": {"nextProducerId": 5000},
    "acls": [ACL],
    "clientQuotas": [QUOTA],
    "scramUsers": [SCRAM],
    "delegationTokens": [TOKEN],
    "problems": [],
}
FINAL = {
    **AT_20,
    "offset": 39,
    "time": T0 + 1400,
    "features": {"metadata.version": 21},  # group.version set to 0: gone
    "brokers": [broker_1(inControlledShutdown=True), broker_2(fenced=True)],
    "topics": [COMMITTED],  # aborted: never applied; temp and orders: removed
    # orders' configs went with it (the delta's starting image held them); temp's did not: created in the
    # same delta, ConfigurationsDelta.replay(RemoveTopicRecord) finds no resource in the starting image
    "configs": [TEMP_CONFIG, BROKER_DEFAULT],
    "acls": [],
    "scramUsers": [],
    "problems": [
        {
            "offset": 39,
            "record": "FenceBrokerRecord",
            "message": "Tried to fence broker 9, but that broker was not registered.",
        }
    ],
}


@pytest.fixture(scope="module")
def log_only(tmp_path_factory) -> Path:
    return sc.write(tmp_path_factory.mktemp("log"))


@pytest.fixture(scope="module")
def with_snapshot(tmp_path_factory) -> Path:
    return sc.write(tmp_path_factory.mktemp("snap"), snapshot=True)


def test_the_whole_log(log_only: Path) -> None:
    row = image(str(log_only), code=1)  # the refused FenceBrokerRecord: a problem
    assert sections(row) == FINAL
    assert row["complete"] is True and row["stoppedAt"] is None and row["snapshot"] is None
    assert row["kraftVersion"] == 1 and row["openTransaction"] is None


def test_a_log_directory_holding_it(log_only: Path) -> None:
    assert sections(image(str(log_only.parent))) == FINAL


@pytest.mark.parametrize(
    "offset,expected",
    [
        (20, AT_20),
        # inside the aborted transaction: the image Kafka last published, offset 20
        (22, AT_20),
        (23, AT_20),
        # the abort: nothing of the transaction, the offset moves on
        (24, {**AT_20, "offset": 24, "time": T0 + 800}),
        (27, {**AT_20, "offset": 24, "time": T0 + 800}),
        (28, {**AT_20, "offset": 28, "time": T0 + 1000, "topics": [COMMITTED, ORDERS_15]}),
        # inside a batch: temp created, configured and removed, orders not yet removed
        (
            31,
            {
                **AT_20,
                "offset": 31,
                "time": T0 + 1100,
                "topics": [COMMITTED, ORDERS_15],
                "configs": [ORDERS_CONFIG, TEMP_CONFIG, BROKER_DEFAULT],
            },
        ),
        # the LeaderChange control batch: the image's offset and time only
        (
            33,
            {
                **AT_20,
                "offset": 33,
                "time": T0 + 1200,
                "topics": [COMMITTED],
                "configs": [TEMP_CONFIG, BROKER_DEFAULT],
            },
        ),
        (39, FINAL),
        (1000, FINAL),
    ],
)
def test_at_offset(log_only: Path, offset: int, expected: dict) -> None:
    assert sections(image("--at-offset", str(offset), str(log_only))) == expected


def test_inside_a_transaction_says_so(log_only: Path) -> None:
    row = image("--at-offset", "22", str(log_only))
    assert row["openTransaction"] == 21
    r = run_cli(["metadata", "--at-offset", "22", str(log_only)])
    assert "transaction begun at offset 21 has not ended by offset 22" in r.errtext


def test_at_time(log_only: Path) -> None:
    assert sections(image("--at-time", str(T0 + 650), str(log_only))) == AT_20
    assert image("--at-time", "2026-05-28T20:26:41.000Z", str(log_only))["offset"] == 28


def test_before_anything(log_only: Path) -> None:
    row = image("--at-time", str(T0 - 1), str(log_only))
    assert row["offset"] == -1 and row["topics"] == [] and row["brokers"] == []


def test_from_the_newest_snapshot(with_snapshot: Path) -> None:
    """The snapshot's broker 2 has a rack the log never wrote: the default image started from it."""
    row = image(str(with_snapshot))
    assert row["snapshot"].endswith("00000000000000000021-0000000001.checkpoint")
    assert sections(row) == {
        **FINAL,
        "brokers": [broker_1(inControlledShutdown=True), broker_2(fenced=True, rack="from-snapshot")],
    }
    assert sections(image("--from-start", str(with_snapshot))) == FINAL


def test_snapshot_only(with_snapshot: Path) -> None:
    row = image("--snapshot-only", str(with_snapshot), code=0)
    assert sections(row) == {**AT_20, "brokers": [broker_1(), broker_2(rack="from-snapshot")]}


def test_at_an_offset_before_the_snapshot(with_snapshot: Path) -> None:
    """The snapshot holds offset 20: at offset 19 the replay starts from the log's offset 0."""
    row = image("--at-offset", "19", str(with_snapshot))
    assert row["snapshot"] is None and row["offset"] == 19
    row = image("--at-offset", "20", str(with_snapshot))
    assert row["snapshot"] is not None and row["offset"] == 20


def test_log_head_deleted(tmp_path: Path) -> None:
    """The log from offset 21 and the snapshot: --from-start cannot be built (exit 2), the default can."""
    part = sc.write(tmp_path, snapshot=True, log_from=21)
    assert image(str(part))["offset"] == 39
    r = run_cli(["metadata", "--from-start", str(part)])
    assert r.exit_code == 2 and r.text == ""
    assert "starts at offset 21" in r.errtext and "Traceback" not in r.errtext


def test_secrets_never_shown(log_only: Path) -> None:
    for fmt in ("text", "json"):
        r = run_cli(["metadata", "--format", fmt, "--at-offset", "20", str(log_only)])
        out = r.text
        for secret in (sc.SALT, sc.STORED, sc.SERVER):
            assert secret.decode() not in out
            assert sc.b64(secret) not in out and secret.hex() not in out
    assert "credentials present" in run_cli(["metadata", "--at-offset", "20", str(log_only)]).text


def test_at_time_chooses_the_snapshot_by_its_header(with_snapshot: Path) -> None:
    """The snapshot's header says T0+600 (offset 20's batch): at T0+650 the replay starts from it, at T0+550
    (before it) from the log's offset 0."""
    row = image("--at-time", str(T0 + 650), str(with_snapshot))
    assert row["snapshot"] is not None and row["offset"] == 20 and row["time"] == T0 + 600
    row = image("--at-time", str(T0 + 550), str(with_snapshot))
    assert row["snapshot"] is None and row["offset"] == 15
