"""``--offsets-decoder`` and ``--share-group-state-decoder``.

Record format (Kafka's ``CoordinatorRecordSerde``)::

    key   = record_type int16 | key message   (read with version = record_type)
    value = value_version int16 | value message, or null (a tombstone)

The record type picks the key and value message classes
(``GroupCoordinatorRecordSerde`` / ``ShareCoordinatorRecordSerde``).  Trailing
bytes after either message are ignored.  Error texts, as the serde throws them:

* key shorter than 2 bytes: "Could not read version from key's buffer."
* unknown record type N: ``UnknownRecordTypeException`` (the tool prints
  "Unknown record type N at offset M, skipping.")
* a read failure: "Could not read record with version V from key's buffer
  due to: <message>." (``value's`` for the value).

Per Kafka release (:mod:`kseg.format.releases`): which record types the serde
knows (3.9: 0-8; 4.0: 0-16; 4.1+: the generated ``CoordinatorRecordType``, 0-8,
10-17, 19-23, type 0 read as ``LegacyOffsetCommit``); from 4.0 a value version
outside the value message's valid versions is ``UnknownRecordVersionException``
("Found an unknown record version V for T type"); the share-state value
envelope is labelled ``type`` up to 4.0, ``version`` from 4.1.

Layouts that changed without a version bump (4.0 -> 4.1: ``ShareGroupMetadataValue``
gained ``MetadataHash``, ``ShareGroupStatePartitionMetadataValue`` gained
``InitializingTopics``, ``ShareSnapshotValue``/``ShareUpdateValue`` a 32-bit
``SnapshotEpoch`` and timestamps) are chosen by what the bytes hold: the
current layout when it reads the value to its last byte, else the 4.0 layout
(``schemas/<Name>@4.0.json``) when that one does, else the current layout's
reading (or error).  Record type 9 (``ShareGroupPartitionMetadata``, removed in
4.1) is read with its 4.0 layout under ``--kafka-version 4.0``.

Output (``DumpLogSegments.OffsetsMessageParser`` /
``ShareGroupStateMessageParser``): key ``{"type":"<record type>","data":{...}}``;
value ``{"version":"<v>","data":{...}}`` for offsets, ``{"type":"<v>",...}``
for share state; ``<DELETE>`` for a tombstone; on error the key text is
"Error at offset N, skipping. <message>" and no payload.  For a
``GroupMetadataValue`` whose ``protocolType`` is ``consumer`` each member's
``subscription``/``assignment`` bytes are replaced by the decoded
``ConsumerProtocolSubscription``/``ConsumerProtocolAssignment`` (int16 version
prefix + message); any failure keeps the bytes (printed as base64).
"""

from __future__ import annotations

from typing import Any

from kseg.decoders import schema
from kseg.decoders.base import UncaughtJavaException
from kseg.decoders.decode import read
from kseg.decoders.jsonconv import dumps, to_tree
from kseg.decoders.jvm import JavaException, UnknownRecordTypeException
from kseg.decoders.wire import Reader
from kseg.format import releases
from kseg.format.releases import Release

#: ``GroupCoordinatorRecordSerde`` up to 4.0: record type -> message name (without Key/Value).
GROUP_RECORD_TYPES: dict[int, str] = {
    0: "OffsetCommit",
    1: "OffsetCommit",
    2: "GroupMetadata",
    3: "ConsumerGroupMetadata",
    4: "ConsumerGroupPartitionMetadata",
    5: "ConsumerGroupMemberMetadata",
    6: "ConsumerGroupTargetAssignmentMetadata",
    7: "ConsumerGroupTargetAssignmentMember",
    8: "ConsumerGroupCurrentMemberAssignment",
    9: "ShareGroupPartitionMetadata",
    10: "ShareGroupMemberMetadata",
    11: "ShareGroupMetadata",
    12: "ShareGroupTargetAssignmentMetadata",
    13: "ShareGroupTargetAssignmentMember",
    14: "ShareGroupCurrentMemberAssignment",
    15: "ShareGroupStatePartitionMetadata",
    16: "ConsumerGroupRegularExpression",
}

#: The generated ``CoordinatorRecordType`` of 4.1+ (the specs' ``apiKey``s; 9 and 18 unused).
GROUP_RECORD_TYPES_41: dict[int, str] = {
    **{k: v for k, v in GROUP_RECORD_TYPES.items() if k != 9},
    0: "LegacyOffsetCommit",
    17: "StreamsGroupMetadata",
    19: "StreamsGroupMemberMetadata",
    20: "StreamsGroupTargetAssignmentMetadata",
    21: "StreamsGroupTargetAssignmentMember",
    22: "StreamsGroupCurrentMemberAssignment",
    23: "StreamsGroupTopology",
}

#: Messages whose 4.0 layout differs from the current one at the same version: ``<Name>@4.0``.
LEGACY_LAYOUT = "@4.0"
RELAYOUTED = frozenset(
    ("ShareGroupMetadataValue", "ShareGroupStatePartitionMetadataValue", "ShareSnapshotValue", "ShareUpdateValue")
)
#: Removed upstream; only the 4.0 layout exists.
REMOVED = {
    "ShareGroupPartitionMetadataKey": "ShareGroupPartitionMetadataKey@4.0",
    "ShareGroupPartitionMetadataValue": "ShareGroupPartitionMetadataValue@4.0",
}


def group_record_types(release: Release) -> dict[int, str]:
    """The record types ``release``'s ``GroupCoordinatorRecordSerde`` knows."""
    table = GROUP_RECORD_TYPES_41 if 17 in release.group_types else GROUP_RECORD_TYPES
    return {k: v for k, v in table.items() if k in release.group_types}


#: ``ShareCoordinatorRecordSerde`` (``ShareCoordinator.SHARE_*_RECORD_KEY_VERSION``).
SHARE_RECORD_TYPES: dict[int, str] = {0: "ShareSnapshot", 1: "ShareUpdate"}

CONSUMER_PROTOCOL_TYPE = "consumer"  # ConsumerProtocol.PROTOCOL_TYPE


class CoordinatorRecord:
    """A deserialised coordinator record (Kafka's ``CoordinatorRecord``)."""

    __slots__ = ("record_type", "key_name", "key", "value_name", "value_version", "value")

    def __init__(
        self, record_type: int, key_name: str, key: dict, value_name: str, value_version: int | None, value: dict | None
    ) -> None:
        self.record_type = record_type
        self.key_name = key_name
        self.key = key
        self.value_name = value_name
        self.value_version = value_version
        self.value = value


def _read_version(r: Reader, name: str) -> int:
    if r.remaining() < 2:
        raise JavaException(f"Could not read version from {name}'s buffer.")
    return r.int16()


def _read_message(msg_name: str, r: Reader, version: int, name: str) -> dict:
    try:
        return read(schema.message(msg_name).struct, r, version)
    except JavaException as exc:
        raise JavaException(
            f"Could not read record with version {version} from {name}'s buffer due to: {exc.get_message()}.", exc
        ) from None


def schema_name(msg_name: str) -> str:
    """The schema file of ``msg_name``: a removed message's 4.0 layout, else the current one."""
    return REMOVED.get(msg_name, msg_name)


def choose_layout(msg_name: str, data: bytes, pos: int, version: int) -> str:
    """For a message whose layout changed without a version bump: the layout that reads
    ``data[pos:]`` to its last byte (current first, then 4.0), else the current one."""
    if msg_name not in RELAYOUTED:
        return schema_name(msg_name)
    for candidate in (msg_name, msg_name + LEGACY_LAYOUT):
        r = Reader(data, pos)
        try:
            read(schema.message(candidate).struct, r, version)
        except JavaException:
            continue
        if r.remaining() == 0:
            return candidate
    return msg_name


def deserialize(
    types: dict[int, str], key: bytes, value: bytes | None, release: Release = releases.LATEST
) -> CoordinatorRecord:
    """``CoordinatorRecordSerde.deserialize`` of ``release`` for the record-type table ``types``."""
    kr = Reader(key)
    record_type = _read_version(kr, "key")
    base = types.get(record_type)
    if base is None:
        raise UnknownRecordTypeException(record_type)
    key_name = schema_name(base + "Key")
    key_msg = _read_message(key_name, kr, record_type, "key")
    if value is None:
        return CoordinatorRecord(record_type, key_name, key_msg, schema_name(base + "Value"), None, None)
    vr = Reader(value)
    value_version = _read_version(vr, "value")
    value_name = choose_layout(base + "Value", value, 2, value_version)
    if release.value_version_check and not schema.message(value_name).valid.contains(value_version):
        raise JavaException(f"Found an unknown record version {value_version} for {record_type} type")
    value_msg = _read_message(value_name, vr, value_version, "value")
    return CoordinatorRecord(record_type, key_name, key_msg, value_name, value_version, value_msg)


def _envelope(label: str, version: int, tree: dict[str, Any]) -> str:
    return dumps({label: str(version), "data": tree})


def _expand(member: dict, field: str, message_name: str) -> None:
    """``prepareGroupMetadataValue.replace``: decode version-prefixed bytes in place, or keep them."""
    node = member.get(field)
    if not isinstance(node, (bytes, bytearray)):
        return  # absent, or NullNode/TextNode: binaryValue() is null -> NPE, swallowed
    try:
        r = Reader(bytes(node))
        version = r.int16()
        struct = schema.message(message_name).struct
        member[field] = to_tree(struct, read(struct, r, version), version)
    except JavaException:
        pass


def group_metadata_tree(value: dict, version: int) -> dict:
    """``GroupMetadataValue`` JSON with the consumer protocol expanded (``prepareGroupMetadataValue``)."""
    tree = to_tree(schema.message("GroupMetadataValue").struct, value, version)
    if tree.get("protocolType") == CONSUMER_PROTOCOL_TYPE:
        members = tree.get("members")
        if isinstance(members, list):
            for member in members:
                _expand(member, "subscription", "ConsumerProtocolSubscription")
                _expand(member, "assignment", "ConsumerProtocolAssignment")
    return tree


class _CoordinatorParser:
    """Shared logic of the coordinator parsers (Kafka's ``CoordinatorRecordMessageParser`` from 4.1)."""

    types: dict[int, str] = {}
    value_label = "version"
    topic_name = ""

    def __init__(self, release: Release = releases.LATEST) -> None:
        self.release = release

    def parse(self, offset: int, key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
        if key is None:
            what = "the specified" if self.release.generic_missing_key else self.topic_name
            raise UncaughtJavaException(
                JavaException(
                    f"Failed to decode message at offset {offset} using {what} decoder (message had a missing key)"
                ),
                offset,
            )
        try:
            rec = deserialize(self.types, key, value, self.release)
            key_struct = schema.message(rec.key_name).struct
            key_text = _envelope("type", rec.record_type, to_tree(key_struct, rec.key, rec.record_type))
            if rec.value is None or rec.value_version is None:  # a tombstone has neither
                return key_text, "<DELETE>"
            tree = self.value_tree(rec.value_name, rec.value, rec.value_version)
            tree = schema.drop_newer_tagged(schema.message(rec.value_name), tree, self.release.knows)
            return key_text, _envelope(self.value_label, rec.value_version, tree)
        except UnknownRecordTypeException as exc:
            return f"Unknown record type {exc.unknown_type} at offset {offset}, skipping.", None
        except JavaException as exc:
            return f"Error at offset {offset}, skipping. {exc.get_message()}", None

    def value_tree(self, name: str, value: dict[str, Any], version: int) -> dict[str, Any]:
        """The JSON tree of a record's value ``name`` read at ``version``."""
        return to_tree(schema.message(name).struct, value, version)


class OffsetsMessageParser(_CoordinatorParser):
    """``--offsets-decoder`` (``__consumer_offsets``), Kafka's ``OffsetsMessageParser``."""

    value_label = "version"
    topic_name = "offset topic"

    def __init__(self, release: Release = releases.LATEST) -> None:
        super().__init__(release)
        self.types = group_record_types(release)

    def value_tree(self, name: str, value: dict[str, Any], version: int) -> dict[str, Any]:
        if name == "GroupMetadataValue":
            return group_metadata_tree(value, version)
        return super().value_tree(name, value, version)


class ShareGroupStateMessageParser(_CoordinatorParser):
    """``--share-group-state-decoder`` (``__share_group_state``), Kafka's ``ShareGroupStateMessageParser``."""

    types = SHARE_RECORD_TYPES
    topic_name = "share group state topic"

    def __init__(self, release: Release = releases.LATEST) -> None:
        super().__init__(release)
        self.value_label = release.share_value_label
