"""Partitions written the way each Kafka version's broker wrote them, and an oracle for Kafka's
``--verify-index-only`` (``DumpLogSegments.dumpIndex``/``dumpTimeIndex``, the same on 2.0..trunk).

Every builder follows the cited Kafka source through :mod:`kseg.testing` (``SegmentWriter``
with ``per_batch_index=False``: ``LogSegment.append`` before KAFKA-806, one index decision per
append; :mod:`kseg.testing.appendinfo`: what the caller passed to it).  Used by
``tests/cli/test_verify_versions.py``; each builder is a row of the version table in
``docs/verify-index.md``.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Callable

from kseg.testing.appendinfo import cleaner_append_info, leader_append_info, v2_record_offsets_and_timestamps
from kseg.testing.framing import batch_info, iter_batch_bytes, iter_batch_infos
from kseg.testing.legacy import build_legacy
from kseg.testing.segment import SegmentWriter
from kseg.testing.v2 import RecordSpec, build_empty_v2_batch, build_v2_batch

TS = 1_730_000_000_000
VALUE = b"v" * 900  # five records a batch: ~4.6 KB, so about one index entry per append at the default 4096


def _records(n: int, first_ts: int, peak: int = 2) -> list[RecordSpec]:
    """``n`` records; the one at index ``peak`` holds the largest timestamp (not the last one)."""
    return [RecordSpec(b"k%d" % i, VALUE, first_ts + (50 if i == peak else i)) for i in range(n)]


def leader_uncompressed(root: Path, kafka: str) -> Path:
    """A leader's produce appends, uncompressed v2 CreateTime, one batch each.

    ``LogValidator.assignOffsetsNonCompressed``: up to 3.6 (2.0, 2.8, 3.4:
    core/src/main/scala/kafka/log/LogValidator.scala; 3.5, 3.6:
    storage/src/main/java/org/apache/kafka/storage/internals/log/LogValidator.java)
    ``shallowOffsetOfMaxTimestamp`` is the offset of the first record holding
    the largest timestamp; from 3.7 (3.7 branch, same file, commit e905ef1;
    3.8/3.9 after KAFKA-16310) it is the batch's last offset.
    ``LogSegment.append`` puts it in the time index (2.8
    core/src/main/scala/kafka/log/LogSegment.scala ``append``;
    3.7+ storage/.../LogSegment.java), and ``onBecomeInactiveSegment`` /
    ``close`` write the final entry from it.
    """
    d = root / f"leader-{kafka}-0"
    w = SegmentWriter(d, 0, per_batch_index=False)
    for b in range(12):
        raw = build_v2_batch(_records(5, TS + b * 100), base_offset=5 * b)
        w.append([raw], leader_append_info([raw], kafka))
    w.close()
    return d


def leader_compressed(root: Path, kafka: str) -> Path:
    """Compressed (gzip) v2 appends: ``validateMessagesAndAssignOffsetsCompressed`` returns the
    last offset (in place) on every branch 2.0..3.9 (LogValidator, as above)."""
    d = root / f"leader-gzip-{kafka}-0"
    w = SegmentWriter(d, 0, per_batch_index=False, index_interval_bytes=100)
    for b in range(10):
        raw = build_v2_batch(_records(5, TS + b * 100), base_offset=5 * b, codec="gzip")
        w.append([raw], leader_append_info([raw], kafka))
    w.close()
    return d


def leader_log_append_time(root: Path, kafka: str) -> Path:
    """v2 LogAppendTime: ``assignOffsetsNonCompressed`` sets the batch max timestamp to the append
    time and the offset to the last offset (``offsetCounter.value - 1``; 2.8 LogValidator.scala)."""
    d = root / f"leader-lat-{kafka}-0"
    w = SegmentWriter(d, 0, per_batch_index=False)
    for b in range(10):
        raw = build_v2_batch(
            _records(5, TS + b * 100),
            base_offset=5 * b,
            timestamp_type="LogAppendTime",
            log_append_time=TS + 10_000 + b,
        )
        w.append([raw], leader_append_info([raw], kafka))
    w.close()
    return d


def leader_v1(root: Path, kafka: str, timestamp_type: str = "CreateTime") -> Path:
    """Message format v1, uncompressed: one shallow entry per record, several per produce request
    (``assignOffsetsNonCompressed`` iterates the entries as batches: the first entry holding the
    largest timestamp, or with LogAppendTime ``initialOffset``; 2.8 LogValidator.scala).  One
    offset-index entry per append (pre-KAFKA-806 ``LogSegment.append``)."""
    d = root / f"leader-v1-{timestamp_type.lower()}-{kafka}-0"
    w = SegmentWriter(d, 0, magic=1, per_batch_index=False)
    for b in range(10):
        msgset = build_legacy(
            _records(5, TS + b * 100),
            magic=1,
            base_offset=5 * b,
            timestamp_type=timestamp_type,
            log_append_time=TS + 10_000 + b if timestamp_type == "LogAppendTime" else None,
        )
        entries = list(iter_batch_bytes(msgset))
        w.append(entries, leader_append_info(entries, kafka))
    w.close()
    return d


def leader_mixed_with_conversion(root: Path, kafka: str) -> Path:
    """A leader on a v2 log taking requests from v2 clients (in place, as ``leader_uncompressed``) and
    from v1 clients, converted to v2 (``convertAndAssignOffsetsNonCompressed``: the result is
    ``MemoryRecordsBuilder.info``, whose ``shallowOffsetOfMaxTimestamp`` is the last offset for magic 2;
    2.8 LogValidator.scala, clients/.../MemoryRecordsBuilder.java ``info``), alternately, in one segment:
    some time-index entries name a record inside a batch, others a batch's last offset."""
    d = root / f"leader-mixed-{kafka}-0"
    w = SegmentWriter(d, 0, per_batch_index=False)
    for b in range(12):
        raw = build_v2_batch(_records(5, TS + b * 100), base_offset=5 * b)
        info = leader_append_info([raw], kafka)
        if b % 2:  # up-converted from v1: the builder's info names the last offset
            info = info._replace(shallow_offset_of_max_timestamp=info.largest_offset)
        w.append([raw], info)
    w.close()
    return d


def leader_v0(root: Path, kafka: str) -> Path:
    """Message format v0: no timestamps (``assignOffsetsNonCompressed`` skips magic 0), so no
    time-index entry; one offset-index entry per multi-entry append."""
    d = root / f"leader-v0-{kafka}-0"
    w = SegmentWriter(d, 0, magic=0, per_batch_index=False)
    for b in range(10):
        entries = list(iter_batch_bytes(build_legacy(_records(5, TS), magic=0, base_offset=5 * b)))
        w.append(entries, leader_append_info(entries, kafka))
    w.close()
    return d


def follower(root: Path, kafka: str) -> Path:
    """A follower's fetches: several leader batches per ``LogSegment.append``, the offsets as
    given; ``analyzeAndValidateRecords`` (2.8 core/src/main/scala/kafka/log/Log.scala) names the
    last offset of the first batch holding the largest timestamp, and the offset index gets the
    last offset of the whole append at its start."""
    d = root / f"follower-{kafka}-0"
    w = SegmentWriter(d, 0, per_batch_index=False)
    offset = 0
    for _fetch in range(6):
        batches = []
        for _ in range(3):
            batches.append(build_v2_batch(_records(2, TS + offset * 10), base_offset=offset))
            offset += 2
        w.append(batches)
    w.close()
    return d


def cleaned(root: Path, kafka: str) -> Path:
    """A segment the log cleaner wrote (2.8 core/src/main/scala/kafka/log/LogCleaner.scala
    ``cleanSegments``/``cleanInto``; clients/.../MemoryRecords.java ``filterTo``).

    * The cleaned segment takes the base offset of the first segment of its group (0) while its
      first kept batch starts later (3).
    * Each ``cleanInto`` round appends every kept batch of a read chunk at once:
      ``dest.append(largestOffset = result.maxOffset, ...)``.
    * A batch that lost records is rebuilt (``buildRetainedRecordsInto``) with gaps between its
      record offsets and its original last offset (``overrideLastOffset``); ``maxOffset`` is its
      largest *kept* record's offset, so the offset index names an offset inside that batch.
    * A producer's batch whose records were all removed is kept empty (``RETAIN_EMPTY``,
      ``writeEmptyHeader``) for producer state.
    """
    d = root / f"cleaned-{kafka}-0"
    w = SegmentWriter(d, 0, per_batch_index=False)
    offset = 3
    for chunk in range(5):
        whole = build_v2_batch(_records(5, TS + chunk * 1000), base_offset=offset)  # kept whole
        empty = build_empty_v2_batch(
            base_offset=offset + 5,
            last_offset=offset + 9,
            timestamp=TS + chunk * 1000,
            producer_id=7,
            producer_epoch=0,
            base_sequence=chunk * 5,
        )
        kept = [
            RecordSpec(b"c%d" % i, VALUE, TS + chunk * 1000 + 100 + i, offset_delta=d_)
            for i, d_ in enumerate((0, 2, 3, 6))
        ]  # offsets +10, +12, +13, +16 kept; +17..+19 removed
        rebuilt = build_v2_batch(kept, base_offset=offset + 10, last_offset_delta=9)
        batches = [whole, empty, rebuilt]
        w.append(batches, cleaner_append_info(batches, rewritten=[False, False, True]))
        offset += 25  # the next chunk starts after a gap (batches the cleaner removed)
    w.close()
    return d


def crashed_active_segment(root: Path, kafka: str, appends: int = 1) -> Path:
    """An active segment left by an unclean shutdown (or copied from a live broker): the
    ``.index``/``.timeindex`` keep their preallocated size (``segment.index.bytes``,
    ``AbstractIndex`` resize on open) with a zero tail; with one small append, no entry was ever
    written, so the files are all zeros."""
    d = root / f"crashed-{appends}-{kafka}-0"
    w = SegmentWriter(d, 0, per_batch_index=False, max_index_size=12 * 100)
    for b in range(appends):
        raw = build_v2_batch(_records(5, TS + b * 100), base_offset=5 * b)
        w.append([raw], leader_append_info([raw], kafka))
    w.abandon()
    return d


def untrimmed_rolled_segment(root: Path, kafka: str) -> Path:
    """KAFKA-10207 (apache/kafka PR #8936, fixed in 2.6/2.7): a segment rolled without trimming its
    preallocated ``.index``/``.timeindex``, so the zero tail stays on a segment that is not the last;
    the next segment was written normally (``onBecomeInactiveSegment`` trims, 2.8 LogSegment.scala)."""
    d = root / f"untrimmed-{kafka}-0"
    w = SegmentWriter(d, 0, per_batch_index=False, max_index_size=12 * 100)
    for b in range(6):
        raw = build_v2_batch(_records(5, TS + b * 100), base_offset=5 * b)
        w.append([raw], leader_append_info([raw], kafka))
    w.abandon()
    w2 = SegmentWriter(d, 30, per_batch_index=False)
    for b in range(6, 12):
        raw = build_v2_batch(_records(5, TS + b * 100), base_offset=5 * b)
        w2.append([raw], leader_append_info([raw], kafka))
    w2.close()
    return d


BUILDERS: dict[str, Callable[[Path, str], Path]] = {
    "leader_uncompressed": leader_uncompressed,
    "leader_compressed": leader_compressed,
    "leader_log_append_time": leader_log_append_time,
    "leader_v1": leader_v1,
    "leader_v0": leader_v0,
    "leader_mixed_with_conversion": leader_mixed_with_conversion,
    "follower": follower,
    "cleaned": cleaned,
    "crashed_active_segment": crashed_active_segment,
}


# -- an oracle for Kafka's --verify-index-only -------------------------------------------------------

OFFSET_ENTRY = struct.Struct(">ii")
TIME_ENTRY = struct.Struct(">qi")


def _entries(path: Path, entry: struct.Struct) -> list[tuple]:
    data = path.read_bytes()
    return [entry.unpack_from(data, i) for i in range(0, len(data) - len(data) % entry.size, entry.size)]


def _record_max_timestamp(raw: bytes) -> int:
    info = batch_info(raw)
    if info.magic < 2 or info.attributes & 0x07 or info.attributes & 0x08:  # legacy entry, compressed, LogAppendTime
        return info.max_timestamp  # the records' timestamps as Kafka reads them have this maximum
    return max((ts for _, ts in v2_record_offsets_and_timestamps(raw)), default=-1)


def kafka_verify_index_only(segment_log: Path) -> set[tuple[str, int]]:
    """(file suffix, entry) pairs Kafka's ``DumpLogSegments --verify-index-only`` reports for one segment:
    ``dumpIndex`` (mismatch: the batch at the position does not end at the offset) and ``dumpTimeIndex``
    (offset not found: the first batch ending at or after the offset, scanning from
    ``OffsetIndex.lookup(offset)``, does not end there; else the batch's record max timestamp differs, or
    the timestamp is not above the previous one).  Both stop at an entry i > 0 naming the base offset."""
    base = int(segment_log.stem)
    data = segment_log.read_bytes()
    infos = list(iter_batch_infos(data))
    by_pos = {i.position: i for i in infos}
    out: set[tuple[str, int]] = set()
    offsets = [(base + rel, pos) for rel, pos in _entries(segment_log.with_suffix(".index"), OFFSET_ENTRY)]
    for n, (offset, pos) in enumerate(offsets):
        if offset == base and n > 0:
            break
        if by_pos[pos].last_offset != offset:
            out.add((".index", n))

    def lookup(target: int) -> int:  # OffsetIndex.lookup: largestLowerBoundSlotFor, over every entry
        if not offsets or offsets[0][0] > target:
            return 0
        lo, hi = 0, len(offsets) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if offsets[mid][0] == target:
                return offsets[mid][1]
            if offsets[mid][0] < target:
                lo = mid
            else:
                hi = mid - 1
        return offsets[lo][1]

    prev = -1
    for n, (ts, rel) in enumerate(_entries(segment_log.with_suffix(".timeindex"), TIME_ENTRY)):
        offset = base + rel
        if offset == base and n > 0:
            break
        start = lookup(offset)
        batch = next((i for i in infos if i.position >= start and i.last_offset >= offset), None)
        if batch is None or batch.last_offset != offset:
            out.add((".timeindex", n))
        else:
            raw = data[batch.position : batch.position + batch.size]
            if _record_max_timestamp(raw) != ts or prev >= ts:
                out.add((".timeindex", n))
        prev = ts
    return out
