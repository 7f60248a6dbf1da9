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
be shown.  The log start offset is Kafka's (``LogLoader``: the partition's
entry in ``log-start-offset-checkpoint`` of its log directory, at least the
first segment's base offset; :func:`kseg.storage.checkpoints.log_start_offset`);
a fetch below it is OFFSET_OUT_OF_RANGE (``UnifiedLog.read`` checks the log
start offset first), even where its records are still on disk (retention
deletes whole segments later).  The log end offset is the next offset after the
last segment's last batch (``LogSegment.readNextOffset``).
"""

from __future__ import annotations

from kseg.errors import KsegError
from kseg.format.legacy import LegacyRecord
from kseg.format.v2_records import CHUNK, SPANS, Record, span_slice
from kseg.ops.lookup.log import IndexStep, PartitionLog, log_path, starts_batch
from kseg.storage import files
from kseg.storage.batch import V2Batch
from kseg.storage.partition import Segment
from kseg.storage.records import FileRecords
from kseg.valueclass import Value

FOUND, NEXT, BELOW_START, AT_END, PAST_END, EMPTY = "found", "next", "below-start", "at-end", "past-end", "empty"
UNREAD = "unread"  # the answer lies in bytes that do not frame a batch: no verdict on them


def detach(record: Record | LegacyRecord) -> Record | LegacyRecord:
    """The record with key, value and header bytes that no longer point into the reader's window."""
    key = None if record.key is None else bytes(record.key)
    value = None if record.value is None else bytes(record.value)
    if isinstance(record, Record):
        return record._replace(key=key, value=value, headers=tuple(record.headers))
    return record._replace(key=key, value=value)


def _spanned(buf: bytes | bytearray | memoryview, raw: tuple) -> Record | LegacyRecord:
    """A record decoded with its key and value as spans of ``buf``, detached."""
    offset, timestamp, sequence, key, value, headers = raw
    view = memoryview(buf)
    return detach(Record(offset, timestamp, sequence, span_slice(view, key), span_slice(view, value), headers))


class ScanStep(Value):
    """Step 3: batches read from the index position to the batch wanted."""

    _fields = ("start", "batches", "bytes", "found_position", "unread")

    def __init__(
        self, start: int, batches: int = 0, bytes: int = 0, found_position: int | None = None, unread: int = 0
    ) -> None:
        self.start, self.batches = start, batches
        self.bytes = bytes  # from ``start`` to the end of the last batch read
        self.found_position = found_position
        self.unread = unread  # bytes from the end of the last whole batch to the file's end that frame no batch

    @property
    def unread_at(self) -> int:
        return self.start + self.bytes

    @property
    def skipped_bytes(self) -> int:
        return (self.found_position if self.found_position is not None else self.start + self.bytes) - self.start


class SegmentStep(Value):
    """What one segment contributed to a lookup."""

    _fields = ("segment", "index", "scan", "outcome")

    def __init__(
        self, segment: Segment, index: IndexStep | None = None, scan: ScanStep | None = None, outcome: str = ""
    ) -> None:
        self.segment, self.index, self.scan, self.outcome = segment, index, scan, outcome


class OffsetLookup(Value):
    """The answer and the path taken.  ``batch`` is a live view into the
    segment's reader: render it before the :class:`PartitionLog` reads again."""

    _fields = (
        "target",
        "status",
        "log_start",
        "log_end",
        "segments",
        "steps",
        "batch",
        "batch_valid",
        "record",
        "notes",
        "log_start_file",
        "unread",
    )

    def __init__(
        self,
        target: int,
        status: str,
        log_start: int,
        log_end: int,
        segments: int,
        steps: list[SegmentStep] | None = None,
        batch: object | None = None,
        batch_valid: bool | None = None,
        record: Record | LegacyRecord | None = None,
        notes: list[str] | None = None,
        log_start_file: str | None = None,
        unread: str | None = None,
    ) -> None:
        self.target, self.status, self.segments = target, status, segments
        self.log_start, self.log_end = log_start, log_end
        self.steps: list[SegmentStep] = [] if steps is None else steps
        self.batch, self.batch_valid, self.record = batch, batch_valid, record
        self.notes: list[str] = [] if notes is None else notes
        self.log_start_file = log_start_file  # the log-start-offset-checkpoint ``log_start`` came from
        self.unread = unread  # UNREAD: the bytes not read, where, and why

    @property
    def found(self) -> bool:
        return self.status in (FOUND, NEXT)

    @property
    def segment(self) -> Segment | None:
        return self.steps[-1].segment if self.steps and self.record is not None else None


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
    if first <= step.offset:
        return None
    from kseg.storage.ranges import first_offset_known  # (a damaged index only: the ranges' rule)

    if first_offset_known(batch):  # a v0/v1 wrapper's offset is its last record's
        return (
            f"{step.path}: entry #{step.slot} (offset {step.offset}) points at a batch starting at offset "
            f"{first}; Kafka's read may skip records, the index is damaged (see kseg verify-index)"
        )
    return None


def first_record_at_or_after(batch, target: int, limit: int) -> Record | LegacyRecord | None:
    """The first record of ``batch`` with offset >= ``target``, detached; None if none.

    A v2 batch's records come as plain tuples a chunk at a time (what :meth:`V2Batch.records` decodes, with
    its errors), key and value as spans, only the one found made a :class:`Record`: in a chunk whose offsets
    run in steps of one it is found by its offset, in others by walking the chunk.  A lookup in a batch of
    thousands of records decodes them at half the cost and makes no object a record before it."""
    if isinstance(batch, V2Batch):
        for buf, records, consecutive in batch.form_chunks(limit, SPANS, CHUNK):
            if consecutive:
                i = max(0, target - records[0][0])
                if i < len(records):
                    return _spanned(buf, records[i])
                continue
            for raw in records:
                if raw[0] >= target:
                    return _spanned(buf, raw)
        return None
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
    result = OffsetLookup(target, FOUND, start, end, len(log.segments), log_start_file=log.log_start_file)
    if not log.segments:
        result.status = EMPTY
        return result
    if target < start:
        result.status = BELOW_START
        return result
    if target >= end:
        unread = log.log_end_unread()
        if unread is not None:  # the log end is only where reading stopped: no verdict past it
            result.status, result.unread = UNREAD, unread
        else:
            result.status = AT_END if target == end else PAST_END
        return result
    i = log.floor_segment(target)
    while i < len(log.segments):
        seg = log.segments[i]
        step = SegmentStep(seg)
        result.steps.append(step)
        step.index = index = log.index_step(seg, target)
        warning = check_index_position(log, seg, index)
        if warning:
            result.notes.append(warning)
        scan, rec = _scan_segment(log, seg, step, index, target, result)
        if rec is not None:
            result.status = FOUND if rec.offset == target else NEXT
            return result
        if scan.unread:  # the offset may be in bytes not read: no answer from the next segment
            result.status, result.unread = UNREAD, unread_note(seg, scan)
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
    shown = files.display(log_path(seg), store=seg.store)
    return (
        f"{shown}: at byte {scan.unread_at}: {scan.unread} bytes that do not frame a batch "
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


def _scan_segment(
    log: PartitionLog, seg: Segment, step: SegmentStep, index: IndexStep, target: int, result: OffsetLookup
) -> tuple[ScanStep, Record | LegacyRecord | None]:
    """Step 3 in one segment from ``index``'s position: the scan, and the record found (None: none)."""
    records, scan = start_scan(log, seg, index)
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
        return scan, rec
    step.outcome = "no batch holds an offset >= target"
    return scan, None
