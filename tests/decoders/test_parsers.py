"""Each topic parser over every record type and version it knows, plus its error paths."""

from __future__ import annotations

import json
import random

import pytest

from kseg.decoders import parser_for, schema
from kseg.decoders.base import UncaughtJavaException
from kseg.decoders.control import control_record_text
from kseg.decoders.coordinator import SHARE_RECORD_TYPES, group_record_types, schema_name
from kseg.decoders.encode import version_prefixed, write
from kseg.decoders.jsonconv import dumps, to_tree
from kseg.decoders.metadata import snake_upper
from kseg.decoders.wire import Writer
from kseg.format import releases
from tests.decoders.samples import sample


def _coordinator_cases(types, release=releases.LATEST):
    for record_type, base in types.items():
        vm = schema.message(schema_name(base + "Value"))
        for v in range(vm.valid.lowest, vm.valid.highest + 1):
            yield release.name, record_type, base, v


def _group_cases():
    for release in (releases.K39, releases.K40, releases.LATEST):
        yield from _coordinator_cases(group_record_types(release), release)


@pytest.mark.parametrize("release,record_type,base,version", list(_group_cases()))
def test_offsets_every_record_type_and_value_version(release: str, record_type: int, base: str, version: int) -> None:
    """Every record type each release's serde knows (4.4: the StreamsGroup records, 16; 4.0: 9 too),
    at every value version: the key and value JSON with every field, tagged ones included."""
    rng = random.Random(f"{record_type}/{version}")
    ks = schema.message(schema_name(base + "Key")).struct
    vs = schema.message(schema_name(base + "Value")).struct
    key, value = sample(ks, record_type, rng), sample(vs, version, rng)
    rel = releases.release(release)
    key_text, value_text = parser_for("offsets", rel).parse(
        3, version_prefixed(ks, key, record_type), version_prefixed(vs, value, version)
    )
    assert key_text == dumps({"type": str(record_type), "data": to_tree(ks, key, record_type)})
    if base != "GroupMetadata":  # a tagged field newer than the release is not printed
        tree = schema.drop_newer_tagged(vs.message, to_tree(vs, value, version), rel.knows)
        assert value_text == dumps({"version": str(version), "data": tree})
    assert json.loads(value_text)["version"] == str(version)


@pytest.mark.parametrize("label,release", [("type", releases.K40), ("version", releases.LATEST)])
@pytest.mark.parametrize("layout", ["", "@4.0"])
@pytest.mark.parametrize("_,record_type,base,version", list(_coordinator_cases(SHARE_RECORD_TYPES)))
def test_share_state_every_record_type(
    _, record_type: int, base: str, version: int, layout: str, label: str, release
) -> None:
    """Both layouts of ShareSnapshotValue/ShareUpdateValue (4.0's, 4.1's: no version bump), each chosen
    by its bytes; the value envelope labelled ``type`` up to 4.0, ``version`` from 4.1."""
    rng = random.Random(f"share/{record_type}/{version}{layout}")
    ks, vs = schema.message(base + "Key").struct, schema.message(base + "Value" + layout).struct
    key, value = sample(ks, record_type, rng), sample(vs, version, rng)
    assert parser_for("share-group-state", release).parse(
        0, version_prefixed(ks, key, record_type), version_prefixed(vs, value, version)
    ) == (
        dumps({"type": str(record_type), "data": to_tree(ks, key, record_type)}),
        dumps(
            {
                label: str(version),
                "data": schema.drop_newer_tagged(vs.message, to_tree(vs, value, version), release.knows),
            }
        ),
    )


def test_offsets_key_errors() -> None:
    p = parser_for("offsets")
    assert p.parse(1, b"\x00", None) == ("Error at offset 1, skipping. Could not read version from key's buffer.", None)
    assert p.parse(1, b"\x00\x03\x00", None) == (
        "Error at offset 1, skipping. Could not read record with version 3 from key's buffer due to: null.",
        None,
    )
    assert p.parse(1, b"\x00\x03\x00\x01g", b"\x00") == (
        "Error at offset 1, skipping. Could not read version from value's buffer.",
        None,
    )
    assert p.parse(1, b"\xff\xff\x00\x01g", b"") == ("Unknown record type -1 at offset 1, skipping.", None)


def test_group_metadata_non_consumer_protocol_keeps_bytes() -> None:
    vs = schema.message("GroupMetadataValue").struct
    member = {
        "memberId": "m",
        "groupInstanceId": None,
        "clientId": "c",
        "clientHost": "h",
        "rebalanceTimeout": 1,
        "sessionTimeout": 2,
        "subscription": b"\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff",
        "assignment": b"",
    }
    value = {
        "protocolType": "other",
        "generation": 1,
        "protocol": None,
        "leader": None,
        "currentStateTimestamp": -1,
        "members": [member],
    }
    key = version_prefixed(schema.message("GroupMetadataKey").struct, {"group": "g"}, 2)
    text = parser_for("offsets").parse(0, key, version_prefixed(vs, value, 3))[1]
    assert '"subscription":"AAAAAAAA/////w==","assignment":""' in text
    # same bytes under "consumer": a v0 subscription with no topics and null user data
    value["protocolType"] = "consumer"
    text = parser_for("offsets").parse(0, key, version_prefixed(vs, value, 3))[1]
    assert '"subscription":{"topics":[],"userData":null},"assignment":""' in text


def _metadata_cases():
    for api_key, name in sorted(schema.metadata_names().items()):
        m = schema.message(name)
        for v in range(m.valid.lowest, m.valid.highest + 1):
            yield api_key, name, v


def _frame(api_key: int, version: int, body: bytes, frame: int = 1) -> bytes:
    w = Writer()
    w.uvarint(frame)
    w.uvarint(api_key)
    w.uvarint(version)
    return w.getvalue() + body


@pytest.mark.parametrize("api_key,name,version", list(_metadata_cases()))
def test_cluster_metadata_every_record_type_and_version(api_key: int, name: str, version: int) -> None:
    s = schema.message(name).struct
    value = sample(s, version, random.Random(f"{name}/{version}"))
    key, text = parser_for("cluster-metadata").parse(2, None, _frame(api_key, version, write(s, value, version)))
    assert key is None
    assert text == dumps({"type": snake_upper(name), "version": version, "data": to_tree(s, value, version)})


def test_metadata_type_names() -> None:
    names = {snake_upper(n) for n in schema.metadata_names().values()}
    assert {
        "TOPIC_RECORD",
        "ZK_MIGRATION_STATE_RECORD",
        "REGISTER_BROKER_RECORD",
        "NO_OP_RECORD",
        "CLEAR_ELR_RECORD",
        "UNREGISTER_CONTROLLER_RECORD",
    } <= names  # 28 (4.0), 29 (4.4)
    assert len(names) == 27


@pytest.mark.parametrize(
    "value,message",
    [
        (None, "Error while reading frame version"),
        (b"", "Error while reading frame version"),
        (
            b"\x00",
            "Could not deserialize metadata record with frame version 0. Note that upgrades from the "
            "preview release of KRaft in 2.8 to newer versions are not supported.",
        ),
        (
            b"\x02",
            "Could not deserialize metadata record due to unknown frame version 2(only frame version 1 is supported)",
        ),
        (b"\x01\x80\x80\x02", "Value for type was too large."),
        (b"\x01\x02", "Error while reading version"),
        (b"\x01\x63\x00", "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 99"),
        (b"\x01\x02\x00\x01", "Failed to deserialize record with type 2"),
        (b"\x01\x14\x00\x00\x07\x07", "Found 2 byte(s) of garbage after 20"),
    ],
)
def test_cluster_metadata_errors(value, message) -> None:
    assert parser_for("cluster-metadata").parse(9, None, value) == (None, f"Error at 9, skipping. {message}")


def test_control_snapshot_header_and_footer() -> None:
    header = schema.message("SnapshotHeaderRecord").struct
    data = write(header, {"version": 0, "lastContainedLogTimestamp": 1730000000000}, 0)
    assert control_record_text(3, b"\x00\x00\x00\x03", data) == (
        ' SnapshotHeader {"version":0,"lastContainedLogTimestamp":1730000000000}'
    )
    assert control_record_text(4, b"\x00\x00\x00\x04", b"\x00\x00\x00") == ' SnapshotFooter {"version":0}'
    assert control_record_text(0, b"\x00\x00\x00\x00", b"") is None
    assert control_record_text(2, b"\x00\x00\x00\x02", b"") is None
    with pytest.raises(UncaughtJavaException) as info:
        control_record_text(5, b"\x00\x00\x00\x05", b"\x00")
    assert info.value.jvm_line() == 'Exception in thread "main" java.nio.BufferUnderflowException'


def test_control_version_field_drives_the_json_version() -> None:
    # KRaftVersionRecord is read at version 0 but written at its own "version" field's value
    assert control_record_text(5, b"\x00\x00\x00\x05", b"\x00\x07\x00\x01\x00") == (
        ' KRaftVersion {"version":7,"kRaftVersion":1}'
    )


# -- remote log metadata ---------------------------------------------------------------------------


def _tip(name="foo", tid=b"\x01" * 16, partition=3):
    return {"name": name, "id": tid, "partition": partition}


def _remote(name: str, value: dict) -> str:
    s = schema.message(name).struct
    api_key = schema.message(name).api_key
    return parser_for("remote-log-metadata", releases.K39).parse(4, None, _frame(api_key, 0, write(s, value, 0)))[1]


def test_remote_segment_metadata_and_snapshot() -> None:
    seg = {
        "remoteLogSegmentId": {"topicIdPartition": _tip(), "id": b"\x02" * 16},
        "startOffset": 10,
        "endOffset": 20,
        "brokerId": 1,
        "maxTimestampMs": 5,
        "eventTimestampMs": 6,
        "segmentLeaderEpochs": [
            {"leaderEpoch": 3, "offset": 15},
            {"leaderEpoch": 1, "offset": 10},
            {"leaderEpoch": 3, "offset": 16},
        ],
        "segmentSizeInBytes": 100,
        "customMetadata": None,
        "remoteLogSegmentState": 1,
    }
    assert _remote("RemoteLogSegmentMetadataRecord", seg) == (
        "RemoteLogSegmentMetadata{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition="
        "AQEBAQEBAQEBAQEBAQEBAQ:foo-3, id=AgICAgICAgICAgICAgICAg}, startOffset=10, endOffset=20, brokerId=1, "
        "maxTimestampMs=5, eventTimestampMs=6, segmentLeaderEpochs={1=10, 3=16}, segmentSizeInBytes=100, "
        "customMetadata=Optional.empty, state=COPY_SEGMENT_FINISHED}"
    )
    snap = {k: v for k, v in seg.items() if k != "remoteLogSegmentId"} | {
        "segmentId": b"\x02" * 16,
        "customMetadata": b"ab",
    }
    assert _remote("RemoteLogSegmentMetadataSnapshotRecord", snap) == (
        "RemoteLogSegmentMetadataSnapshot{segmentId=AgICAgICAgICAgICAgICAg, startOffset=10, endOffset=20, "
        "maxTimestampMs=5, segmentLeaderEpochs={1=10, 3=16}, segmentSizeInBytes=100, "
        "customMetadata=Optional[CustomMetadata{2 bytes}], state=COPY_SEGMENT_FINISHED}"
    )
    err = "Error at offset 4, skipping. "
    assert _remote("RemoteLogSegmentMetadataRecord", seg | {"startOffset": -1}) == err + (
        "Unexpected start offset = -1. StartOffset for a remote segment cannot be negative"
    )
    assert _remote("RemoteLogSegmentMetadataRecord", seg | {"endOffset": 9}) == err + (
        "Unexpected end offset = 9. EndOffset for a remote segment cannot be less than startOffset = 10"
    )
    assert _remote("RemoteLogSegmentMetadataRecord", seg | {"segmentLeaderEpochs": []}) == err + (
        "segmentLeaderEpochs can not be null or empty"
    )
    assert _remote("RemoteLogSegmentMetadataRecord", seg | {"remoteLogSegmentState": 9}) == err + (
        "state can not be null"
    )


def test_remote_partition_delete_unknown_state_and_null_value() -> None:
    value = {"topicIdPartition": _tip(), "brokerId": 0, "eventTimestampMs": 1, "remotePartitionDeleteState": 7}
    assert _remote("RemotePartitionDeleteMetadataRecord", value) == "Error at offset 4, skipping. null"
    assert parser_for("remote-log-metadata", releases.K39).parse(4, None, None) == (
        None,
        (
            'Error at offset 4, skipping. Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value '
            'of "org.apache.kafka.common.record.Record.value()" is null'
        ),
    )
    assert parser_for("remote-log-metadata", releases.K39).parse(4, None, _frame(5, 0, b""))[1] == (
        "Error at offset 4, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 5"
    )


# -- transaction log -------------------------------------------------------------------------------


def _txn_value(version: int, **fields) -> bytes:
    s = schema.message("TransactionLogValue").struct
    value = (
        s.default_value()
        | {
            "producerId": 5,
            "producerEpoch": 2,
            "transactionTimeoutMs": 60000,
            "transactionLastUpdateTimestampMs": 123,
            "transactionPartitions": [],
        }
        | fields
    )
    return version_prefixed(s, value, version)


KEY = version_prefixed(schema.message("TransactionLogKey").struct, {"transactionalId": "tx-1"}, 0)


@pytest.mark.parametrize(  # Kafka's TransactionState ids, restated (not read from kseg.decoders.txnlog)
    "status,name",
    list(
        enumerate(
            [
                "Empty",
                "Ongoing",
                "PrepareCommit",
                "PrepareAbort",
                "CompleteCommit",
                "CompleteAbort",
                "Dead",
                "PrepareEpochFence",
            ]
        )
    ),
)
@pytest.mark.parametrize("version", [0, 1])
def test_transaction_states(status: int, name: str, version: int) -> None:
    parts = [{"topic": "b", "partitionIds": [1, 0]}, {"topic": "a", "partitionIds": [2]}]
    out = parser_for("transaction-log", releases.K39).parse(
        0, KEY, _txn_value(version, transactionStatus=status, transactionPartitions=parts)
    )
    expected_parts = "[]" if name == "Empty" else "[a-2,b-1,b-0]"  # Scala mutable.HashSet order
    assert out == (
        "transaction_metadata::transactionalId=tx-1",
        f"producerId:5,producerEpoch:2,state={name},partitions={expected_parts},"
        "txnLastUpdateTimestamp=123,txnTimeoutMs=60000",
    )


@pytest.mark.parametrize(
    "key,value,line",
    [
        (
            KEY,
            _txn_value(0, transactionStatus=8),
            "java.lang.IllegalStateException: Unknown transaction state id 8 from the transaction status message",
        ),
        (
            KEY,
            _txn_value(1, transactionStatus=1, clientTransactionVersion=3),
            "java.lang.IllegalArgumentException: No feature:transaction.version with feature level 3",
        ),
        (
            KEY,
            _txn_value(0, transactionStatus=1, transactionPartitions=None),
            'java.lang.NullPointerException: Cannot invoke "java.util.List.forEach(java.util.function.Consumer)" because '
            'the return value of "org.apache.kafka.coordinator.transaction.generated.TransactionLogValue.'
            'transactionPartitions()" is null',
        ),
        (KEY, b"\x00", "java.nio.BufferUnderflowException"),
        (
            b"\x00\x00\xff\xff",
            None,
            "java.lang.RuntimeException: non-nullable field transactionalId was serialized as null",
        ),
    ],
)
def test_transaction_log_failures_are_uncaught(key, value, line) -> None:
    with pytest.raises(UncaughtJavaException) as info:
        parser_for("transaction-log", releases.K39).parse(0, key, value)
    assert info.value.jvm_line() == f'Exception in thread "main" {line}'


def test_transaction_empty_state_ignores_partitions() -> None:
    out = parser_for("transaction-log", releases.K39).parse(
        0, KEY, _txn_value(0, transactionStatus=0, transactionPartitions=None)
    )[1]
    assert "state=Empty,partitions=[]," in out


def test_unknown_parser_name() -> None:
    from kseg.errors import UsageError

    with pytest.raises(UsageError):
        parser_for("nope")
