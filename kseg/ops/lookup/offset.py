"""Lookups by offset along Kafka's own read path (``LocalLog.read``, ``LogSegment.read``).

Kafka serves a fetch at offset T like this:

1. the segment with the largest base offset <= T (``LogSegments.floorSegment``);
2. in its ``.index`` the largest entry with offset <= T, else (base offset,
   position 0) (``OffsetIndex.lookup``, :meth:`OffsetIndexView.lookup`);
3. from that position, the first batch whose last offset >= T
   (``FileRecords.searchForOffsetWithSize``);
4. when no batch of the segment reaches T (the segment's tail was compacted
   away), the next segment, from its start (``LocalLog.read`` moves to
   ``higherSegment``).

A consumer then skips the records below T, so the answer is the first
record with offset >= T from that batch on: T itself, or in a compacted log
the next record kept.  :class:`PartitionLog` opens a partition directory for
such lookups; :func:`lookup_offset` records every step so the path taken can
be shown.  The log start offset is the first segment's base offset (the
broker's ``log-start-offset-checkpoint`` lives outside the partition
directory), the log end offset the next offset after the last segment's last
batch (``LogSegment.readNextOffset``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from kseg.errors import CorruptIndexError, CorruptRecordError, InputError, KsegError
from kseg.format.indexes import OffsetIndexView, TimeIndexView
from kseg.format.legacy import LegacyRecord
from kseg.format.v2 import java_long
from kseg.format.v2_records import Record
from kseg.storage import files, location
from kseg.storage.partition import Segment, is_partition_dir, scan_partition
from kseg.storage.records import FileRecords

LOOKUP_WINDOW = 1 << 20  # a lookup reads one index interval and one batch; no need for the 8 MiB dump window
FOUND, NEXT, BELOW_START, AT_END, PAST_END, EMPTY = "found", "next", "below-start", "at-end", "past-end", "empty"
UNREAD = "unread"  # the answer lies in bytes that do not frame a batch: no verdict on them


def detach(record: Record | LegacyRecord) -> Record | LegacyRecord:
    """The record with key, value and header bytes that no longer point into the reader's window."""
    key, value = record.key, record.value
    fields = {"key": None if key is None else bytes(key), "value": None if value is None else bytes(value)}
    if isinstance(record, Record):
        fields["headers"] = tuple(record.headers)
    return record._replace(**fields)


@dataclass
class IndexStep:
    """Step 2: the ``.index`` entry Kafka's ``OffsetIndex.lookup`` returns."""

    path: str | None  # None: no usable .index, the scan starts at position 0
    entries: int  # entries searched
    slot: int  # -1: no entry <= target, Kafka returns (base offset, 0)
    offset: int
    position: int
    base_offset: int
    target: int = 0  # the offset looked up

    @property
    def relative_offset(self) -> int:
        return self.offset - self.base_offset


@dataclass
class ScanStep:
    """Step 3: batches read from the index position to the batch wanted."""

    start: int
    batches: int = 0
    bytes: int = 0  # from ``start`` to the end of the last batch read
    found_position: int | None = None
    unread: int = 0  # bytes from the end of the last whole batch to the file's end that frame no batch

    @property
    def unread_at(self) -> int:
        return self.start + self.bytes

    @property
    def skipped_bytes(self) -> int:
        return (self.found_position if self.found_position is not None else self.start + self.bytes) - self.start


@dataclass
class SegmentStep:
    """What one segment contributed to a lookup."""

    segment: Segment
    index: IndexStep | None = None
    scan: ScanStep | None = None
    outcome: str = ""


@dataclass
class OffsetLookup:
    """The answer and the path taken.  ``batch`` is a live view into the
    segment's reader: render it before the :class:`PartitionLog` reads again."""

    target: int
    status: str
    log_start: int
    log_end: int
    segments: int
    steps: list[SegmentStep] = field(default_factory=list)
    batch: object | None = None
    batch_valid: bool | None = None
    record: Record | LegacyRecord | None = None
    notes: list[str] = field(default_factory=list)
    unread: str | None = None  # UNREAD: the bytes not read, where, and why

    @property
    def found(self) -> bool:
        return self.status in (FOUND, NEXT)

    @property
    def segment(self) -> Segment | None:
        return self.steps[-1].segment if self.steps and self.record is not None else None


class PartitionLog:
    """A partition directory opened read-only for lookups.

    Segments are those with a ``.log`` file, in base-offset order; each log
    is opened on first use and kept open; index files are read whole (they
    are small) and checked as Kafka would before use.
    """

    def __init__(self, path: str, limit: int, window: int = LOOKUP_WINDOW) -> None:
        if not files.exists(path):
            raise InputError("no such file or directory", path=path)
        if files.isfile(path):
            path = files.parent(path)
        if not location.is_remote(path) and os.path.isdir(path):
            try:  # a directory that cannot be listed says so (the OS's reason), as in every command
                os.listdir(path)
            except OSError as exc:
                raise InputError(f"cannot list the directory: {exc.strerror or exc}", path=path) from None
        if not is_partition_dir(path):
            raise InputError(
                "not a partition directory: no segment files in it",
                path=path,
                hint="give one partition directory such as orders-3/",
            )
        self.path = path
        self.limit = limit
        self.window = window
        self.notes: list[str] = []
        part = scan_partition(path, self.notes)
        for seg in part.segments:
            if seg.log is None:
                names = ", ".join(os.path.basename(p) for p in (seg.index, seg.timeindex, seg.txnindex) if p)
                self.notes.append(f"{names}: no {seg.name}.log beside it; ignored")
        self.segments = [s for s in part.segments if s.log is not None]
        self._records: dict[int, FileRecords] = {}
        self._offset_index: dict[int, OffsetIndexView | None] = {}
        self._time_index: dict[int, TimeIndexView | None] = {}
        self._log_end: int | None = None
        self.preallocated: set[str] = set()  # index files with a zero tail (never closed: no final entry)

    # -- files ----------------------------------------------------------------------
    def __enter__(self) -> "PartitionLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for records in self._records.values():
            records.close()
        self._records.clear()

    def records(self, seg: Segment) -> FileRecords:
        r = self._records.get(seg.base_offset)
        if r is None:
            r = self._records[seg.base_offset] = FileRecords(seg.log, window=self.window)
        return r

    def offset_index(self, seg: Segment) -> OffsetIndexView | None:
        """The segment's ``.index`` without a preallocated zero tail; ``None`` (with a
        note) when it is missing or fails Kafka's sanity check."""
        if seg.base_offset not in self._offset_index:
            self._offset_index[seg.base_offset] = self._load(seg, seg.index, files.INDEX, OffsetIndexView, 8)
        return self._offset_index[seg.base_offset]

    def time_index(self, seg: Segment) -> TimeIndexView | None:
        if seg.base_offset not in self._time_index:
            self._time_index[seg.base_offset] = self._load(seg, seg.timeindex, files.TIME_INDEX, TimeIndexView, 12)
        return self._time_index[seg.base_offset]

    def _load(self, seg: Segment, path: str | None, sfx: str, view, size: int):
        name = seg.name + sfx
        if path is None:
            self.notes.append(f"{name}: missing; reading the log from position 0 instead")
            return None
        try:
            data = files.open_index(path)
            whole = view(data, seg.base_offset, files.display(path))
            used = whole.used_entries()
        except InputError as exc:
            self.notes.append(f"{exc.describe()}; reading the log from position 0 instead")
            return None
        index = whole
        if used < whole.entries:
            self.notes.append(
                f"{name}: {whole.entries} slots of which {used} used, the rest zero "
                "(a preallocated index, as left by a crash); using the used entries"
            )
            index = whole.limited(used)
            self.preallocated.add(path)
        try:
            index.sanity_check()
        except CorruptIndexError as exc:
            self.notes.append(f"{exc.describe()}; reading the log from position 0 instead")
            return None
        return index

    # -- offsets of the log -------------------------------------------------------------
    @property
    def log_start(self) -> int:
        return self.segments[0].base_offset if self.segments else 0

    def log_end(self) -> int:
        """``UnifiedLog.logEndOffset``: the active (last) segment's ``readNextOffset``."""
        if self._log_end is None:
            self._log_end = self.next_offset(self.segments[-1]) if self.segments else 0
        return self._log_end

    def next_offset(self, seg: Segment) -> int:
        """``LogSegment.readNextOffset``: from the last index entry, the last batch's
        next offset, else the base offset.  Invalid bytes at the end are noted."""
        records = self.records(seg)
        index = self.offset_index(seg)
        start = index.last_entry().position if index is not None else 0
        if not 0 <= start <= records.size:
            start = 0
        if index is not None and start != 0 and not starts_batch(records, start):
            start = self.recover_start(seg, index.entries - 1, start, "the log end is read")
        nxt, end = seg.base_offset, start
        try:
            for batch in records.batches(start):
                nxt, end = java_long(batch.last_offset + 1), batch.position + batch.size
                if nxt <= batch.base_offset:  # baseOffset + lastOffsetDelta wrapped past 2^63-1, as a long does
                    self.notes.append(
                        f"{seg.name}.log: the batch at position {batch.position} has its last offset "
                        f"past 2^63-1 (base offset {batch.base_offset}); Kafka's long arithmetic "
                        f"wraps the log end offset to {nxt}"
                    )
        except CorruptRecordError as exc:
            self.notes.append(f"{exc.describe()}; the log end is taken before it")
            return nxt
        if end < records.size:
            self.notes.append(
                f"{seg.name}.log: {records.size - end} invalid bytes at the end "
                f"(from position {end}); Kafka's recovery would truncate them"
            )
        return nxt

    def recover_start(self, seg: Segment, slot: int, position: int, what: str) -> int:
        """The position of the last ``.index`` entry before ``slot`` at which a whole valid batch starts
        (at most :data:`RECOVER_ENTRIES` entries back), else 0: where a read goes when the entry at
        ``slot`` points into a batch's middle.  A note says so."""
        index, records = self.offset_index(seg), self.records(seg)
        found, at = 0, "the segment start"
        for s in range(slot - 1, max(-1, slot - 1 - RECOVER_ENTRIES), -1):
            p = index.entry(s).position
            if 0 <= p < position and starts_batch(records, p):
                found, at = p, f"entry #{s}"
                break
        self.notes.append(
            f"{index.path}: entry #{slot} points at position {position}, where no whole valid batch "
            f"starts (the index is damaged, see kseg verify-index); {what} from position {found} "
            f"({at}) instead"
        )
        return found

    def floor_segment(self, offset: int) -> int:
        """Index in :attr:`segments` of the largest base offset <= ``offset``; -1 if none."""
        lo, hi = 0, len(self.segments) - 1
        found = -1
        while lo <= hi:
            mid = (lo + hi) // 2
            if self.segments[mid].base_offset <= offset:
                found, lo = mid, mid + 1
            else:
                hi = mid - 1
        return found

    def index_step(self, seg: Segment, target: int) -> IndexStep:
        """``OffsetIndex.lookup(target)`` on the segment's index, as a step."""
        index = self.offset_index(seg)
        if index is None:
            return IndexStep(None, 0, -1, seg.base_offset, 0, seg.base_offset, target)
        slot = index.lookup_slot(target)
        offset, position = index.lookup(target)
        return IndexStep(index.path, index.entries, slot, offset, position, seg.base_offset, target)


RECOVER_ENTRIES = 64  # index entries tried backwards before reading a segment from its start


def starts_batch(records: FileRecords, position: int) -> bool:
    """Whether a whole batch with a valid CRC starts at ``position`` (what a genuine index entry names)."""
    try:
        batch = records.batch_at(position)
    except KsegError:
        return False
    return batch is not None and batch.is_valid()


def check_index_position(log: PartitionLog, seg: Segment, step: IndexStep) -> str | None:
    """A warning when the entry Kafka found cannot be right: its position is not
    inside the log, or the batch there starts after the entry's offset (a
    genuine entry points at a batch holding offsets <= its own)."""
    if step.slot < 0:
        return None
    records = log.records(seg)
    if not 0 <= step.position <= records.size:
        return (
            f"{step.path}: entry #{step.slot} points at position {step.position}, outside the log of "
            f"{records.size} bytes; the index is damaged (see kseg verify-index)"
        )
    try:
        batch = records.batch_at(step.position)
    except KsegError:
        batch = None
    if batch is None:  # no batch starts there: the scan recovers from an earlier entry and says so
        return None
    first = batch.base_offset
    if first > step.offset:
        return (
            f"{step.path}: entry #{step.slot} (offset {step.offset}) points at a batch starting at offset "
            f"{first}; Kafka's read may skip records, the index is damaged (see kseg verify-index)"
        )
    return None


def first_record_at_or_after(batch, target: int, limit: int) -> Record | LegacyRecord | None:
    """The first record of ``batch`` with offset >= ``target``, detached; None if none."""
    for rec in batch.records(limit):
        if rec.offset >= target:
            return detach(rec)
    return None


def lookup_offset(log: PartitionLog, target: int) -> OffsetLookup:
    """Kafka's read of ``target`` (module docstring), every step recorded.

    Raises :class:`KsegError` (positioned) when a batch on the way cannot be
    read; a scan stopped by a corrupt length field ends the segment's search.
    """
    start, end = log.log_start, log.log_end()
    result = OffsetLookup(target, FOUND, start, end, len(log.segments))
    if not log.segments:
        result.status = EMPTY
        return result
    if target < start:
        result.status = BELOW_START
        return result
    if target >= end:
        result.status = AT_END if target == end else PAST_END
        return result
    i = log.floor_segment(target)
    while i < len(log.segments):
        seg = log.segments[i]
        step = SegmentStep(seg)
        result.steps.append(step)
        step.index = log.index_step(seg, target)
        warning = check_index_position(log, seg, step.index)
        if warning:
            result.notes.append(warning)
        if _scan_segment(log, seg, step, target, result):
            result.status = FOUND if result.record.offset == target else NEXT
            return result
        if step.scan.unread:  # the offset may be in bytes not read: no answer from the next segment
            result.status, result.unread = UNREAD, unread_note(seg, step.scan)
            return result
        i += 1
    result.status = PAST_END  # every batch after the index position ends below target
    return result


def scan_from(records, position: int, scan: ScanStep, notes: list[str]):
    """Batches from ``position`` on, counted into ``scan``.  A corrupt length field raises
    :class:`CorruptRecordError`, as Kafka's iteration throws there (``FileLogInputStream.nextBatch``):
    the fetch fails, it never moves on to the next segment and answers from data past the corruption."""
    for batch in records.batches(position):
        scan.batches += 1
        scan.bytes = batch.position + batch.size - position
        yield batch
    scan.unread = max(0, records.end - scan.unread_at)  # a partial batch: Kafka's iteration ends before it


def unread_note(seg: Segment, scan: ScanStep) -> str:
    """Where a scan stopped short of the segment's end, and why: the bytes after the last whole batch
    frame none (``FileLogInputStream.nextBatch`` returns null there), so what they hold is not known."""
    return (
        f"{files.display(seg.log)}: at byte {scan.unread_at}: {scan.unread} bytes that do not frame a batch "
        "(a partial batch, not read; Kafka's read moves on to the next segment past them)"
    )


def start_scan(log: PartitionLog, seg: Segment, index: IndexStep) -> tuple[FileRecords, ScanStep]:
    """Step 3's start: the segment's reader and a scan from the position the index gave
    (position 0 when that lies outside the log)."""
    records = log.records(seg)
    position = index.position if 0 <= index.position <= records.size else 0
    if index.slot >= 0 and position != 0 and not starts_batch(records, position):
        position = log.recover_start(seg, index.slot, position, "the scan reads")
    return records, ScanStep(position)


def _scan_segment(log: PartitionLog, seg: Segment, step: SegmentStep, target: int, result: OffsetLookup) -> bool:
    records, scan = start_scan(log, seg, step.index)
    step.scan = scan
    for batch in scan_from(records, scan.start, scan, result.notes):
        if batch.last_offset < target:
            continue
        rec = first_record_at_or_after(batch, target, log.limit)
        if rec is None:
            continue  # an empty batch (count 0) or no record >= target in it: read on
        scan.found_position = batch.position
        result.batch, result.record = batch, rec
        result.batch_valid = batch.is_valid()
        step.outcome = "found"
        return True
    step.outcome = "no batch holds an offset >= target"
    return False
