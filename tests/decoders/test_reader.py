"""The message reader: version handling as Kafka's generated code does it, and its error texts."""

from __future__ import annotations

import pytest

from kseg.decoders import parser_for, schema
from kseg.decoders.decode import read
from kseg.decoders.encode import version_prefixed, write
from kseg.decoders.jvm import BufferUnderflowException, IllegalArgumentException, JavaException
from kseg.decoders.versions import NONE, Versions, branch
from kseg.decoders.wire import Reader, Writer
from kseg.format.releases import K39


def test_versions_parse_and_algebra() -> None:
    assert Versions.parse("3") == (3, 3)
    assert Versions.parse("1-4") == (1, 4)
    assert Versions.parse("2+") == (2, 32767)
    assert Versions.parse("none") == NONE and NONE.empty
    assert str(Versions.parse("2+")) == "2+" and str(NONE) == "none" and str(Versions(1, 4)) == "1-4"
    assert Versions(1, 4).subtract(Versions(1, 2)) == (3, 4)
    assert Versions(3, 32767).subtract(Versions(4, 32767)) == (3, 3)
    assert Versions(4, 32767).subtract(Versions(3, 32767)) == NONE
    assert Versions(1, 5).subtract(Versions(2, 4)) is None
    assert Versions(0, 4).intersect(Versions(3, 32767)) == (3, 4)


@pytest.mark.parametrize(
    "containing,possible,version,taken",
    [
        ("0+", "0-4", 9, True),  # covers every possible version: no test generated at all
        ("0", "0", 1, True),  # same: a "0"-only field is read at version 1 too
        ("3+", "0-4", 9, True),  # lower bound only: v >= 3
        ("3+", "0-4", 2, False),
        ("1", "0-4", 9, False),  # full range test: 1 <= v <= 1
        ("0-2", "0-4", 3, False),  # upper bound only: v <= 2
        ("0-2", "0-4", -1, True),
        ("none", "0-4", 1, False),
    ],
)
def test_branch_mirrors_version_conditional(containing: str, possible: str, version: int, taken: bool) -> None:
    assert branch(Versions.parse(containing), Versions.parse(possible), version)[0] is taken


def test_unknown_top_level_version_reads_like_kafka() -> None:
    # ShareSnapshotValue (4.0's layout) is valid only at 0 and all its fields are "0"; Kafka's generated
    # read has no version test left, so version 1 reads exactly like version 0 (up to 3.9: no version check)
    struct = schema.message("ShareSnapshotValue@4.0").struct
    v0 = struct.default_value() | {"snapshotEpoch": 3, "startOffset": 9}
    assert read(struct, write(struct, v0, 0), 1) == v0
    key = version_prefixed(
        schema.message("ShareSnapshotKey").struct, {"groupId": "g", "topicId": bytes(16), "partition": 0}, 0
    )
    value = b"\x00\x01" + write(struct, v0, 0)
    assert parser_for("share-group-state", K39).parse(0, key, value)[1] == (
        '{"type":"1","data":{"snapshotEpoch":3,"stateEpoch":0,"leaderEpoch":0,"startOffset":9,"stateBatches":[]}}'
    )


def test_unknown_version_of_an_inline_struct_is_rejected() -> None:
    # Inline structs do check: TopicMetadata's parent range is 0-0, its own 0+.
    struct = schema.message("ConsumerGroupPartitionMetadataValue").struct
    value = {"topics": [{"topicId": bytes(16), "topicName": "t", "numPartitions": 1, "partitionMetadata": []}]}
    data = write(struct, value, 0)
    with pytest.raises(JavaException) as info:
        read(struct, data, 1)
    assert info.value.get_message() == "Can't read version 1 of TopicMetadata"
    assert info.value.java_class == "org.apache.kafka.common.errors.UnsupportedVersionException"
    key = b"\x00\x04" + write(schema.message("ConsumerGroupPartitionMetadataKey").struct, {"groupId": "g"}, 4)
    assert parser_for("offsets", K39).parse(5, key, b"\x00\x01" + data) == (
        "Error at offset 5, skipping. Could not read record with version 1 from value's buffer due to: "
        "Can't read version 1 of TopicMetadata.",
        None,
    )


def test_future_offset_commit_value_reads_like_the_newest() -> None:
    struct = schema.message("OffsetCommitValue").struct
    value = {"offset": 1, "leaderEpoch": 2, "metadata": "m", "commitTimestamp": 3, "expireTimestamp": -1}
    key = b"\x00\x01" + write(schema.message("OffsetCommitKey").struct, {"group": "g", "topic": "t", "partition": 0}, 1)
    assert parser_for("offsets", K39).parse(0, key, b"\x00\x07" + write(struct, value, 4))[1] == (
        '{"version":"7","data":{"offset":1,"leaderEpoch":2,"metadata":"m","commitTimestamp":3}}'
    )


def _err(name: str, data: bytes, version: int = 0) -> str:
    with pytest.raises(JavaException) as info:
        read(schema.message(name).struct, data, version)
    return info.value.get_message()


def test_reader_error_texts() -> None:
    assert _err("ConsumerGroupMetadataKey", b"\x00", 3) == "null"  # BufferUnderflowException
    assert _err("ConsumerGroupMetadataKey", b"\xff\xff", 3) == "non-nullable field groupId was serialized as null"
    assert _err("ConsumerGroupMetadataKey", b"\x00\x05ab", 3) == (
        "Error reading byte array of 5 byte(s): only 2 byte(s) available"
    )
    # one unknown tagged field whose size runs past the end
    assert _err("ConsumerGroupMetadataValue", b"\x00\x00\x00\x01\x01\x05\x81\x80\x02") == (
        "Error reading byte array of 32769 byte(s): only 0 byte(s) available"
    )
    assert _err("TopicRecord", b"\x81\x80\x02") == "string field name had invalid length 32768"
    assert _err("PartitionRecord", b"\x00\x00\x00\x00" + bytes(16) + b"\x10") == (
        "Tried to allocate a collection of size 15, but there are only 0 bytes remaining."
    )
    # tag 1 (inControlledShutdown) is tagged only from version 1
    assert _err("BrokerRegistrationChangeRecord", bytes(12) + b"\x01\x01\x01\x01") == (
        "Tag 1 is not valid for version 0"
    )
    assert (
        read(schema.message("BrokerRegistrationChangeRecord").struct, bytes(12) + b"\x01\x01\x01\x01", 1)[
            "inControlledShutdown"
        ]
        == 1
    )


def test_tagged_fields_known_unknown_and_invalid() -> None:
    struct = schema.message("PartitionRecord").struct
    base = write(struct, struct.default_value(), 0)[:-1]  # drop the empty tagged-field section
    # unknown tag 99 is kept aside; tag 0 (leaderRecoveryState, int8) is read without checking its size
    data = base + b"\x02\x00\x01\x01\x63\x02\xaa\xbb"
    out = read(struct, data, 0)
    assert out["leaderRecoveryState"] == 1
    assert out["_unknownTaggedFields"] == [(99, b"\xaa\xbb")]
    with pytest.raises(JavaException, match="Error reading byte array of 9 byte"):
        read(struct, base + b"\x01\x63\x09\x00", 0)


def test_varint_limits() -> None:
    assert Reader(b"\xff\xff\xff\xff\x07").uvarint() == 2**31 - 1
    assert Reader(b"\xff\xff\xff\xff\x0f").uvarint() == -1  # a Java int: 0xFFFFFFFF
    with pytest.raises(IllegalArgumentException) as info:
        Reader(b"\xff\xff\xff\xff\xff").uvarint()
    assert info.value.get_message() == (
        "Varint is too long, the most significant bit in the 5th byte is set, converted value: ffffffff"
    )
    with pytest.raises(BufferUnderflowException):
        Reader(b"\x80").uvarint()
    w = Writer()
    w.uvarint(300)
    assert w.getvalue() == b"\xac\x02" and Reader(b"\xac\x02").uvarint() == 300


def test_writer_refuses_what_kafka_refuses() -> None:
    struct = schema.message("RegisterBrokerRecord").struct
    with pytest.raises(JavaException) as info:
        write(struct, struct.default_value() | {"inControlledShutdown": True}, 0)
    assert info.value.get_message() == "Attempted to write a non-default inControlledShutdown at version 0"
    struct = schema.message("OffsetCommitValue").struct
    value = struct.default_value() | {"expireTimestamp": 5}
    write(struct, value, 1)  # present in version 1
    write(struct, value, 3)  # ignorable: silently dropped
    with pytest.raises(JavaException, match="non-nullable field metadata"):
        write(struct, struct.default_value() | {"metadata": None}, 3)
