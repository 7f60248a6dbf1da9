"""What a salvage found: each loss with its cause, each transaction it cut, each segment's counts, and
what Kafka's recovery would have kept of the same partition."""

from __future__ import annotations

from dataclasses import dataclass, field

# Causes of a loss (a row's ``cause``), in the order a report groups them.
DAMAGED = "damaged"  # bytes holding no whole valid batch
UNDECODABLE = "undecodable"  # a compressed batch whose CRC holds but whose records do not decode
OVERLAP = "overlap"  # a valid batch whose offsets are not above those kept before it (and differs)
OUT_OF_PLACE = "out-of-place"  # a valid batch whose offsets do not fit its segment
DUPLICATE = "duplicate"  # the batch kept just before it, found again: nothing lost
CAUSES = (DAMAGED, UNDECODABLE, OVERLAP, OUT_OF_PLACE, DUPLICATE)
MAX_ROWS = 10_000  # losses kept with their detail per run; beyond, only counted (memory flat in the damage)


@dataclass
class Loss:
    """Bytes ``[start, end)`` of a segment not kept, why, and the offsets they held: a dropped batch's own,
    or, for damaged bytes, those missing between the batches kept on either side (``last`` None: up to the
    end of the log, which nothing after the damage bounds)."""

    cause: str
    segment: str  # the segment's .log, as shown
    start: int
    end: int
    why: str
    first: int | None = None
    last: int | None = None  # None with ``first``: every offset from ``first`` on (nothing kept after it)

    @property
    def lost(self) -> bool:
        """Whether data was lost: a dropped batch (not a duplicate), or damaged bytes with offsets missing
        around them (damage between two batches whose offsets follow each other held no batch)."""
        return self.cause != DUPLICATE and (self.cause != DAMAGED or self.first is not None)


@dataclass
class TxnCut:
    """A transaction the damage touched: ``producer_id``'s, from offset ``first``; ``marker_lost``: its
    marker is not among the batches kept (the last stable offset stays at ``first``, or a later marker of
    the producer closes it with the outcome of the next transaction)."""

    producer_id: int
    first: int
    what: str
    marker_lost: bool


@dataclass
class SegmentOutcome:
    """One input segment: what was read and kept, and where Kafka's recovery would have stopped in it."""

    log: str  # as shown
    name: str
    base: int  # the base offset its name carries
    size: int = 0
    batches: int = 0  # kept
    records: int = 0  # kept
    bytes: int = 0  # kept
    first_offset: int | None = None
    last_offset: int | None = None
    first_damage: int | None = None  # the byte where LogSegment.recover stops (None: it reads to the end)
    written: str | None = None  # the salvaged .log (None: nothing kept, or --dry-run)


@dataclass
class Salvage:
    """A partition salvaged."""

    source: str
    output: str | None
    segments: list[SegmentOutcome] = field(default_factory=list)
    losses: list[Loss] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # losses by cause, all of them (rows past MAX_ROWS too)
    lost_count: int = 0  # losses of data (duplicates and damage that held no offset are not)
    txn_cuts: list[TxnCut] = field(default_factory=list)
    lso: int | None = None  # the first offset of the earliest transaction left open in what was kept
    skipped_before: int = 0  # batches below --from-offset
    # Kafka's recovery of the same log (LogSegment.recover, LogLoader.recoverLog)
    kafka_batches: int = 0
    kafka_last_offset: int | None = None
    kafka_stop: str | None = None  # "<segment>.log at byte N"
    kafka_deleted_segments: int = 0
    beyond_kafka: int = 0  # batches kept that Kafka's recovery would truncate or delete
    notes: list[str] = field(default_factory=list)
    copied: list[str] = field(default_factory=list)  # partition files copied as they were
    snapshots: int = 0  # producer snapshots of the source, not copied

    @property
    def lost(self) -> bool:
        return self.lost_count > 0

    def add(self, loss: Loss) -> None:
        """Count ``loss`` (its detail kept while under :data:`MAX_ROWS`); a damaged range's offsets are
        settled later (:meth:`settled`)."""
        self.counts[loss.cause] = self.counts.get(loss.cause, 0) + 1
        if len(self.losses) < MAX_ROWS:
            self.losses.append(loss)
        if loss.cause != DAMAGED:
            self.settled(loss)

    def settled(self, loss: Loss) -> None:
        """``loss`` is known to have lost data, or not."""
        if loss.lost:
            self.lost_count += 1

    @property
    def kept(self) -> int:
        return sum(s.batches for s in self.segments)
