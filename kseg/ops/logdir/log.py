"""What a partition's segments say about its log (``UnifiedLog``'s view of it, read offline).

Every ``.log`` is read batch header by batch header (``FileRecords.batches``; no record is decoded):
the log end offset is the last batch's last offset + 1, or the last segment's base offset when it holds
no batch (``LocalLog.logEndOffset``, ``LogSegment.readNextOffset``); the timestamps are batches' max
timestamps (``RecordBatch.maxTimestamp``); each batch's partition leader epoch (-1 for magic 0/1) goes to
the ``leader-epoch-checkpoint`` check when there is one (:class:`kseg.storage.leader_epochs.EpochCheck`).
The segments a broker starting on the files recovers are validated as its recovery does
(:mod:`kseg.ops.logdir.recover`: framing and CRC, through the shallow scan); where it would truncate, the
log end is the one it would have after, and the segments it would delete are read for their headers only.
Each segment's ``.txnindex`` is checked as ``LogSegment.sanityCheck`` does on every start
(:mod:`kseg.ops.logdir.sanity`).  Any other segment not read to its end (corrupt, partial or unreadable)
leaves the log end unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kseg.errors import CorruptRecordError, KsegError
from kseg.format import v2
from kseg.ops.logdir.recover import (
    CORRUPT_INDEX,
    NO_INDEX,
    RECOVER_LOG,
    Plan,
    Truncation,
    invalid_reason,
    partial_reason,
    tail_last,
    walk,
)
from kseg.ops.logdir.sanity import TxnFault, txn_fault
from kseg.storage import files, location
from kseg.storage.batch import FileBatch, V2Batch
from kseg.storage.leader_epochs import NO_EPOCH, EpochCheck
from kseg.storage.outcome import COMPLETE, CORRUPT, TRUNCATED, ReadOutcome, read_batches
from kseg.storage.partition import Partition, Segment
from kseg.storage.records import FileRecords


@dataclass
class LogFacts:
    """What the segments hold: offsets, sizes, timestamps, each epoch's first batch, and what was read."""

    first_offset: int | None = None  # the first segment's base offset
    log_end: int | None = None  # None: a segment was not read to its end
    segments: int = 0
    bytes: int = 0
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    reads: list[ReadOutcome] = field(default_factory=list)
    next_offset: int = 0  # the offset after the last batch read so far (a segment's base offset before any)
    truncations: list[Truncation] = field(default_factory=list)  # what a broker's recovery truncates
    unchecked: int = 0  # segments whose CRCs were not checked (a broker does not recover them)
    load_failures: list[str] = field(default_factory=list)  # .txnindex faults a broker's load fails on
    rebuilt: list[str] = field(default_factory=list)  # notes: a corrupt .txnindex over valid batches, rebuilt
    errors: list[str] = field(default_factory=list)  # .txnindex files that could not be read (the OS's reason)

    @property
    def complete(self) -> bool:
        return all(r.complete for r in self.reads)


def read_log(part: Partition, epochs: EpochCheck | None = None, plan: Plan | None = None) -> LogFacts:
    """Read every segment of ``part`` with a ``.log`` (module docstring), each batch fed to ``epochs``; with
    a ``plan``, the segments a broker starting on them recovers are validated as it does
    (:mod:`kseg.ops.logdir.recover`): the log end is then the one it would have after recovery."""
    facts = LogFacts()
    logs = [s for s in part.segments if s.log is not None]
    facts.segments = len(logs)
    if logs:
        facts.first_offset = logs[0].base_offset
    first = plan.first_recovered([s.base_offset for s in logs]) if plan is not None else None
    settled: list[ReadOutcome] = []  # reads whose stop recovery accounts for (the log end stays known)
    cut: Truncation | None = None  # a recoverLog truncation: every later segment deleted
    for i, seg in enumerate(logs):
        fault = _txn_fault(seg, facts) if plan is not None else None
        if cut is not None:
            read = _lost_segment(seg, cut)
            settled.append(read)
        else:
            facts.next_offset = seg.base_offset
            rule = _rule(seg, i, first, fault) if plan is not None else None
            if rule is None:
                facts.unchecked += plan is not None
                read = _read_segment(seg, facts, epochs)
            else:
                read, found = _recover_segment(seg, facts, epochs, rule)
                if found is not None:
                    found.cause = fault.cause() if fault is not None else ""
                    facts.truncations.append(found)
                    settled.append(read)
                    cut = found if rule == RECOVER_LOG else None
                elif fault is not None and rule == CORRUPT_INDEX and read.complete:
                    facts.rebuilt.append(fault.note())
        facts.reads.append(read)
        facts.bytes += read.present
    known = logs and all(r.complete or r in settled for r in facts.reads)
    facts.log_end = (cut.end if cut is not None else facts.next_offset) if known else None
    return facts


def _rule(seg: Segment, i: int, first: int | None, fault: TxnFault | None) -> str | None:
    """Why a broker recovers this segment on start (None: it does not): no offset index first, then a
    ``.txnindex`` that fails its sanity check (both as it is loaded, before ``recoverLog`` runs, so a fault
    there truncates this segment alone), then the recovery point."""
    if seg.index is None:
        return NO_INDEX
    if fault is not None:
        return CORRUPT_INDEX
    return RECOVER_LOG if first is not None and i >= first else None


def _txn_fault(seg: Segment, facts: LogFacts) -> TxnFault | None:
    """``sanityCheck``'s reading of the segment's ``.txnindex`` (only with its ``.index``: without it the
    check stops before): a version fault is a load failure, an unreadable file an error (both noted in
    ``facts``); a ``lastOffset`` fault is returned (the segment is recovered on load)."""
    if seg.index is None:
        return None
    try:
        fault = txn_fault(seg)
    except KsegError as exc:  # (InputError: the OS's reason, or a file over its bound)
        facts.errors.append(exc.describe())
        return None
    if fault is not None and fault.fatal:
        facts.load_failures.append(fault.problem())
        return None
    return fault


def _read_segment(seg: Segment, facts: LogFacts, epochs: EpochCheck | None) -> ReadOutcome:
    assert seg.log is not None
    path = files.display(seg.log, store=seg.store)
    read = ReadOutcome(path, present=seg.log_size())
    try:
        with FileRecords(seg.log, store=seg.store) as records:
            for batch in read_batches(records, read):
                _note(facts, batch.last_offset, batch.max_timestamp)
                if epochs is not None:
                    epochs.batch(batch.base_offset, batch.last_offset, _epoch(batch))
    except KsegError as exc:
        read.stopped_at(exc.at(path))
    return read


def _recover_segment(
    seg: Segment, facts: LogFacts, epochs: EpochCheck | None, rule: str
) -> tuple[ReadOutcome, Truncation | None]:
    """``LogSegment.recover``'s walk over one segment (:func:`_validate`); where it would truncate (the read
    stops there, its outcome saying why), and what the segment holds past it."""
    assert seg.log is not None
    path = files.display(seg.log, store=seg.store)
    read = ReadOutcome(path, present=seg.log_size())
    try:
        with FileRecords(seg.log, store=seg.store) as records:
            read.present = records.end
            reason = _validate(records, read, facts, epochs)
            if reason is None:
                return read, None
            read.stop = CORRUPT if read.stop == COMPLETE else read.stop
            read.position, read.reason = read.read, reason
            name = location.basename(seg.log)
            found = Truncation(name, read.read, reason, facts.next_offset, rule, bytes=records.end - read.read)
            found.lost(*tail_last(records, read.read))
            return read, found
    except KsegError as exc:
        read.stopped_at(exc.at(path))
    return read, None


def _validate(records: FileRecords, read: ReadOutcome, facts: LogFacts, epochs: EpochCheck | None) -> str | None:
    """Each batch in file order, its framing and ``ensureValid`` checked, the valid ones noted (``read.read``:
    the valid bytes); why recovery stops short of the file's end (a partial batch: ``read.stop`` truncated),
    or None."""
    try:
        for pos, size, base, last, ts, epoch, valid, batch in walk(records):
            if not valid:
                return invalid_reason(records, pos, batch)
            _note(facts, last, ts)
            if epochs is not None:
                epochs.batch(base, last, epoch)
            read.read = pos + size
    except CorruptRecordError as exc:  # the framing (a length below 14): Kafka's catch, too
        return exc.message
    if read.read < records.end:
        read.stop = TRUNCATED
        return partial_reason(records, read.read)
    return None


def _lost_segment(seg: Segment, cut: Truncation) -> ReadOutcome:
    """A segment recovery deletes (after a truncation in an earlier one): its batches' headers read for
    the offsets lost, nothing else."""
    assert seg.log is not None
    path = files.display(seg.log, store=seg.store)
    read = ReadOutcome(path, present=seg.log_size())
    last = None
    try:
        with FileRecords(seg.log, store=seg.store) as records:
            for batch in read_batches(records, read):
                last = batch.last_offset
    except KsegError as exc:
        read.stopped_at(exc.at(path))
    cut.segments += 1
    cut.bytes += read.present
    cut.lost(last, read.stop == COMPLETE)  # (past a partial batch, or a length that lies: unknown)
    return read


def _epoch(batch: FileBatch) -> int:
    """``RecordBatch.partitionLeaderEpoch``: -1 for magic 0/1 (no such field)."""
    return batch.h[v2.LEADER_EPOCH] if isinstance(batch, V2Batch) else NO_EPOCH


def _note(facts: LogFacts, last: int, ts: int) -> None:
    if facts.first_timestamp is None:
        facts.first_timestamp = ts
    if ts >= 0 and (facts.last_timestamp is None or ts > facts.last_timestamp):
        facts.last_timestamp = ts
    facts.next_offset = last + 1
