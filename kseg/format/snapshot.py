"""Producer-state snapshots, ``<offset>.snapshot`` (``ProducerStateManager.readSnapshot``).

Layout (message ``ProducerSnapshot`` v1, big-endian)::

    version   int16    1
    crc       uint32   CRC-32C over every byte after this field
    count     int32    entries, each 46 bytes:
      producerId            int64
      epoch                 int16
      lastSequence          int32
      lastOffset            int64
      offsetDelta           int32
      timestamp             int64
      coordinatorEpoch      int32
      currentTxnFirstOffset int64   -1 when no transaction is open

A broker writes one at every roll and at shutdown; with no producers it is
10 bytes.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from kseg.errors import CorruptSnapshotError

_HEAD = struct.Struct(">hIi")  # version, crc, count
_ENTRY = struct.Struct(">qhiqiqiq")
VERSION = 1


class ProducerEntry(NamedTuple):
    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int

    @property
    def first_sequence(self) -> int:
        """``BatchMetadata.firstSeq``: lastSeq - offsetDelta, wrapping below 0 (``decrementSequence``)."""
        if self.last_sequence < self.offset_delta:
            return 0x7FFFFFFF - (self.offset_delta - self.last_sequence) + 1
        return self.last_sequence - self.offset_delta


def parse_snapshot(data: bytes) -> list[ProducerEntry]:
    """Parse and CRC-check a snapshot; errors carry Kafka's messages."""
    import crc32c

    if len(data) < 2:
        raise CorruptSnapshotError("Snapshot failed schema validation: null")
    (version,) = struct.unpack_from(">h", data, 0)
    if version != VERSION:
        raise CorruptSnapshotError(
            f"Snapshot failed schema validation: Snapshot contained an unknown file version {version}"
        )
    if len(data) < _HEAD.size:
        raise CorruptSnapshotError("Snapshot failed schema validation: null")
    _, crc, count = _HEAD.unpack_from(data, 0)
    remaining = len(data) - _HEAD.size
    if count < 0:
        raise CorruptSnapshotError(
            "Snapshot failed schema validation: non-nullable field producerEntries was serialized as null"
        )
    if count > remaining:
        raise CorruptSnapshotError(
            f"Snapshot failed schema validation: Tried to allocate a collection of size {count}, "
            f"but there are only {remaining} bytes remaining."
        )
    if _HEAD.size + count * _ENTRY.size > len(data):
        raise CorruptSnapshotError("Snapshot failed schema validation: null")
    computed = crc32c.crc32c(memoryview(data)[6:])
    if computed != crc:
        raise CorruptSnapshotError(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: {computed}"
        )
    return [ProducerEntry(*_ENTRY.unpack_from(data, _HEAD.size + i * _ENTRY.size)) for i in range(count)]
