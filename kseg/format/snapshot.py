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
from functools import partial
from typing import TYPE_CHECKING, Iterator, NamedTuple

from kseg.errors import CorruptSnapshotError
from kseg.format.crc import crc32c_function

if TYPE_CHECKING:
    from typing_extensions import Buffer

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


ENTRY_SIZE = _ENTRY.size
HEAD_SIZE = _HEAD.size


def check_head(head: bytes, size: int) -> tuple[int, int]:
    """``(crc, count)`` from a snapshot's first bytes (at least :data:`HEAD_SIZE` of them, or the whole file
    when it is shorter) and the file's ``size``: the checks ``ProducerSnapshot`` reading makes before the
    entries, with Kafka's messages (``ProducerStateManager.readSnapshot``)."""
    if size < 2:
        raise CorruptSnapshotError("Snapshot failed schema validation: null")
    (version,) = struct.unpack_from(">h", head, 0)
    if version != VERSION:
        raise CorruptSnapshotError(
            f"Snapshot failed schema validation: Snapshot contained an unknown file version {version}"
        )
    if size < _HEAD.size:
        raise CorruptSnapshotError("Snapshot failed schema validation: null")
    _, crc, count = _HEAD.unpack_from(head, 0)
    remaining = size - _HEAD.size
    if count < 0:
        raise CorruptSnapshotError(
            "Snapshot failed schema validation: non-nullable field producerEntries was serialized as null"
        )
    if count > remaining:
        raise CorruptSnapshotError(
            f"Snapshot failed schema validation: Tried to allocate a collection of size {count}, "
            f"but there are only {remaining} bytes remaining."
        )
    if _HEAD.size + count * _ENTRY.size > size:
        raise CorruptSnapshotError("Snapshot failed schema validation: null")
    return crc, count


def check_crc(stored: int, computed: int) -> None:
    """The CRC-32C over every byte after the crc field (computed by the caller, in one piece or many)."""
    if computed != stored:
        raise CorruptSnapshotError(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. Computed crc: {computed}"
        )


def entries_in(chunk: Buffer) -> Iterator[ProducerEntry]:
    """The entries packed in ``chunk`` (a whole number of 46-byte entries)."""
    return map(_producer_entry, _ENTRY.iter_unpack(chunk))


_producer_entry = partial(tuple.__new__, ProducerEntry)  # ProducerEntry(*fields) in one C call


def parse_snapshot(data: bytes) -> list[ProducerEntry]:
    """Parse and CRC-check a whole snapshot held in memory; errors carry Kafka's messages.

    ``kseg.storage.snapshots.iter_snapshot`` reads a file in windows with the same checks."""
    crc32c = crc32c_function()

    _, count = check_head(data[: _HEAD.size], len(data))
    check_crc(_HEAD.unpack_from(data, 0)[1], crc32c(memoryview(data)[6:]))
    return list(entries_in(memoryview(data)[_HEAD.size : _HEAD.size + count * _ENTRY.size]))
