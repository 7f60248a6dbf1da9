"""Tombstones and control batches still in a log, against the cleaner's delete rules (``kseg compaction``).

What the log cleaner (``LogCleaner.Cleaner.cleanInto`` with its ``RecordFilter``) removes:

* a **tombstone** (a record with a key and a null value) of a magic-2 batch is
  dropped once the batch carries a delete horizon (attribute bit 0x40,
  ``DefaultRecordBatch.DELETE_HORIZON_FLAG``; the horizon is then stored in
  ``baseTimestamp``, KIP-534) and the cleaning time is past it
  (``shouldRetainRecord``).  The first cleaning that finds a tombstone sets
  the horizon to that time + ``delete.retention.ms``
  (``MemoryRecords.filterTo``; default 86400000 ms, ``LogConfig.DEFAULT_DELETE_RETENTION_MS``);
* a **control batch** (transaction marker) is dropped the same way, once no
  data of its transaction remains (``shouldDiscardBatch``) and its horizon has passed;
* a tombstone of a magic 0/1 batch is dropped when its segment was last
  modified before the last cleaned segment's modification time minus
  ``delete.retention.ms`` (``legacyDeleteHorizonMs``).

This module counts, per segment, tombstones and control batches, their
timestamps, and the batches with and without a horizon (and how many are
past it at the reference time ``at``): what the next cleaning may remove.
Records are decoded (sizes only); memory is one batch.

The dirty section (``LogCleanerManager.cleanableOffsets``): the cleaner cleans from the first dirty
offset, the partition's entry in ``cleaner-offset-checkpoint`` of its log directory (written by
``LogCleanerManager.updateCheckpoints`` after each cleaning: the end of what it cleaned).  No entry
(never cleaned) means the log start offset; an entry below the log start offset, or past the log end
offset, is reset to the log start offset (Kafka warns and cleans the whole log).  The log start offset is
:func:`kseg.storage.checkpoints.log_start_offset`'s.  Segments wholly below the first dirty offset are
the cleaned section, those at or above it the dirty one.  Without the file the first dirty offset is not
known (a copied partition directory, a broker that never ran the cleaner): a note, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kseg.errors import CorruptRecordError, InputError, KsegError
from kseg.format import control, v2
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT
from kseg.storage import checkpoints as cp
from kseg.storage import files
from kseg.storage.outcome import ReadOutcome, read_batches
from kseg.storage.partition import Partition, Segment
from kseg.storage.records import FileRecords

DEFAULT_DELETE_RETENTION_MS = 24 * 60 * 60 * 1000  # delete.retention.ms (LogConfig.DEFAULT_DELETE_RETENTION_MS)


@dataclass
class SegmentTombstones:
    """One segment's tombstones and control batches."""

    segment: Segment
    tombstones: int = 0
    tombstone_batches: int = 0
    oldest_tombstone: int | None = None  # batch max timestamps (a tombstone's batch time)
    newest_tombstone: int | None = None
    control_batches: int = 0
    commit_markers: int = 0
    abort_markers: int = 0
    oldest_control: int | None = None
    with_horizon: int = 0  # batches (with tombstones or control) carrying a delete horizon
    past_horizon: int = 0  # ... whose horizon is at or before the reference time
    without_horizon: int = 0  # ... never cleaned since they got their tombstones/markers
    min_horizon: int | None = None
    max_horizon: int | None = None
    legacy_tombstones: int = 0
    modified_ms: int | None = None
    stopped: str | None = None  # read.describe() when the segment was not read to its end
    read: ReadOutcome | None = None
    next_offset: int | None = None  # the last batch's last offset + 1 (None: no batch)
    section: str | None = None  # CLEANED, DIRTY or BOTH against the first dirty offset (None: not known)

    def note_batch(self, horizon: int | None, at: int) -> None:
        if horizon is None:
            self.without_horizon += 1
            return
        self.with_horizon += 1
        if horizon <= at:
            self.past_horizon += 1
        self.min_horizon = horizon if self.min_horizon is None else min(self.min_horizon, horizon)
        self.max_horizon = horizon if self.max_horizon is None else max(self.max_horizon, horizon)


CLEANED, DIRTY, BOTH = "cleaned", "dirty", "both"  # a segment against the first dirty offset


@dataclass
class CompactionReport:
    partition: Partition
    at: int
    delete_retention_ms: int
    segments: list[SegmentTombstones] = field(default_factory=list)
    log_start: cp.LogStart | None = None
    cleaner: cp.Checkpointed | None = None  # the partition's cleaner-offset-checkpoint entry
    first_dirty: int | None = None  # where the next cleaning starts (None: not known)
    notes: list[str] = field(default_factory=list)


def _oldest(a: int | None, b: int) -> int:
    return b if a is None else min(a, b)


def scan_segment(seg: Segment, at: int, limit: int) -> SegmentTombstones:
    """Count one segment (module docstring).  What was read, and why reading stopped (a corrupt or
    partial batch, an I/O error), is ``read`` (:class:`kseg.storage.outcome.ReadOutcome`)."""
    log = seg.log
    if log is None:  # analyse counts the segments with a .log
        raise InputError("no .log file: nothing to count", path=seg.name)
    path = files.display(log, store=seg.store)
    read = ReadOutcome(path, present=seg.log_size())
    res = SegmentTombstones(seg, read=read)
    try:
        res.modified_ms = files.mtime_ms(log, store=seg.store)
        with FileRecords(log, store=seg.store) as records:
            _count(res, read_batches(records, read), at, limit)
    except KsegError as exc:
        read.stopped_at(exc.at(path))
    if not read.complete:
        res.stopped = read.describe()
    return res


def _count(res: SegmentTombstones, batches, at: int, limit: int) -> None:
    for batch in batches:
        if not batch.is_valid():  # counts only from batches that hold their CRCs; the read stops here
            raise CorruptRecordError(batch.crc_mismatch(), position=batch.position)
        res.next_offset = batch.last_offset + 1
        if batch.magic < 2:
            for rec in batch.records(limit):
                if rec[2] is not None and rec[3] is None:
                    res.legacy_tombstones += 1
            continue
        ts = batch.max_timestamp
        if batch.is_control:
            res.control_batches += 1
            res.oldest_control = _oldest(res.oldest_control, ts)
            first = next(iter(batch.records(limit)), None)
            if first is not None and batch.h[v2.PRODUCER_ID] >= 0:
                kind = control.parse_type_id(first[3])
                res.commit_markers += kind == control.COMMIT
                res.abort_markers += kind == control.ABORT
            res.note_batch(batch.delete_horizon_ms, at)
            continue
        found = 0
        for chunk in batch.record_chunks(limit, sizes=True):
            found += sum(1 for r in chunk if r[3] >= 0 and r[4] < 0)
        if found:
            res.tombstones += found
            res.tombstone_batches += 1
            res.oldest_tombstone = _oldest(res.oldest_tombstone, ts)
            res.newest_tombstone = ts if res.newest_tombstone is None else max(res.newest_tombstone, ts)
            res.note_batch(batch.delete_horizon_ms, at)


def analyse(
    partition: Partition,
    at: int,
    delete_retention_ms: int = DEFAULT_DELETE_RETENTION_MS,
    limit: int = DEFAULT_DECOMPRESSION_LIMIT,
) -> CompactionReport:
    """Every segment of ``partition`` with a ``.log``; :class:`InputError` when there is none."""
    report = CompactionReport(partition, at, delete_retention_ms)
    logs = [s for s in partition.segments if s.log is not None]
    if not logs:
        raise InputError("no .log segment in this partition directory", path=partition.path)
    for seg in logs:
        report.segments.append(scan_segment(seg, at, limit))
    _dirty_section(report)
    return report


def _log_end(report: CompactionReport) -> int | None:
    """The log end offset (``LocalLog.logEndOffset``), None when the last segment was not read to its end."""
    last = report.segments[-1]
    if last.read is None or not last.read.complete:
        return None
    return last.next_offset if last.next_offset is not None else last.segment.base_offset


def _dirty_section(report: CompactionReport) -> None:
    """The first dirty offset and each segment's section (module docstring)."""
    segs = report.segments
    start = report.log_start = cp.log_start_offset(
        report.partition.path, segs[0].segment.base_offset, report.partition.store
    )
    cleaner = report.cleaner = cp.partition_entry(report.partition.path, cp.CLEANER, store=report.partition.store)
    end = _log_end(report)
    if cleaner.value is None:
        if not cleaner.parsed:
            report.notes.append(f"{cleaner.note}: the dirty section is not known")
            return
        report.notes.append(f"{cleaner.note}: never cleaned, the dirty section starts at the log start offset")
        report.first_dirty = start.offset
        report.notes.extend([start.note] if start.note else [])
    elif cleaner.value < start.offset or (end is not None and cleaner.value > end):
        where = "below the log start offset" if cleaner.value < start.offset else f"past the log end offset {end}"
        report.notes.append(
            f"cleaner checkpoint {cleaner.value} in {cleaner.file} is {where}: Kafka resets the first dirty "
            f"offset to the log start offset {start.offset} (LogCleanerManager.cleanableOffsets)"
        )
        report.first_dirty = start.offset
        report.notes.extend([start.note] if start.note else [])
    else:
        report.first_dirty = cleaner.value
    dirty = report.first_dirty
    for seg, nxt in zip(segs, [*(s.segment.base_offset for s in segs[1:]), end], strict=True):
        if nxt is not None and nxt <= dirty:
            seg.section = CLEANED
        else:
            seg.section = DIRTY if seg.segment.base_offset >= dirty else BOTH
