"""What ``kseg txn`` finds in a partition: its transactions (:class:`Transaction`, one per
producer's transaction, ``ProducerStateEntry.currentTxnFirstOffset`` to its end marker) and the
partition's report (:class:`TxnReport`: counts, open transactions, the last stable offset
``UnifiedLog.lastStableOffset`` stands for, problems, what was read); how they print is
:mod:`kseg.render.txn`'s business."""

from __future__ import annotations

from dataclasses import dataclass, field

from kseg.ops.txn.audit import TxnProblem
from kseg.storage.outcome import ReadOutcome
from kseg.storage.outcome import exit_code as outcome_exit_code
from kseg.storage.partition import Partition

COMMITTED, ABORTED, OPEN = "committed", "aborted", "open"


class Transaction:
    """One transaction of one producer (module docstring)."""

    __slots__ = (
        "producer_id",
        "producer_epoch",
        "first_offset",
        "last_offset",
        "records",
        "batches",
        "first_timestamp",
        "last_timestamp",
        "outcome",
        "marker_offset",
        "coordinator_epoch",
        "marker_timestamp",
        "last_stable_offset",
        "seeded",
        "open_ms",
        "idle_ms",
        "hanging",
    )

    def __init__(self, producer_id: int, producer_epoch: int, first_offset: int, *, seeded: bool = False) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.first_offset = first_offset
        self.last_offset: int | None = None
        self.records = 0
        self.batches = 0
        self.first_timestamp: int | None = None
        self.last_timestamp: int | None = None
        self.outcome = OPEN
        self.marker_offset: int | None = None
        self.coordinator_epoch: int | None = None
        self.marker_timestamp: int | None = None
        self.last_stable_offset: int | None = None
        self.seeded = seeded  # opened before the replay's start: known from the snapshot
        self.open_ms: int | None = None  # latest timestamp - first batch's
        self.idle_ms: int | None = None  # latest timestamp - the producer's last write (lastTimestamp)
        self.hanging = False

    def add_batch(self, last_offset: int, count: int, epoch: int, timestamp: int) -> None:
        self.last_offset = last_offset
        self.records += count
        self.batches += 1
        self.producer_epoch = epoch
        if self.first_timestamp is None:
            self.first_timestamp = timestamp
        self.last_timestamp = timestamp


@dataclass
class TxnReport:
    """What ``kseg txn`` found in one partition."""

    partition: Partition
    from_start: bool
    start_offset: int = 0
    snapshot: str | None = None
    log_start: int = 0
    log_end: int = 0
    high_watermark: int | None = None  # replication-offset-checkpoint's, bounded as Kafka's load bounds it
    high_watermark_file: str | None = None  # the file it was taken from; None: the file (or entry) is absent
    unreplicated_first: int | None = None  # first offset of the first completed transaction with its marker >= HW
    latest_timestamp: int | None = None
    committed: int = 0
    aborted: int = 0
    open: list[Transaction] = field(default_factory=list)
    problems: list[TxnProblem] = field(default_factory=list)
    txnindex_checked: int = 0
    txnindex_not_checked: int = 0
    snapshots_checked: int = 0
    notes: list[str] = field(default_factory=list)
    reads: list[ReadOutcome] = field(default_factory=list)  # each segment read, and why reading stopped

    @property
    def name(self) -> str:
        return self.partition.name

    @property
    def hanging(self) -> list[Transaction]:
        return [t for t in self.open if t.hanging]

    @property
    def earliest_open(self) -> Transaction | None:
        return min(self.open, key=lambda t: t.first_offset, default=None)

    @property
    def lso_holder(self) -> Transaction | None:
        """The open transaction whose first offset is the last stable offset, if one is."""
        first = self.earliest_open
        if first is None or first.first_offset != self.last_stable_offset or first.first_offset >= self.stable_bound:
            return None  # at or above the high watermark the LSO is the high watermark (UnifiedLog.lastStableOffset)
        return first

    def completed(self, txn: Transaction) -> None:
        """A transaction whose marker was read: while its marker is at or above the high watermark it is
        still unstable (``ProducerStateManager.unreplicatedTxns``, removed by ``onHighWatermarkUpdated``)."""
        hw, marker = self.high_watermark, txn.marker_offset
        if hw is not None and marker is not None and marker >= hw:
            if self.unreplicated_first is None or txn.first_offset < self.unreplicated_first:
                self.unreplicated_first = txn.first_offset

    @property
    def first_unstable_offset(self) -> int | None:
        """``ProducerStateManager.firstUnstableOffset``: the first offset of the earliest open transaction or of
        the earliest completed one whose marker is not below the high watermark, None when there is neither."""
        first = self.earliest_open
        firsts = [o for o in (first.first_offset if first else None, self.unreplicated_first) if o is not None]
        return min(firsts, default=None)

    @property
    def stable_bound(self) -> int:
        """What bounds the last stable offset: the high watermark, or the log end offset standing in for it."""
        return self.high_watermark if self.high_watermark is not None else self.log_end

    @property
    def last_stable_offset(self) -> int:
        """``UnifiedLog.lastStableOffset``: the first unstable offset when it is below the high watermark,
        else the high watermark (the log end offset when ``replication-offset-checkpoint`` gives none)."""
        first = self.first_unstable_offset
        bound = self.stable_bound
        return first if first is not None and first < bound else bound

    @property
    def exit_code(self) -> int:
        return outcome_exit_code(self.reads, problems=bool(self.problems))
