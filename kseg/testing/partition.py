"""A whole partition directory: segments rolled by size, producer-state snapshots, txn indexes.

Snapshot schema (``ProducerStateManager.writeSnapshot``, ``ProducerSnapshot.json`` v1;
big-endian)::

    <offset:020d>.snapshot:
      version int16 (1) | crc uint32 (CRC-32C over everything after it) |
      entryCount int32 | entries of:
        producerId int64 | epoch int16 | lastSequence int32 | lastOffset int64 |
        offsetDelta int32 | timestamp int64 | coordinatorEpoch int32 |
        currentTxnFirstOffset int64 (-1 none)

Mirrors the order of ``UnifiedLog.append`` / ``maybeRoll`` / ``roll`` /
``close``: for each append, roll first if ``LogSegment.shouldRoll`` says so
(size > segment_bytes - appendSize, an index full, an offset that does not
fit), taking a snapshot at the new base offset; producer state
(``ProducerAppendInfo``) is updated from every v2 batch with a producer id;
aborted transactions go to the active segment's ``.txnindex`` with
``lastStableOffset`` = first offset of the earliest *other* ongoing
transaction, else marker offset + 1.  On close, a snapshot at the log end
offset (when it is past the last one), then every segment is closed.
Entries are written in Java ``HashMap`` iteration order, as Kafka does.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from crc32c import crc32c

from kseg.format.varint import read_varint
from kseg.testing.framing import batch_info
from kseg.testing.segment import DEFAULT_MAX_INDEX_SIZE, SegmentWriter, segment_file_name
from kseg.testing.v2 import CONTROL_MASK, HEADER_SIZE, TRANSACTIONAL_MASK

# h version | I crc | i entryCount
SNAPSHOT_HEADER = struct.Struct(">hIi")
# q producerId | h epoch | i lastSequence | q lastOffset | i offsetDelta |
# q timestamp | i coordinatorEpoch | q currentTxnFirstOffset
SNAPSHOT_ENTRY = struct.Struct(">qhiqiqiq")
# v2 header fields read for producer state, from byte 43:
#   q producerId | h producerEpoch | i baseSequence
PRODUCER_FIELDS = struct.Struct(">qhi")
# single fields: I snapshot crc @2 | i recordsCount @57 | q baseTimestamp @27 |
# h control type @2 of the key | i coordinatorEpoch @2 of the marker value
UINT32 = struct.Struct(">I")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
INT16 = struct.Struct(">h")


@dataclass(slots=True)
class ProducerEntry:
    """One ``ProducerSnapshot.ProducerEntry`` (``ProducerStateEntry`` as saved)."""

    producer_id: int
    epoch: int = -1
    last_sequence: int = -1
    last_offset: int = -1
    offset_delta: int = 0
    timestamp: int = -1
    coordinator_epoch: int = -1
    current_txn_first_offset: int = -1


def java_hashmap_order(keys: Sequence[int]) -> list[int]:
    """Iteration order of a ``java.util.HashMap<Long, ?>`` filled with ``keys`` in order.

    Bucket = spread(Long.hashCode) & (capacity - 1), capacity doubling from
    16 while size > 0.75 * capacity; insertion order within a bucket.
    """
    cap = 16
    while len(keys) > cap * 3 // 4:
        cap *= 2

    def bucket(k: int) -> int:
        u = k & 0xFFFFFFFFFFFFFFFF
        h = (u ^ (u >> 32)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(keys))]


def snapshot_bytes(entries: Iterable[ProducerEntry]) -> bytes:
    """A producer-state snapshot file's bytes (10 bytes when there are no producers)."""
    entries = list(entries)
    body = bytearray(SNAPSHOT_HEADER.pack(1, 0, len(entries)))
    for e in entries:
        body += SNAPSHOT_ENTRY.pack(
            e.producer_id,
            e.epoch,
            e.last_sequence,
            e.last_offset,
            e.offset_delta,
            e.timestamp,
            e.coordinator_epoch,
            e.current_txn_first_offset,
        )
    UINT32.pack_into(body, 2, crc32c(memoryview(body)[6:]))
    return bytes(body)


def write_snapshot(directory: str | os.PathLike, offset: int, entries: Iterable[ProducerEntry] = ()) -> Path:
    """Write ``<offset>.snapshot``; entries in the order given."""
    path = Path(directory) / segment_file_name(offset, ".snapshot")
    path.write_bytes(snapshot_bytes(entries))
    return path


class ProducerState:
    """The slice of ``ProducerStateManager`` that decides snapshot and txn-index bytes.

    No validation (sequence/epoch checks) and no expiration: the input is
    assumed to be what a broker accepted.
    """

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}  # insertion order kept for HashMap order
        self.ongoing: dict[int, int] = {}  # first offset -> producer id (ongoingTxns)

    def append_batch(self, raw: bytes) -> tuple[int, int, int, int] | None:
        """``ProducerAppendInfo.append`` + ``ProducerStateManager.update`` for one batch.

        Returns (producerId, firstOffset, markerOffset, isAbort) when the
        batch is an end-transaction marker completing a non-empty transaction.
        """
        info = batch_info(raw)
        if info.magic < 2:
            return None
        pid, epoch, base_seq = PRODUCER_FIELDS.unpack_from(raw, 43)
        if pid < 0:
            return None
        entry = self.producers.get(pid)
        if entry is None:
            entry = self.producers[pid] = ProducerEntry(pid)
        if entry.epoch != epoch:  # maybeUpdateProducerEpoch drops the batch metadata
            entry.epoch = epoch
            entry.last_sequence, entry.last_offset, entry.offset_delta = -1, -1, 0
        if info.attributes & CONTROL_MASK:
            (count,) = INT32.unpack_from(raw, 57)
            if count == 0 or len(raw) <= 61:
                return None
            key, value = _first_record_key_value(raw)
            (ctype,) = INT16.unpack_from(key, 2)
            (coordinator_epoch,) = INT32.unpack_from(value, 2)
            first = entry.current_txn_first_offset
            entry.coordinator_epoch = coordinator_epoch
            entry.current_txn_first_offset = -1
            entry.timestamp = _first_record_timestamp(raw)
            if first >= 0:
                return (pid, first, info.base_offset, ctype == 0)
            return None
        lod = info.last_offset - info.base_offset
        entry.last_sequence = -1 if base_seq < 0 else (base_seq + lod) % (2**31)
        entry.last_offset = info.last_offset
        entry.offset_delta = lod
        entry.timestamp = info.max_timestamp
        if info.attributes & TRANSACTIONAL_MASK and entry.current_txn_first_offset < 0:
            entry.current_txn_first_offset = info.base_offset
            self.ongoing[info.base_offset] = pid
        return None

    def last_stable_offset(self, producer_id: int, marker_offset: int) -> int:
        """``ProducerStateManager.lastStableOffset(completedTxn)``."""
        others = [first for first, pid in self.ongoing.items() if pid != producer_id]
        return min(others) if others else marker_offset + 1

    def complete(self, first_offset: int) -> None:
        self.ongoing.pop(first_offset, None)

    def entries(self) -> list[ProducerEntry]:
        return [self.producers[k] for k in java_hashmap_order(list(self.producers))]


def _record_start(raw: bytes) -> tuple[int, int]:
    """Skip the first record's length and attributes; return (pos after timestampDelta, timestampDelta)."""
    pos = HEADER_SIZE
    _, pos = read_varint(raw, pos)  # record length
    pos += 1  # attributes
    ts_delta, pos = read_varint(raw, pos)
    return pos, ts_delta


def _first_record_timestamp(raw: bytes) -> int:
    (base_ts,) = INT64.unpack_from(raw, 27)
    return base_ts + _record_start(raw)[1]


def _first_record_key_value(raw: bytes) -> tuple[bytes, bytes]:
    pos, _ = _record_start(raw)
    _, pos = read_varint(raw, pos)  # offset delta
    klen, pos = read_varint(raw, pos)
    key = raw[pos : pos + klen]
    pos += klen
    vlen, pos = read_varint(raw, pos)
    return key, raw[pos : pos + vlen]


def write_partition(
    directory: str | os.PathLike,
    appends: Iterable[Sequence[bytes]],
    *,
    base_offset: int = 0,
    segment_bytes: int = 1024**3,
    index_interval_bytes: int = 4096,
    max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
    per_batch_index: bool = True,
    magic: int | None = None,
    snapshots: bool = True,
    roll_before: Iterable[int] = (),
) -> list[SegmentWriter]:
    """Write a partition directory from a sequence of appends (each a list of batch bytes).

    ``roll_before``: indexes of appends before which to force a roll (where
    a broker would roll on ``segment.ms``); the number of appends means a
    roll after the last one (an empty active segment, as ``empty-log-0``).  A roll's new base offset is
    max(first offset of the append -- v2 baseOffset or legacy entry offset --,
    log end offset), as ``LocalLog.roll``.  Returns the closed segment writers.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    forced = set(roll_before)
    state = ProducerState()
    last_snap = base_offset  # lastSnapOffset starts at the log start offset
    log_end = base_offset

    def new_segment(base: int) -> SegmentWriter:
        return SegmentWriter(
            directory,
            base,
            index_interval_bytes=index_interval_bytes,
            magic=magic,
            per_batch_index=per_batch_index,
            max_index_size=max_index_size,
        )

    def snapshot(offset: int) -> None:
        nonlocal last_snap
        if snapshots and offset > last_snap:  # ProducerStateManager.takeSnapshot
            write_snapshot(directory, offset, state.entries())
            last_snap = offset

    segments = [new_segment(base_offset)]

    def roll(new_base: int) -> SegmentWriter:
        segments[-1].close()  # onBecomeInactiveSegment: final time-index entry, trim
        segments.append(new_segment(new_base))
        snapshot(new_base)  # updateMapEndOffset(new base) + takeSnapshot
        return segments[-1]

    count = 0
    for index, batches in enumerate(appends):
        count = index + 1
        batches = list(batches)
        if not batches:
            continue
        first = batch_info(batches[0])
        last_offset = batch_info(batches[-1]).last_offset
        size = sum(len(b) for b in batches)
        active = segments[-1]
        if active.size > 0 and (
            index in forced
            or active.size > segment_bytes - size
            or active.is_full()
            or not active.can_convert_to_relative_offset(last_offset)
        ):
            active = roll(max(first.base_offset, log_end))
        completed = [c for c in (state.append_batch(b) for b in batches) if c is not None]
        active.append(batches)
        for pid, first_offset, marker_offset, aborted in completed:
            lso = state.last_stable_offset(pid, marker_offset)
            if aborted:
                active.add_aborted_txn(pid, first_offset, marker_offset, lso)
            state.complete(first_offset)
        log_end = last_offset + 1
    if count in forced and segments[-1].size > 0:
        roll(log_end)  # a roll after the last append (segment.ms), leaving an empty active segment
    snapshot(log_end)
    for seg in segments:
        seg.close()
    return segments
