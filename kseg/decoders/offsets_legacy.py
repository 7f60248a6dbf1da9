"""``--offsets-decoder`` of Kafka 2.8-3.7: ``GroupMetadataManager.formatRecordKeyAndValue``.

Kafka 3.8 replaced it (KAFKA-16470) with the JSON of :mod:`kseg.decoders.coordinator`.
Facts from ``core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala``
and ``GroupMetadata.scala`` (branch 3.7, ``7fdfeb12``):

* no key: ``KafkaException`` "Failed to decode message using offset topic decoder
  (message had a missing key)", uncaught (the tool dies);
* key = version int16 | message (``readMessageKey``): 0-1 ``OffsetCommitKey``
  -> ``offset_commit::group=G,partition=T-P``; 2 ``GroupMetadataKey`` ->
  ``group_metadata::group=G``; any other version ``unknown::version=V`` and no
  payload (the KIP-848 records, types 3-8, print so);
* an offset value (versions 0-4, else ``IllegalStateException`` "Unknown offset
  message version: V") prints ``offset=N`` or ``offset=N,metadata=M``;
* a group value (versions 0-4, else "Unknown group metadata message version: V")
  prints Jackson's ``{"protocolType":..,"protocol":..,"generationId":..,"assignment":"{..}"}``;
  ``assignment`` joins ``memberId=<partitions>`` (``consumer`` groups:
  ``ConsumerProtocol.deserializeAssignment``'s ``[t-0, t-1]``, then ``:HEX`` of
  non-empty user data, ``BigInt``'s upper-case hex without leading zeros) or
  ``memberId=HEX`` of the assignment bytes, in the order of the group's Scala
  2.13 ``mutable.HashMap`` of members (:func:`scala_hashmap_order`);
* a tombstone prints ``<DELETE>``.  Every other failure is uncaught.

Loading a ``consumer`` group also parses each member's subscription at version
0 (``computeSubscribedTopics``); a ``SchemaException`` there is logged as a WARN
(with a timestamp, not reproduced) and ignored, any other failure is uncaught.
"""

from __future__ import annotations

from kseg.decoders import schema
from kseg.decoders.base import UncaughtJavaException
from kseg.decoders.decode import read
from kseg.decoders.jsonconv import dumps
from kseg.decoders.jvm import (
    BufferUnderflowException,
    IllegalStateException,
    JavaException,
    int32,
    java_string_hash,
)
from kseg.decoders.wire import Reader
from kseg.format import releases
from kseg.format.releases import Release

CONSUMER = "consumer"
#: ``HIGHEST_SUPPORTED_VERSION`` of 3.7's generated classes
_VALUE_VERSIONS = {"OffsetCommitValue": 4, "GroupMetadataValue": 4}
_ASSIGNMENT_HIGHEST = 3


class KafkaException(JavaException):
    java_class = "org.apache.kafka.common.KafkaException"


class SchemaException(JavaException):
    java_class = "org.apache.kafka.common.protocol.types.SchemaException"


def scala_hashmap_order(keys: list[str]) -> list[str]:
    """The iteration order of a Scala 2.13 ``mutable.HashMap[String, _]`` after ``put`` of ``keys`` in order.

    16 buckets to start, load factor 0.75; before each ``put``, ``size + 1 >= threshold`` doubles the
    table; a key's bucket is ``improved & (len - 1)`` with ``improved = h ^ (h >>> 16)`` of its
    ``hashCode``; a bucket keeps its keys sorted by ``improved`` (signed; equal ones in insertion
    order) and a re-put keeps its place.  Iteration walks the buckets in order.
    """
    length, threshold, size = 16, 12, 0
    seen: dict[str, tuple[int, int]] = {}
    for k in keys:
        if size + 1 >= threshold:
            length *= 2
            threshold = int(length * 0.75)
        if k not in seen:
            h = java_string_hash(k) & 0xFFFFFFFF
            seen[k] = (int32(h ^ (h >> 16)), size)
            size += 1
    mask = length - 1
    return sorted(seen, key=lambda k: (seen[k][0] & mask, seen[k][0], seen[k][1]))


def _hex(data: bytes) -> str:
    """``"%X".format(BigInt(1, bytes))``; empty bytes are ``""``."""
    return "" if not data else f"{int.from_bytes(data, 'big'):X}"


def _read(name: str, r: Reader, version: int) -> dict:
    return read(schema.message(name).struct, r, version)


def _assignment_text(member_id: str, data: bytes) -> str:
    """``ConsumerProtocol.deserializeAssignment`` and the ``memberId=[t-0, t-1](:HEX)`` text."""
    r = Reader(data)
    try:
        version = r.int16()
    except BufferUnderflowException:
        raise SchemaException("Buffer underflow while parsing consumer protocol's header") from None
    if version < 0:
        raise SchemaException(f"Unsupported assignment version: {version}")
    try:
        a = _read("ConsumerProtocolAssignment", r, min(version, _ASSIGNMENT_HIGHEST))
    except BufferUnderflowException:
        raise SchemaException("Buffer underflow while parsing consumer protocol's assignment") from None
    parts = [f"{tp['topic']}-{p}" for tp in a["assignedPartitions"] for p in tp["partitions"]]
    text = f"{member_id}=[{', '.join(parts)}]"
    user_data = _hex(bytes(a["userData"])) if a["userData"] is not None else ""
    return f"{text}:{user_data}" if user_data else text


def _check_subscriptions(members: list[dict]) -> None:
    """``computeSubscribedTopics``: each subscription read at version 0; a ``SchemaException`` ends it."""
    for m in members:
        r = Reader(m["subscription"])
        try:
            r.int16()
            _read("ConsumerProtocolSubscription", r, 0)
        except BufferUnderflowException:
            return  # ConsumerProtocol turns it into a SchemaException: logged, ignored


def _group_text(group: str, value: bytes, kafka_28: bool = False) -> str:
    r = Reader(value)
    version = r.int16()
    if not 0 <= version <= (3 if kafka_28 else _VALUE_VERSIONS["GroupMetadataValue"]):
        raise IllegalStateException(f"Unknown group metadata message version: {version}")
    v = _read("GroupMetadataValue", r, version)
    by_id: dict[str, dict] = {}
    static: set[str] = set()
    for m in v["members"]:
        instance = m.get("groupInstanceId")
        if instance is not None and not kafka_28:  # 2.8's addStaticMember replaces without a check
            if instance in static:
                raise IllegalStateException(
                    f"Static member with groupInstanceId={instance} cannot be added to "
                    f"group {group} since it is already a member"
                )
            static.add(instance)
        by_id[m["memberId"]] = m
    members = [by_id[k] for k in scala_hashmap_order([m["memberId"] for m in v["members"]])]
    protocol_type = v["protocolType"]
    if protocol_type == CONSUMER and members and v["protocol"] is not None:
        _check_subscriptions(members)
    if protocol_type == CONSUMER:
        texts = [_assignment_text(m["memberId"], bytes(m["assignment"])) for m in members]
    else:
        texts = [f"{m['memberId']}={_hex(bytes(m['assignment']))}" for m in members]
    out = {
        "protocolType": protocol_type,
        "protocol": v["protocol"],
        "generationId": v["generation"],
        "assignment": "{" + ",".join(texts) + "}",
    }
    return dumps(out)


def _offset_text(value: bytes, highest: int | None = None) -> str:
    r = Reader(value)
    version = r.int16()
    if not 0 <= version <= (highest if highest is not None else _VALUE_VERSIONS["OffsetCommitValue"]):
        raise IllegalStateException(f"Unknown offset message version: {version}")
    v = _read("OffsetCommitValue", r, version)
    return f"offset={v['offset']}" + (f",metadata={v['metadata']}" if v["metadata"] else "")


def format_record_key_and_value(
    key: bytes | None, value: bytes | None, kafka_28: bool = False
) -> tuple[str, str | None]:
    """``GroupMetadataManager.formatRecordKeyAndValue``; raises :class:`JavaException` where Kafka throws.

    ``kafka_28``: Kafka 2.8's classes (``GroupMetadataManager.scala@3893458``): an unknown key version is
    ``IllegalStateException`` "Unknown group metadata message version: V" and the values know versions 0-3."""
    if key is None:
        raise KafkaException("Failed to decode message using offset topic decoder (message had a missing key)")
    r = Reader(key)
    version = r.int16()
    if version in (0, 1):
        k = _read("OffsetCommitKey", r, 0)
        key_text = f"offset_commit::group={k['group']},partition={k['topic']}-{k['partition']}"
        return key_text, "<DELETE>" if value is None else _offset_text(value, 3 if kafka_28 else None)
    if version == 2:
        group = _read("GroupMetadataKey", r, 0)["group"]
        key_text = f"group_metadata::group={group}"
        return key_text, "<DELETE>" if value is None else _group_text(group, value, kafka_28)
    if kafka_28:
        raise IllegalStateException(f"Unknown group metadata message version: {version}")
    return f"unknown::version={version}", None


class LegacyOffsetsMessageParser:
    """``--offsets-decoder`` of Kafka 3.0-3.7 (``DumpLogSegments.OffsetsMessageParser`` calling
    ``GroupMetadataManager.formatRecordKeyAndValue``)."""

    def __init__(self, release: Release = releases.LATEST) -> None:
        self.release = release

    def parse(self, offset: int, key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
        try:
            return format_record_key_and_value(key, value, self.release.coordinator_28)
        except JavaException as exc:
            raise UncaughtJavaException(exc, offset) from None
