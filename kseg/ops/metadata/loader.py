"""``MetadataBatchLoader``: batches of records applied to the image, metadata transactions honoured.

Kafka 3.6+ (KIP-868) brackets some metadata changes in ``BeginTransactionRecord`` ...
``EndTransactionRecord`` (or ``AbortTransactionRecord``, written by a newly elected controller for the
transaction its predecessor left open).  ``MetadataBatchLoader.loadBatch`` replays each record into the
delta and moves the transaction state (``NO_TRANSACTION``, ``STARTED_TRANSACTION``,
``CONTINUED_TRANSACTION``, ``ENDED_TRANSACTION``, ``ABORTED_TRANSACTION``); a transaction begun after
other records of the delta first publishes them.  ``maybeFlushBatches``, after the batches a commit
handed over (here: after every batch, a broker following the log), publishes nothing inside a
transaction, drops the delta of an aborted one (the image's offset still moves on) and applies any other.
A control batch (LeaderChange, KRaftVersion, Voters) holds no metadata record: it moves the image's
offset, epoch and time only (``Batch.control``); ``MetadataLoader.loadControlRecords`` keeps the
kraft.version it carries.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kseg.ops.metadata.history import History
from kseg.ops.metadata.image import Delta, Image, Provenance, Refused
from kseg.ops.metadata.replay import apply

NO_TRANSACTION, STARTED, CONTINUED, ENDED, ABORTED = "none", "started", "continued", "ended", "aborted"
BEGIN, END, ABORT = "BeginTransactionRecord", "EndTransactionRecord", "AbortTransactionRecord"


@dataclass
class Fault:
    """A record Kafka's loader hands to its fault handler: not applied, the replay goes on."""

    offset: int
    record: str
    message: str


@dataclass
class Loader:
    image: Image = field(default_factory=Image)
    faults: list[Fault] = field(default_factory=list)
    kraft_version: int | None = None
    state: str = NO_TRANSACTION
    begun_at: int | None = None  # the offset of the open transaction's BeginTransactionRecord
    history: History | None = None  # --history: told of each record applied and each image published

    def __post_init__(self) -> None:
        self.delta = Delta(self.image)
        self.pending = Provenance()  # lastOffset, lastEpoch, lastContainedLogTimeMs of the delta
        self.batches = 0  # numBatches since the last flush

    # -- MetadataLoader.loadSnapshot: every record into one delta, no transactions ---------------------------
    def snapshot_record(self, offset: int, name: str, record: dict) -> None:
        if self.history is not None:
            self.history.snapshot = True
        self._replay_into_delta(offset, name, record)

    def finish_snapshot(self, provenance: Provenance) -> None:
        """The snapshot's delta applied over the empty image (``finishSnapshot`` removes nothing there)."""
        self._publish(provenance)
        if self.history is not None:
            self.history.snapshot = False

    # -- MetadataBatchLoader -------------------------------------------------------------------------------
    def load_batch(self, base: int, last: int, epoch: int, time: int, records: list[tuple[int, str, dict]]) -> None:
        """``loadBatch``: ``records`` are the batch's metadata records (none for a control batch), each
        ``(offset, name, values)``; ``last`` the batch's last offset (or the last record given)."""
        self.pending.epoch, self.pending.time = epoch, time
        for index, (offset, name, record) in enumerate(records):
            self._replay(offset, name, record)
            if self.state == STARTED and (index > 0 or self.batches > 0):
                begun = self.begun_at
                self._publish(Provenance(self.pending.offset, epoch, time))  # what preceded the transaction
                self.state, self.begun_at = STARTED, begun
            self.pending.offset = offset
        self.pending.offset = last
        self.batches += 1

    def flush(self) -> None:
        """``maybeFlushBatches``."""
        if self.state in (STARTED, CONTINUED):
            return
        if self.state == ABORTED:
            self._drop()
        self._publish(Provenance(self.pending.offset, self.pending.epoch, self.pending.time))

    def finish(self) -> None:
        """The replay ends: the image is the last one published, so a delta still open (a transaction not
        ended by the point asked) is dropped; ``begun_at`` keeps where that transaction began."""
        if not self.delta.empty:
            self._drop()

    def _drop(self) -> None:
        self.delta.rollback()
        if self.history is not None:
            self.history.dropped()

    def control(self, kraft_version: int | None) -> None:
        if kraft_version is not None:
            self.kraft_version = kraft_version

    def _publish(self, provenance: Provenance) -> None:
        """``applyDeltaAndUpdate`` then ``resetToImage``."""
        self.delta.clear()
        self.image.provenance = provenance
        if self.history is not None:
            self.history.published(self.image, provenance)
        self.pending = Provenance(provenance.offset, provenance.epoch, provenance.time)
        self.state = NO_TRANSACTION
        self.begun_at = None
        self.batches = 0

    def _replay(self, offset: int, name: str, record: dict) -> None:
        """``MetadataBatchLoader.replay``: the transaction records move the state, every other one goes to
        the delta (and ends an ended or aborted transaction's state)."""
        if name == BEGIN:
            if self.state in (STARTED, CONTINUED):
                return self._fault(offset, name, "Encountered BeginTransactionRecord while already in a transaction")
            self.state, self.begun_at = STARTED, offset
        elif name in (END, ABORT):
            if self.state not in (STARTED, CONTINUED):
                return self._fault(offset, name, f"Encountered {name} without having seen a BeginTransactionRecord")
            self.state = ENDED if name == END else ABORTED
        else:
            if self.state == STARTED:
                self.state = CONTINUED
            elif self.state in (ENDED, ABORTED):
                self.state = NO_TRANSACTION
            self._replay_into_delta(offset, name, record)
        return None

    def _replay_into_delta(self, offset: int, name: str, record: dict) -> None:
        touched = [] if self.history is None else self.history.touches(name, record, self.image)
        try:
            apply(self.delta, name, record)
        except Refused as exc:
            self._fault(offset, name, str(exc))
            return
        if self.history is not None:
            # a partition record can bring back a topic removed earlier in the delta (topics.py)
            touched = touched or self.history.touches(name, record, self.image)
            if touched:
                self.history.applied(offset, name, record, touched)

    def _fault(self, offset: int, name: str, message: str) -> None:
        self.faults.append(Fault(offset, name, message))
