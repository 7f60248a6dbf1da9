"""Kafka's own test expectations, on bytes assembled by hand from the wire format.

Expected strings come from Kafka's ``DumpLogSegmentsTest``, ``TransactionLogTest``
and ``GroupCoordinatorRecordSerdeTest`` (at the corpus commit).  The input
bytes are built here field by field with :mod:`struct` -- not with kseg's
encoder -- following the message specs those tests serialise.
"""

from __future__ import annotations

import base64
import struct

import pytest

from kseg.decoders import parser_for
from kseg.decoders.base import UncaughtJavaException
from kseg.format.releases import K39, K40


class B:
    """Hand assembly of Kafka-encoded bytes."""

    def __init__(self) -> None:
        self.b = bytearray()

    def _pack(self, fmt: str, v):
        self.b += struct.pack(fmt, v)
        return self

    def i8(self, v):
        return self._pack(">b", v)

    def i16(self, v):
        return self._pack(">h", v)

    def u16(self, v):
        return self._pack(">H", v)

    def i32(self, v):
        return self._pack(">i", v)

    def i64(self, v):
        return self._pack(">q", v)

    def uv(self, v):
        while v >= 0x80:
            self.b.append((v & 0x7F) | 0x80)
            v >>= 7
        self.b.append(v)
        return self

    def s(self, text):  # classic string: int16 length
        raw = text.encode()
        self.i16(len(raw))
        self.b += raw
        return self

    def cs(self, text):  # compact string: uvarint length + 1
        raw = text.encode()
        self.uv(len(raw) + 1)
        self.b += raw
        return self

    def raw(self, data):
        self.b += data
        return self

    def __bytes__(self):
        return bytes(self.b)


def uuid(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "==")


# -- offsets decoder (DumpLogSegmentsTest.testOffsetsMessageParser) --------------------------------


def test_offsets_missing_key_is_kafkas_uncaught_runtime_exception() -> None:
    with pytest.raises(UncaughtJavaException) as info:
        parser_for("offsets", K40).parse(0, None, None)
    assert info.value.java_message == (
        "Failed to decode message at offset 0 using offset topic decoder (message had a missing key)"
    )
    assert info.value.jvm_line() == (
        'Exception in thread "main" java.lang.RuntimeException: Failed to decode '
        "message at offset 0 using offset topic decoder (message had a missing key)"
    )


def test_offsets_consumer_group_metadata() -> None:
    key = bytes(B().i16(3).s("group"))  # ConsumerGroupMetadataKey v3 (not flexible)
    value = bytes(B().i16(0).i32(10).uv(0))  # ConsumerGroupMetadataValue v0: epoch, no tagged fields
    assert parser_for("offsets", K40).parse(0, key, value) == (
        '{"type":"3","data":{"groupId":"group"}}',
        '{"version":"0","data":{"epoch":10}}',
    )
    assert parser_for("offsets", K40).parse(0, key, None) == ('{"type":"3","data":{"groupId":"group"}}', "<DELETE>")


def _group_metadata_value(subscription: bytes, assignment: bytes) -> bytes:
    # GroupMetadataValue v4 (first flexible version): compact strings/arrays/bytes + tagged fields
    return bytes(
        B()
        .i16(4)
        .cs("consumer")
        .i32(10)
        .cs("range")
        .cs("member")
        .i64(-1)
        .uv(2)  # members: 1 element
        .cs("member")
        .cs("instance")
        .cs("client")
        .cs("host")
        .i32(1000)
        .i32(100)
        .uv(len(subscription) + 1)
        .raw(subscription)
        .uv(len(assignment) + 1)
        .raw(assignment)
        .uv(0)  # member tagged fields
        .uv(0)  # value tagged fields
    )


def test_offsets_group_metadata_expands_the_consumer_protocol() -> None:
    # ConsumerProtocolSubscription v3 / ConsumerProtocolAssignment v3, as ConsumerProtocol serialises them
    subscription = bytes(B().i16(3).i32(1).s("foo").i32(-1).i32(1).s("foo").i32(1).i32(0).i32(0).s("rack"))
    assignment = bytes(B().i16(3).i32(1).s("foo").i32(1).i32(0).i32(-1))
    key = bytes(B().i16(2).s("group"))
    assert parser_for("offsets", K40).parse(0, key, _group_metadata_value(subscription, assignment)) == (
        '{"type":"2","data":{"group":"group"}}',
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],'
        '"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],'
        '"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
        '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}',
    )


def test_offsets_group_metadata_keeps_malformed_protocol_bytes() -> None:
    key = bytes(B().i16(2).s("group"))
    value = _group_metadata_value(b"Subscription", b"Assignment")
    assert parser_for("offsets", K40).parse(0, key, value)[1] == (
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":"U3Vic2NyaXB0aW9u",'
        '"assignment":"QXNzaWdubWVudA=="}]}}'
    )


def test_offsets_unknown_record_type() -> None:
    key = bytes(B().i16(32767).s("group"))
    value = bytes(B().i16(0).i32(10).uv(0))
    assert parser_for("offsets", K40).parse(0, key, value) == ("Unknown record type 32767 at offset 0, skipping.", None)


def test_offsets_value_that_does_not_match_the_record_type() -> None:
    # A default ConsumerGroupMemberMetadataValue v0 (six empty compact strings/arrays, rebalanceTimeoutMs -1,
    # an empty serverAssignor, no tagged fields) read as type 3's value: the tagged-field size runs into the -1
    key = bytes(B().i16(3).s("group"))
    value = bytes(B().i16(0).uv(1).uv(1).uv(1).uv(1).uv(1).uv(1).i32(-1).uv(1).uv(0))
    assert parser_for("offsets", K40).parse(0, key, value) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
        "Error reading byte array of 536870911 byte(s): only 1 byte(s) available.",
        None,
    )


# -- share group state decoder (DumpLogSegmentsTest.testShareGroupStateMessageParser) ---------------

TOPIC_ID = "Uj5wn_FqTXirEASvVZRY1w"


def _share_key(record_type: int, group: str = "gs1") -> bytes:
    return bytes(B().i16(record_type).s(group).raw(uuid(TOPIC_ID)).i32(0))


def _snapshot_value() -> bytes:
    # ShareSnapshotValue v0 (flexible): snapshotEpoch, stateEpoch, leaderEpoch, startOffset, stateBatches
    return bytes(B().i16(0).u16(0).i32(0).i32(0).i64(0).uv(2).i64(0).i64(4).i8(2).i16(1).uv(0).uv(0))


def test_share_state_missing_key() -> None:
    with pytest.raises(UncaughtJavaException) as info:
        parser_for("share-group-state", K40).parse(0, None, None)
    assert info.value.java_message == (
        "Failed to decode message at offset 0 using share group state topic decoder (message had a missing key)"
    )


def test_share_state_snapshot_and_update() -> None:
    parser = parser_for("share-group-state", K40)
    assert parser.parse(0, _share_key(0), _snapshot_value()) == (
        '{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}',
        '{"type":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}',
    )
    update = bytes(B().i16(0).u16(0).i32(0).i64(0).uv(2).i64(0).i64(4).i8(2).i16(1).uv(0).uv(0))
    assert parser.parse(0, _share_key(1), update) == (
        '{"type":"1","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}',
        '{"type":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}',
    )
    assert parser.parse(0, _share_key(0), None)[1] == "<DELETE>"


def test_share_state_unknown_type_and_mismatched_value() -> None:
    parser = parser_for("share-group-state", K40)
    assert parser.parse(0, _share_key(32767, "group"), _snapshot_value()) == (
        "Unknown record type 32767 at offset 0, skipping.",
        None,
    )
    empty_snapshot = bytes(B().i16(0).u16(0).i32(0).i32(0).i64(0).uv(1).uv(0))
    assert parser.parse(0, _share_key(1, "group"), empty_snapshot) == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
        "non-nullable field stateBatches was serialized as null.",
        None,
    )


# -- transaction log (TransactionLogTest) -----------------------------------------------------------


def _txn_key(tid: str) -> bytes:
    return bytes(B().i16(0).s(tid))


def test_transaction_metadata_parsing() -> None:
    # TransactionLogTest.testTransactionMetadataParsing: TV_2 -> value version 1 (flexible)
    value = bytes(
        B()
        .i16(1)
        .i64(1334)
        .i16(0)
        .i32(1000)
        .i8(1)
        .uv(2)
        .cs("topic")
        .uv(2)
        .i32(0)
        .uv(0)  # [{topic, [0]}]
        .i64(0)
        .i64(0)
        .uv(3)
        .uv(0)
        .uv(8)
        .i64(-1)
        .uv(1)
        .uv(8)
        .i64(-1)
        .uv(2)
        .uv(2)
        .i16(2)
    )  # tagged 0, 1, 2
    key_text, value_text = parser_for("transaction-log", K39).parse(0, _txn_key("id"), value)
    assert key_text == "transaction_metadata::transactionalId=id"
    assert value_text == (
        "producerId:1334,producerEpoch:0,state=Ongoing,partitions=[topic-0],txnLastUpdateTimestamp=0,txnTimeoutMs=1000"
    )


def test_transaction_tombstone_and_unknown_key() -> None:
    parser = parser_for("transaction-log", K39)
    assert parser.parse(0, _txn_key("id"), None) == ("transaction_metadata::transactionalId=id", "<DELETE>")
    assert parser.parse(0, bytes(B().i16(32767).s("")), None) == ("unknown::version=32767", None)


def test_transaction_future_value_with_unknown_tagged_fields() -> None:
    # TransactionLogTest.testDeserializeFutureTransactionLogValue: extra tags 100 ("foo") and 101 (4000)
    partitions = B().uv(2).cs("topic").uv(2).i32(1).uv(2).uv(100).uv(5).s("foo").uv(101).uv(4).i32(4000)
    value = bytes(
        B()
        .i16(1)
        .i64(1000)
        .i16(100)
        .i32(1000)
        .i8(4)
        .raw(bytes(partitions))
        .i64(2000)
        .i64(3000)
        .uv(2)
        .uv(100)
        .uv(5)
        .s("foo")
        .uv(101)
        .uv(4)
        .i32(4000)
    )
    assert parser_for("transaction-log", K39).parse(0, _txn_key("transaction-id"), value)[1] == (
        "producerId:1000,producerEpoch:100,state=CompleteCommit,partitions=[topic-1],"
        "txnLastUpdateTimestamp=2000,txnTimeoutMs=1000"
    )


def test_transaction_unknown_value_version_kills_the_tool() -> None:
    with pytest.raises(UncaughtJavaException) as info:
        parser_for("transaction-log", K39).parse(7, _txn_key("id"), bytes(B().i16(5)))
    assert info.value.jvm_line() == (
        'Exception in thread "main" java.lang.IllegalStateException: '
        "Unknown version 5 from the transaction log message value"
    )


# -- remote log metadata (DumpLogSegmentsTest.testDumpRemoteLogMetadata*) ---------------------------


def test_remote_partition_delete_and_segment_update() -> None:
    topic_id, segment_id = "ZQmzJEk4QJ2nrjTvrsAu0w", "AAAAAAAAAAAAAAAAAAAAAQ"
    tip = B().cs("foo").raw(uuid(topic_id)).i32(0).uv(0)  # TopicIdPartitionEntry
    delete = bytes(B().uv(1).uv(2).uv(0).raw(bytes(tip)).i32(0).i64(0).i8(0).uv(0))
    parser = parser_for("remote-log-metadata", K39)
    assert parser.parse(0, None, delete) == (
        None,
        (
            f"RemotePartitionDeleteMetadata{{topicPartition={topic_id}:foo-0, state=DELETE_PARTITION_MARKED, "
            "eventTimestampMs=0, brokerId=0}"
        ),
    )
    update = bytes(
        B()
        .uv(1)
        .uv(1)
        .uv(0)
        .raw(bytes(tip))
        .raw(uuid(segment_id))
        .uv(0)  # RemoteLogSegmentIdEntry
        .i32(0)
        .i64(0)
        .uv(5)
        .raw(b"\x00\x01\x02\x03")
        .i8(1)
        .uv(0)
    )
    assert parser.parse(0, None, update) == (
        None,
        (
            "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=RemoteLogSegmentId{"
            f"topicIdPartition={topic_id}:foo-0, "
            f"id={segment_id}}}, customMetadata=Optional[CustomMetadata{{4 bytes}}], state=COPY_SEGMENT_FINISHED, "
            "eventTimestampMs=0, brokerId=0}"
        ),
    )


def test_remote_corrupted_value() -> None:
    # DumpLogSegmentsTest.testDumpRemoteLogMetadataWithCorruption: value "corrupted"
    assert parser_for("remote-log-metadata", K39).parse(0, None, b"corrupted") == (
        None,
        "Error at offset 0, skipping. Could not deserialize metadata record due to unknown frame version "
        "99(only frame version 1 is supported)",
    )
