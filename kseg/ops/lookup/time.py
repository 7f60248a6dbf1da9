"""Lookups by timestamp with Kafka's ListOffsets semantics (``UnifiedLog.fetchOffsetByTimestamp``).

For a timestamp T >= 0 (``searchOffsetInLocalLog``, ``LogSegment.findOffsetByTimestamp``,
``FileRecords.searchForTimestamp``):

1. the first segment, in base-offset order, whose largest timestamp >= T.
   Kafka reads a segment's largest timestamp from its time index's last
   entry (``maxTimestampSoFar``); when it is below 0 Kafka falls back to
   the ``.log`` file's modification time.  kseg uses the time index's last
   entry when the index is present and sane, and otherwise scans the
   segment's batch headers for the largest ``maxTimestamp`` (what Kafka's
   recovery would put in the rebuilt index) -- never the file's mtime.
2. in that segment's ``.timeindex`` the largest entry with timestamp <= T,
   else (-1, base offset) (``TimeIndex.lookup``);
3. that entry's offset (at least the log start offset) through the
   ``.index`` to a file position (``OffsetIndex.lookup``);
4. from there the first batch whose ``maxTimestamp`` >= T, and in it the
   first record with timestamp >= T and offset >= the log start offset;
   a batch with no such record is passed over.  When the segment has none,
   the answer is "no offset" -- Kafka does not go on to the next segment.

With well-formed indexes the batches before the position of step 3 all
have max timestamps below the entry's, so the answer is the first record
of the chosen segment, in file order, with timestamp >= T: with
out-of-order timestamps this is not what a binary search over record
timestamps finds.

The special targets (``ListOffsetsRequest``): ``EARLIEST_TIMESTAMP`` (-2)
answers the log start offset, ``LATEST_TIMESTAMP`` (-1) the log end offset,
both without a timestamp; ``MAX_TIMESTAMP`` (-3) the offset of the first
record holding the largest timestamp of the segment with the largest
``maxTimestampSoFar`` (``RecordBatch.offsetOfMaxTimestamp``).
"""

from __future__ import annotations

import functools
from types import MappingProxyType

from kseg.errors import CorruptRecordError
from kseg.format.indexes import TimestampOffset
from kseg.format.legacy import LegacyRecord
from kseg.format.v2_records import Record
from kseg.limits import NO_TIMESTAMP
from kseg.ops.lookup.offset import (
    EMPTY,
    FOUND,
    UNREAD,
    IndexStep,
    OffsetLookup,
    PartitionLog,
    ScanStep,
    detach,
    lookup_offset,
    scan_from,
    start_scan,
    unread_note,
)
from kseg.storage.partition import Segment
from kseg.valueclass import Value

EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP = -2, -1, -3
SPECIAL_NAMES = MappingProxyType(
    {EARLIEST_TIMESTAMP: "earliest", LATEST_TIMESTAMP: "latest", MAX_TIMESTAMP: "max-timestamp"}
)
NOT_FOUND = "not-found"
FROM_TIME_INDEX, FROM_BATCHES = "time index", "batches"


class Largest(Value):
    """A segment's largest timestamp, the offset Kafka pairs with it, and where it came from."""

    _fields = ("segment", "timestamp", "offset", "source")

    def __init__(self, segment: Segment, timestamp: int, offset: int, source: str) -> None:
        self.segment, self.timestamp, self.offset = segment, timestamp, offset
        self.source = source  # FROM_TIME_INDEX or FROM_BATCHES


class TimeLookup(Value):
    """The answer to a ListOffsets query and the path taken.  As with
    :class:`OffsetLookup`, ``batch`` is live until the log is read again."""

    _fields = (
        "target",
        "status",
        "log_start",
        "log_end",
        "segments",
        "skipped",
        "chosen",
        "time_slot",
        "time_entry",
        "index",
        "scan",
        "batch",
        "batch_valid",
        "record",
        "offset",
        "timestamp",
        "by_offset",
        "notes",
        "log_start_file",
        "unread",
    )

    def __init__(
        self,
        target: int,
        status: str = FOUND,
        log_start: int = 0,
        log_end: int = 0,
        segments: int = 0,
        skipped: list[Largest] | None = None,
        chosen: Largest | None = None,
        time_slot: int = -1,
        time_entry: TimestampOffset | None = None,
        index: IndexStep | None = None,
        scan: ScanStep | None = None,
        batch: object | None = None,
        batch_valid: bool | None = None,
        record: Record | LegacyRecord | None = None,
        offset: int | None = None,
        timestamp: int = NO_TIMESTAMP,
        by_offset: OffsetLookup | None = None,
        notes: list[str] | None = None,
        log_start_file: str | None = None,
        unread: str | None = None,
    ) -> None:
        self.target, self.status, self.segments = target, status, segments
        self.log_start, self.log_end = log_start, log_end
        self.skipped: list[Largest] = [] if skipped is None else skipped  # segments before the chosen one
        self.chosen = chosen
        self.time_slot = time_slot  # time-index entry used; -1: none <= target
        self.time_entry = time_entry  # what Kafka's TimeIndex.lookup returned
        self.index, self.scan = index, scan
        self.batch, self.batch_valid, self.record = batch, batch_valid, record
        self.offset = offset  # the ListOffsets answer
        self.timestamp = timestamp
        self.by_offset = by_offset  # for earliest: the read of the log start offset
        self.notes: list[str] = [] if notes is None else notes
        self.log_start_file = log_start_file  # the log-start-offset-checkpoint ``log_start`` came from
        self.unread = unread  # UNREAD: the bytes not read, where, and why

    @property
    def special(self) -> str | None:
        return SPECIAL_NAMES.get(self.target)

    @property
    def found(self) -> bool:
        return self.offset is not None


def largest_timestamp(log: PartitionLog, seg: Segment) -> Largest:
    """The segment's largest timestamp (``LogSegment.readMaxTimestampAndOffsetSoFar``):
    the time index's last entry, else a scan of the batch headers
    (``FileRecords.largestTimestampAfter(0)``), -1 when nothing has a timestamp.
    A preallocated time index (left by a crash) lacks the final entry a clean
    close adds, so its batches are scanned too."""
    tindex = log.time_index(seg)
    if tindex is not None and tindex.entries and seg.timeindex not in log.preallocated:
        ts, off = tindex.last_entry()
        return Largest(seg, ts, off, FROM_TIME_INDEX)
    best, best_offset = NO_TIMESTAMP, seg.base_offset
    try:
        for batch in log.records(seg).batches():
            if batch.max_timestamp > best:
                best, best_offset = batch.max_timestamp, batch.last_offset
    except CorruptRecordError as exc:
        log.notes.append(f"{exc.describe()}; the segment's largest timestamp is taken before it")
    return Largest(seg, best, best_offset, FROM_BATCHES)


def lookup_time(log: PartitionLog, target: int) -> TimeLookup:
    """``UnifiedLog.fetchOffsetByTimestamp(target)`` on a partition directory."""
    result = TimeLookup(
        target,
        log_start=log.log_start,
        log_end=log.log_end(),
        segments=len(log.segments),
        log_start_file=log.log_start_file,
    )
    if target == EARLIEST_TIMESTAMP:
        result.offset = result.log_start
        if log.segments and result.log_start < result.log_end:
            _attach_offset_lookup(result, lookup_offset(log, result.log_start))
        return result
    if target == LATEST_TIMESTAMP:
        result.offset = result.log_end
        return result
    if not log.segments:
        result.status = EMPTY
        return result
    if target == MAX_TIMESTAMP:
        return _max_timestamp(log, result)
    if target < 0:
        raise ValueError(f"unsupported special timestamp {target}")
    for seg in log.segments:
        largest = largest_timestamp(log, seg)
        if largest.timestamp >= target:
            result.chosen = largest
            break
        result.skipped.append(largest)
    if result.chosen is None:
        result.status = NOT_FOUND
        return result
    _search_segment(log, result, result.chosen.segment)
    return result


def _attach_offset_lookup(result: TimeLookup, by_offset: OffsetLookup) -> None:
    result.by_offset = by_offset
    result.batch, result.batch_valid, result.record = by_offset.batch, by_offset.batch_valid, by_offset.record
    result.notes.extend(by_offset.notes)


def _search_segment(log: PartitionLog, result: TimeLookup, seg: Segment) -> None:
    """``LogSegment.findOffsetByTimestamp(target, logStartOffset)`` on ``seg`` (the chosen segment)."""
    target = result.target
    tindex = log.time_index(seg)
    if tindex is not None:
        result.time_slot = tindex_slot = _slot(tindex, target)
        result.time_entry = (
            tindex.lookup(target) if tindex_slot >= 0 else TimestampOffset(NO_TIMESTAMP, seg.base_offset)
        )
        problem = tindex.order_problem()
        if problem:
            result.notes.append(
                f"{tindex.path}: timestamps out of order, {problem}; Kafka's binary search "
                "may start past matching records (see kseg verify-index)"
            )
    else:
        result.time_entry = TimestampOffset(NO_TIMESTAMP, seg.base_offset)
    wanted = max(result.time_entry.offset, result.log_start)
    result.index = log.index_step(seg, wanted)
    records, scan = start_scan(log, seg, result.index)
    result.scan = scan
    for batch in scan_from(records, scan.start, scan, result.notes):
        if batch.max_timestamp < target:
            continue
        for rec in batch.records(log.limit):
            if rec.timestamp >= target and rec.offset >= result.log_start:
                scan.found_position = batch.position
                result.batch, result.record = batch, detach(rec)
                result.batch_valid = batch.is_valid()
                result.offset, result.timestamp = rec.offset, rec.timestamp
                return
    if scan.unread:  # the record may be in bytes not read: not Kafka's -1, no answer at all
        result.status, result.unread = UNREAD, unread_note(seg, scan)
        return
    result.status = NOT_FOUND


def _slot(tindex, target: int) -> int:
    """The slot ``TimeIndex.lookup`` reads (``largestLowerBoundSlotFor``), -1 if none."""
    return tindex.lookup_slot(target)


def _max_timestamp(log: PartitionLog, result: TimeLookup) -> TimeLookup:
    """ListOffsets MAX_TIMESTAMP: the segment with the largest ``maxTimestampSoFar``
    (the first of equals, Scala's ``maxBy``), the batch from that entry's indexed
    position whose max timestamp equals it, and the first record holding it."""
    largests = (largest_timestamp(log, seg) for seg in log.segments)  # lookup_time: at least one segment
    best = functools.reduce(lambda a, b: b if b.timestamp > a.timestamp else a, largests)
    result.chosen = best
    seg = best.segment
    result.index = log.index_step(seg, best.offset)
    records, scan = start_scan(log, seg, result.index)
    result.scan = scan
    for batch in records.batches(scan.start):
        scan.batches += 1
        scan.bytes = batch.position + batch.size - scan.start
        if batch.max_timestamp != best.timestamp:
            continue
        if batch.magic == 0:
            break  # offsetOfMaxTimestamp is empty for magic 0
        for rec in batch.records(log.limit):
            if rec.timestamp == best.timestamp:
                scan.found_position = batch.position
                result.batch, result.record = batch, detach(rec)
                result.batch_valid = batch.is_valid()
                result.offset, result.timestamp = rec.offset, rec.timestamp
                return result
        break  # Kafka's find() stops at the first batch with that max timestamp
    result.status = NOT_FOUND
    return result
