"""``__remote_log_metadata`` records, written as Kafka's ``RemoteLogMetadataSerde.serialize`` writes them.

``RemoteLogMetadataSerde.serialize`` turns a ``RemoteLogMetadata`` into an ``ApiMessageAndVersion`` at the
record's ``highestSupportedVersion()`` (version 0 of each of the four records,
``RemoteLogSegmentMetadataTransform.toApiMessageAndVersion`` and its siblings) and
``BytesApiMessageSerde.serialize`` frames it (``AbstractApiMessageSerde.write``): unsigned varints of the
frame version (1), the api key (0 ``RemoteLogSegmentMetadataRecord``, 1 ``...UpdateRecord``, 2
``RemotePartitionDeleteMetadataRecord``, 3 ``RemoteLogSegmentMetadataSnapshotRecord``) and the version, then
the message as the generated ``write`` lays it out.  Every version is flexible: compact strings, arrays and
nullable bytes (an unsigned varint of length + 1, 0 for null), a 16-byte ``Uuid`` (most significant bits
first), a tagged-fields section (its count, then tag, size, value) after each struct.  ``txnIndexEmpty`` is
tag 0 of ``RemoteLogSegmentMetadataRecord`` (KIP-1058, 4.0), written only when true.
``ProducerManager.publishMessage`` sends the value with no key.

Aiven's RSM puts its own bytes in ``customMetadata`` (``SegmentCustomMetadataSerde``: a tagged-fields
section of ``SegmentCustomMetadataField`` -- 0 ``remote_size`` a varlong, 1 ``object_prefix`` and 2
``object_key`` compact strings): :func:`aiven_custom_metadata`.

:func:`write_metadata_log` writes such values into a ``__remote_log_metadata-<n>`` partition directory
(one record a batch, as the producer sends them).
"""

from __future__ import annotations

import base64
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from kseg.testing.segment import write_segment
from kseg.testing.v2 import RecordSpec, build_v2_batch, uvarint, varint

FRAME_VERSION = 1  # AbstractApiMessageSerde.DEFAULT_FRAME_VERSION
SEGMENT, UPDATE, PARTITION_DELETE, SNAPSHOT = 0, 1, 2, 3  # MetadataRecordType api keys
COPY_SEGMENT_STARTED, COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED, DELETE_SEGMENT_FINISHED = 0, 1, 2, 3
DELETE_PARTITION_MARKED, DELETE_PARTITION_STARTED, DELETE_PARTITION_FINISHED = 0, 1, 2


def uuid_bytes(uuid: str) -> bytes:
    """Kafka's ``Uuid.fromString``: 22 URL-safe base64 characters -> 16 bytes."""
    raw = base64.urlsafe_b64decode(uuid + "==")
    if len(raw) != 16:
        raise ValueError(f"not a Kafka Uuid: {uuid!r}")
    return raw


def _compact_bytes(data: bytes | None) -> bytes:
    return b"\x00" if data is None else uvarint(len(data) + 1) + data


def _compact_string(s: str) -> bytes:
    return _compact_bytes(s.encode("utf-8"))


def _tags(fields: dict[int, bytes]) -> bytes:
    """A tagged-fields section: count, then each tag in order with its size and value."""
    out = uvarint(len(fields))
    for tag in sorted(fields):
        out += uvarint(tag) + uvarint(len(fields[tag])) + fields[tag]
    return out


@dataclass(frozen=True)
class SegmentId:
    """``RemoteLogSegmentId``: the ``TopicIdPartition`` (topic id, name, partition) and the segment's Uuid."""

    topic_id: str
    topic: str
    partition: int
    id: str

    def topic_id_partition(self) -> bytes:
        # TopicIdPartitionEntry: name, id, partition, tags
        return _compact_string(self.topic) + uuid_bytes(self.topic_id) + struct.pack(">i", self.partition) + b"\x00"

    def encode(self) -> bytes:
        # RemoteLogSegmentIdEntry: topicIdPartition, id, tags
        return self.topic_id_partition() + uuid_bytes(self.id) + b"\x00"


def _frame(api_key: int, body: bytes, version: int = 0) -> bytes:
    return uvarint(FRAME_VERSION) + uvarint(api_key) + uvarint(version) + body


def segment_metadata(
    seg: SegmentId,
    start: int,
    end: int,
    *,
    state: int = COPY_SEGMENT_STARTED,
    epochs: dict[int, int] | None = None,
    size: int = 1024,
    broker: int = 1,
    max_timestamp: int = 1_780_000_000_000,
    event_timestamp: int = 1_780_000_000_001,
    custom: bytes | None = None,
    txn_index_empty: bool = False,
) -> bytes:
    """``RemoteLogSegmentMetadataRecord`` v0 (what ``RemoteLogMetadataManager.addRemoteLogSegmentMetadata``
    publishes, COPY_SEGMENT_STARTED); ``epochs`` leader epoch -> its first offset (default ``{0: start}``)."""
    epochs = {0: start} if epochs is None else epochs
    body = seg.encode() + struct.pack(">qqiqq", start, end, broker, max_timestamp, event_timestamp)
    body += uvarint(len(epochs) + 1)
    body += b"".join(struct.pack(">iq", e, o) + b"\x00" for e, o in epochs.items())
    body += struct.pack(">i", size) + _compact_bytes(custom) + struct.pack(">b", state)
    body += _tags({0: b"\x01"} if txn_index_empty else {})
    return _frame(SEGMENT, body)


def segment_update(
    seg: SegmentId,
    state: int,
    *,
    broker: int = 1,
    event_timestamp: int = 1_780_000_000_002,
    custom: bytes | None = None,
) -> bytes:
    """``RemoteLogSegmentMetadataUpdateRecord`` v0 (``updateRemoteLogSegmentMetadata``)."""
    body = seg.encode() + struct.pack(">iq", broker, event_timestamp) + _compact_bytes(custom)
    return _frame(UPDATE, body + struct.pack(">b", state) + b"\x00")


def partition_delete(
    topic_id: str, topic: str, partition: int, state: int, *, broker: int = 1, event_timestamp: int = 1_780_000_000_003
) -> bytes:
    """``RemotePartitionDeleteMetadataRecord`` v0 (``putRemotePartitionDeleteMetadata``)."""
    tip = SegmentId(topic_id, topic, partition, topic_id).topic_id_partition()
    return _frame(PARTITION_DELETE, tip + struct.pack(">iqb", broker, event_timestamp, state) + b"\x00")


def aiven_custom_metadata(
    remote_size: int | None = None, object_prefix: str | None = None, object_key: str | None = None
) -> bytes:
    """Aiven's ``SegmentCustomMetadataSerde.serialize``: the fields given, as one tagged-fields section
    (empty bytes when none is given, as Aiven writes an empty map)."""
    fields: dict[int, bytes] = {}
    if remote_size is not None:
        fields[0] = varint(remote_size)
    if object_prefix is not None:
        fields[1] = _compact_string(object_prefix)
    if object_key is not None:
        fields[2] = _compact_string(object_key)
    return _tags(fields) if fields else b""


def write_metadata_log(
    directory: str | os.PathLike, values: Iterable[bytes], *, timestamp: int = 1_780_000_000_000
) -> Path:
    """A ``__remote_log_metadata`` partition directory holding ``values`` at offsets 0, 1, ... (one record a
    batch, no key); returns the directory."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    batches = [build_v2_batch([RecordSpec(None, v, timestamp + i)], base_offset=i) for i, v in enumerate(values)]
    write_segment(path, [[b] for b in batches])
    return path
