"""``kseg.decoders.offsets_legacy``: Kafka 3.0-3.7's ``GroupMetadataManager.formatRecordKeyAndValue``
(``core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala@7fdfeb12``, 3.7)."""

from __future__ import annotations

import pytest

from kseg.decoders import parser_for, schema
from kseg.decoders.base import UncaughtJavaException
from kseg.decoders.encode import version_prefixed, write
from kseg.decoders.offsets_legacy import (
    LegacyOffsetsMessageParser,
    _hex,
    scala_hashmap_order,
)
from kseg.format.releases import K37, K38


def _struct(name: str):
    return schema.message(name).struct


def _key(version: int, name: str, value: dict) -> bytes:
    """int16 ``version`` (the record type) then the key message (one layout for versions 0-2)."""
    return version.to_bytes(2, "big", signed=True) + write(_struct(name), value, 0)


def _assignment(partitions: list[tuple[str, list[int]]], user_data: bytes | None = None, version: int = 3) -> bytes:
    value = {"assignedPartitions": [{"topic": t, "partitions": ps} for t, ps in partitions], "userData": user_data}
    return version_prefixed(_struct("ConsumerProtocolAssignment"), value, version)


def _subscription(topics: list[str]) -> bytes:
    return version_prefixed(_struct("ConsumerProtocolSubscription"), {"topics": topics, "userData": None}, 0)


def _member(member_id: str, assignment: bytes, subscription: bytes | None = None) -> dict:
    if subscription is None:
        subscription = _subscription([])
    return {
        "memberId": member_id,
        "groupInstanceId": None,
        "clientId": "c",
        "clientHost": "/h",
        "rebalanceTimeout": 1,
        "sessionTimeout": 1,
        "subscription": subscription,
        "assignment": assignment,
    }


def _group(
    members: list[dict], protocol_type: str = "consumer", protocol: str | None = "range", version: int = 3
) -> bytes:
    value = _struct("GroupMetadataValue").default_value() | {
        "protocolType": protocol_type,
        "generation": 7,
        "protocol": protocol,
        "leader": None,
        "currentStateTimestamp": -1,
        "members": members,
    }
    return version_prefixed(_struct("GroupMetadataValue"), value, version)


def _parse(key: bytes | None, value: bytes | None) -> tuple:
    return LegacyOffsetsMessageParser(K37).parse(9, key, value)


GROUP_KEY = _key(2, "GroupMetadataKey", {"group": "g"})


def test_parser_for_picks_the_legacy_text_before_38_only() -> None:
    assert type(parser_for("offsets", K37)).__name__ == "LegacyOffsetsMessageParser"
    assert type(parser_for("offsets", K38)).__name__ == "OffsetsMessageParser"


@pytest.mark.parametrize("key_version", [0, 1])
def test_offset_commit(key_version: int) -> None:
    key = _key(key_version, "OffsetCommitKey", {"group": "g", "topic": "t", "partition": 3})
    vs = _struct("OffsetCommitValue")
    value = version_prefixed(vs, vs.default_value() | {"offset": 5, "metadata": ""}, 3)
    assert _parse(key, value) == ("offset_commit::group=g,partition=t-3", "offset=5")
    value = version_prefixed(vs, vs.default_value() | {"offset": 5, "metadata": "m, x"}, 1)
    assert _parse(key, value) == ("offset_commit::group=g,partition=t-3", "offset=5,metadata=m, x")
    assert _parse(key, None) == ("offset_commit::group=g,partition=t-3", "<DELETE>")


@pytest.mark.parametrize("version", [3, 4, 5, 16, 99, -1])
def test_other_key_versions_are_unknown_without_payload(version: int) -> None:
    assert _parse(version.to_bytes(2, "big", signed=True) + b"\x00\x01x", b"\x00\x00") == (
        f"unknown::version={version}",
        None,
    )


def test_consumer_group_assignment_text() -> None:
    members = [_member("m", _assignment([("orders", [0, 1]), ("pay", [2])], b"\x00\x01\xab"))]
    assert _parse(GROUP_KEY, _group(members)) == (
        "group_metadata::group=g",
        (
            '{"protocolType":"consumer","protocol":"range","generationId":7,'
            '"assignment":"{m=[orders-0, orders-1, pay-2]:1AB}"}'
        ),
    )
    # no user data / empty user data: no ":"; a null protocol is JSON null; an assignment of version 9 is
    # read as version 3 (checkAssignmentVersion)
    members = [_member("m", _assignment([("t", [0])], b"", version=9))]
    assert _parse(GROUP_KEY, _group(members, protocol=None))[1] == (
        '{"protocolType":"consumer","protocol":null,"generationId":7,"assignment":"{m=[t-0]}"}'
    )
    assert _parse(GROUP_KEY, None) == ("group_metadata::group=g", "<DELETE>")


def test_other_protocols_print_the_assignment_in_hex() -> None:
    members = [_member("w1", b"\x04\x05"), _member("w2", b"")]
    assert _parse(GROUP_KEY, _group(members, "connect", "sessioned"))[1] == (
        '{"protocolType":"connect","protocol":"sessioned","generationId":7,"assignment":"{w1=405,w2=}"}'
    )


def test_hex_is_bigints() -> None:
    assert [_hex(b""), _hex(b"\x00"), _hex(b"\x00\x0f"), _hex(b"\xff\x01")] == ["", "0", "F", "FF01"]


def test_members_in_scala_hashmap_order() -> None:
    """ "a" (hash 97) and "q" (113) share bucket 1 of 16 and sort by hash; "b" (98) is bucket 2;
    with 12 keys the table is 32 long and "q" moves to bucket 17."""
    assert scala_hashmap_order(["q", "b", "a"]) == ["a", "q", "b"]
    assert scala_hashmap_order(["b", "a", "b"]) == ["a", "b"]
    keys = ["q", "a", *[chr(c) for c in range(ord("c"), ord("c") + 10)]]  # 12 keys: 98+ -> buckets 3-12
    assert scala_hashmap_order(keys) == ["a", *keys[2:], "q"]
    members = [_member(k, b"\x01") for k in ("q", "b", "a")]
    assert _parse(GROUP_KEY, _group(members, "x"))[1].endswith('"assignment":"{a=1,q=1,b=1}"}')


@pytest.mark.parametrize(
    "key,value,message",
    [
        (
            None,
            b"",
            (
                "org.apache.kafka.common.KafkaException: Failed to decode message using offset topic decoder "
                "(message had a missing key)"
            ),
        ),
        (GROUP_KEY, b"\x00\x05", "java.lang.IllegalStateException: Unknown group metadata message version: 5"),
        (
            _key(1, "OffsetCommitKey", {"group": "g", "topic": "t", "partition": 0}),
            b"\x00\x05",
            "java.lang.IllegalStateException: Unknown offset message version: 5",
        ),
        (
            _key(1, "OffsetCommitKey", {"group": "g", "topic": "t", "partition": 0}),
            b"\x00\x03\x00",
            "java.nio.BufferUnderflowException",
        ),
        (
            GROUP_KEY,
            _group([_member("m", b"\x00")]),
            (
                "org.apache.kafka.common.protocol.types.SchemaException: "
                "Buffer underflow while parsing consumer protocol's header"
            ),
        ),
        (
            GROUP_KEY,
            _group([_member("m", b"\xff\xff")]),
            "org.apache.kafka.common.protocol.types.SchemaException: Unsupported assignment version: -1",
        ),
        (
            GROUP_KEY,
            _group([_member("m", b"\x00\x00\x00\x00\x00\x01\x00")]),
            (
                "org.apache.kafka.common.protocol.types.SchemaException: "
                "Buffer underflow while parsing consumer protocol's assignment"
            ),
        ),
        (
            GROUP_KEY,
            _group([_member("m", _assignment([]), subscription=b"\x00\x00\x7f\x00\x00\x00")]),
            (
                "java.lang.RuntimeException: Tried to allocate a collection of size 2130706432, "
                "but there are only 0 bytes remaining."
            ),
        ),
    ],
)
def test_what_kills_kafkas_tool(key: bytes | None, value: bytes, message: str) -> None:
    with pytest.raises(UncaughtJavaException) as info:
        _parse(key, value)
    assert message in str(info.value)


def test_a_bad_subscription_is_ignored() -> None:
    """computeSubscribedTopics logs a SchemaException (a truncated subscription) and goes on."""
    members = [_member("m", _assignment([("t", [0])]), subscription=b"\x00")]
    assert _parse(GROUP_KEY, _group(members))[1].endswith('"assignment":"{m=[t-0]}"}')
    members = [_member("m", _assignment([("t", [0])]), subscription=_subscription(["t"]))]
    assert _parse(GROUP_KEY, _group(members))[1].endswith('"assignment":"{m=[t-0]}"}')
