"""What each Kafka version passes to ``LogSegment.append`` for one append, for writing old segments.

``LogSegment.append(largestOffset, largestTimestamp, shallowOffsetOfMaxTimestamp,
records)`` puts ``largestOffset`` in the offset index and, through
``maxTimestampSoFar``/``offsetOfMaxTimestampSoFar``, ``shallowOffsetOfMaxTimestamp``
in the time index (also in the final entry written by ``onBecomeInactiveSegment``
and ``close``).  Who computes those values, and how, changed over the versions:

* **Leader, uncompressed, in place** (``LogValidator.assignOffsetsNonCompressed``;
  0.11.0..3.4 ``core/src/main/scala/kafka/log/LogValidator.scala``, 3.5..3.6
  ``storage/src/main/java/org/apache/kafka/storage/internals/log/LogValidator.java``):
  up to Kafka 3.6 the offset of the *first record holding the largest
  timestamp* of the append (CreateTime, v1 and v2; strict ``>`` per record
  and per batch); with LogAppendTime the last offset (v2) or the first
  offset (v1).  From 3.7 (3.7 branch, commit e905ef1 "Small LogValidator
  clean ups"; kept by KAFKA-16310 on 3.8/3.9/trunk) the last offset of the
  append for v2, CreateTime or not; v1 unchanged (each v1 entry is its own
  shallow batch, so its offset is its last offset).
* **Leader, compressed** (``validateMessagesAndAssignOffsetsCompressed``; rebuilt
  batches through ``MemoryRecordsBuilder.info``): the last offset, every version.
* **Follower** (``analyzeAndValidateRecords``, ``appendAsFollower``): the last
  offset of the first batch holding the append's largest timestamp.
* **Log cleaner** (``LogCleaner.cleanInto`` with ``MemoryRecords.filterTo``'s
  ``FilterResult``): ``largestOffset`` is ``maxOffset``, the largest offset of
  a *kept record* (of a batch's header for a batch kept empty); the time
  index gets the last offset of the kept batch holding the largest timestamp.
* **Recovery** (``LogSegment.recover``, every version): the batch's last offset.

These functions compute those values from the raw batches of one append.
"""

from __future__ import annotations

import struct
from typing import NamedTuple, Sequence

from kseg.errors import KsegError
from kseg.format.varint import read_varint
from kseg.testing.framing import batch_info
from kseg.testing.v2 import HEADER_SIZE, TIMESTAMP_TYPE_MASK

# v2 header fields: q baseTimestamp @27 | i recordsCount @57
INT64 = struct.Struct(">q")
INT32 = struct.Struct(">i")


class AppendInfo(NamedTuple):
    """The three values ``LogSegment.append`` takes besides the records."""

    largest_offset: int
    largest_timestamp: int
    shallow_offset_of_max_timestamp: int


def v2_record_offsets_and_timestamps(raw: bytes) -> list[tuple[int, int]]:
    """(offset, timestamp) of each record of an uncompressed magic-2 batch (``DefaultRecord`` framing)."""
    info = batch_info(raw)
    if info.magic != 2 or info.attributes & 0x07:
        raise KsegError("only uncompressed magic-2 batches can be read here")
    (base_ts,) = INT64.unpack_from(raw, 27)
    (count,) = INT32.unpack_from(raw, 57)
    out = []
    pos = HEADER_SIZE
    for _ in range(count):
        length, pos = read_varint(raw, pos)
        end = pos + length
        ts_delta, p = read_varint(raw, pos + 1)  # after the attributes byte
        offset_delta, _ = read_varint(raw, p)
        out.append((info.base_offset + offset_delta, base_ts + ts_delta))
        pos = end
    return out


def leader_append_info(batches: Sequence[bytes], kafka: str) -> AppendInfo:
    """``LogValidator``'s result for a produce request already given its offsets, on Kafka ``kafka`` ("2.8", "3.7").

    Covers the in-place paths (no format conversion): uncompressed v1/v2
    (``assignOffsetsNonCompressed``) and compressed (the last offset).
    """
    infos = [batch_info(raw) for raw in batches]
    major, minor = (int(x) for x in kafka.split(".")[:2])
    before_37 = (major, minor) < (3, 7)
    last = infos[-1].last_offset
    first = infos[0].base_offset
    magic = infos[0].magic
    compressed = bool(infos[0].attributes & 0x07)
    log_append = bool(infos[0].attributes & TIMESTAMP_TYPE_MASK) and magic >= 1
    max_ts = max(i.max_timestamp for i in infos)
    if magic == 0:
        return AppendInfo(last, -1, -1)  # no timestamps: never enters the time index
    if compressed:
        return AppendInfo(last, max_ts, last)
    if log_append:
        return AppendInfo(last, max_ts, last if magic >= 2 else first)
    if magic >= 2 and not before_37:
        return AppendInfo(last, max_ts, last)
    best, shallow = -1, -1
    for raw, info in zip(batches, infos, strict=True):
        records = v2_record_offsets_and_timestamps(raw) if magic >= 2 else [(info.last_offset, info.max_timestamp)]
        batch_best, batch_offset = -1, -1
        for offset, ts in records:
            if ts > batch_best:
                batch_best, batch_offset = ts, offset
        if batch_best > best:
            best, shallow = batch_best, batch_offset
    return AppendInfo(last, best, shallow)


def cleaner_append_info(batches: Sequence[bytes], rewritten: Sequence[bool] | None = None) -> AppendInfo:
    """``FilterResult`` of the batches one ``cleanInto`` round kept (uncompressed v2, or legacy entries).

    ``rewritten[i]``: batch i lost records in this round and was rebuilt
    (``buildRetainedRecordsInto``), so its ``maxOffset`` is its largest kept
    record's offset; a batch kept whole counts with its last offset, a batch
    kept empty (``RETAIN_EMPTY``) with its header's.  By default a v2 batch
    whose last record is below its last offset counts as rewritten.
    """
    max_offset, max_ts, shallow = -1, -1, -1
    for n, raw in enumerate(batches):
        info = batch_info(raw)
        kept = info.last_offset
        if info.magic >= 2:
            records = v2_record_offsets_and_timestamps(raw)
            if records and (rewritten is None or rewritten[n]):
                kept = max(o for o, _ in records)
        max_offset = max(max_offset, kept)
        if info.max_timestamp > max_ts:
            max_ts, shallow = info.max_timestamp, info.last_offset
    return AppendInfo(max_offset, max_ts, shallow)
