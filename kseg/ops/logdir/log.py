"""What a partition's segments say about its log (``UnifiedLog``'s view of it, read offline).

Every ``.log`` is read batch header by batch header (``FileRecords.batches``; no record is decoded):
the log end offset is the last batch's last offset + 1, or the last segment's base offset when it holds
no batch (``LocalLog.logEndOffset``, ``LogSegment.readNextOffset``); the timestamps are batches' max
timestamps (``RecordBatch.maxTimestamp``); each batch's partition leader epoch (-1 for magic 0/1) goes to
the ``leader-epoch-checkpoint`` check when there is one (:class:`kseg.storage.leader_epochs.EpochCheck`).
A segment not read to its end (corrupt, partial or unreadable) leaves the log end unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kseg.errors import KsegError
from kseg.format import v2
from kseg.storage import files
from kseg.storage.batch import FileBatch, V2Batch
from kseg.storage.leader_epochs import NO_EPOCH, EpochCheck
from kseg.storage.outcome import ReadOutcome, read_batches
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

    @property
    def complete(self) -> bool:
        return all(r.complete for r in self.reads)


def read_log(part: Partition, epochs: EpochCheck | None = None) -> LogFacts:
    """Read every segment of ``part`` with a ``.log`` (module docstring), each batch fed to ``epochs``."""
    facts = LogFacts()
    logs = [s for s in part.segments if s.log is not None]
    facts.segments = len(logs)
    if logs:
        facts.first_offset = logs[0].base_offset
    for seg in logs:
        facts.next_offset = seg.base_offset
        read = _read_segment(seg, facts, epochs)
        facts.reads.append(read)
        facts.bytes += read.present
    facts.log_end = facts.next_offset if logs and facts.complete else None
    return facts


def _read_segment(seg: Segment, facts: LogFacts, epochs: EpochCheck | None) -> ReadOutcome:
    assert seg.log is not None
    path = files.display(seg.log, store=seg.store)
    read = ReadOutcome(path, present=seg.log_size())
    try:
        with FileRecords(seg.log, store=seg.store) as records:
            for batch in read_batches(records, read):
                _note(facts, batch)
                if epochs is not None:
                    epochs.batch(batch.base_offset, batch.last_offset, _epoch(batch))
    except KsegError as exc:
        read.stopped_at(exc.at(path))
    return read


def _epoch(batch: FileBatch) -> int:
    """``RecordBatch.partitionLeaderEpoch``: -1 for magic 0/1 (no such field)."""
    return batch.h[v2.LEADER_EPOCH] if isinstance(batch, V2Batch) else NO_EPOCH


def _note(facts: LogFacts, batch: FileBatch) -> None:
    last, ts = batch.last_offset, batch.max_timestamp
    if facts.first_timestamp is None:
        facts.first_timestamp = ts
    if ts >= 0 and (facts.last_timestamp is None or ts > facts.last_timestamp):
        facts.last_timestamp = ts
    facts.next_offset = last + 1
