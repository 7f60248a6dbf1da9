"""Producer state as Kafka's recovery keeps it, for rebuilding ``.txnindex`` files.

Mirrors what ``LogSegment.recover`` → ``updateProducerState`` does with
``ProducerStateManager`` and ``ProducerAppendInfo`` (origin REPLICATION: no
sequence or epoch validation), keeping only what decides the transaction
index:

* per producer id, the first offset of its open transaction
  (``ProducerStateEntry.currentTxnFirstOffset``);
* the open transactions by first offset (``ongoingTxns``, a TreeMap).

For each magic-2 batch with a producer id (``RecordBatch.hasProducerId``):

* data batch: a transactional batch with no open transaction opens one at
  the batch's base offset; a non-transactional batch while one is open is
  ``InvalidTxnStateException`` (the log would fail to load);
* control batch: its first record is an end-transaction marker
  (``EndTransactionMarker.deserialize``: key int16 version + int16 type,
  value int16 version + int32 coordinator epoch); a type other than
  ABORT/COMMIT is ``IllegalArgumentException``; a short key or value is
  ``InvalidRecordException`` (recovery stops there).  If the producer has an
  open transaction, it completes: its last stable offset is the first offset
  of the earliest open transaction of *another* producer, else the marker's
  offset + 1 (``ProducerStateManager.lastStableOffset``); an ABORT becomes a
  ``.txnindex`` entry (version 0, producerId, firstOffset, lastOffset = the
  marker's offset, lastStableOffset) in the segment holding the marker, so
  ``firstOffset`` may lie in an earlier segment.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from kseg.errors import KsegError, RecoveryFailure
from kseg.format import control, v2
from kseg.storage.batch import FileBatch, V2Batch

NO_OFFSET = -1


class CompletedTxn(NamedTuple):
    """A transaction an end marker completed (``ProducerStateManager.completeTxn`` / ``CompletedTxn``):
    its producer, first offset, the marker's offset, the last stable offset computed then,
    the marker's type id (ABORT 0, COMMIT 1) and coordinator epoch."""

    producer_id: int
    first_offset: int
    marker_offset: int
    last_stable_offset: int
    type_id: int
    coordinator_epoch: int


class ProducerState:
    """``ProducerStateManager`` reduced to the transaction index's needs (module docstring)."""

    def __init__(self) -> None:
        self.current_txn: dict[int, int] = {}  # producerId -> first offset of its open transaction
        self.ongoing: dict[int, int] = {}  # first offset -> producerId
        self.completed: CompletedTxn | None = None  # set by the last end marker that completed a transaction

    def load(self, open_txns: Iterable[tuple[int, int]]) -> None:
        """Start from a snapshot: ``(producerId, currentTxnFirstOffset)`` pairs of the producers
        with an open transaction (``ProducerStateManager.loadFromSnapshot`` rebuilding ``ongoingTxns``)."""
        for pid, first in open_txns:
            if first >= 0:
                self.current_txn[pid] = first
                self.ongoing[first] = pid

    def apply(self, batch: FileBatch, limit: int) -> tuple[int, int, int, int] | None:
        """Apply one batch; return (producerId, firstOffset, lastOffset, lastStableOffset) of an
        aborted transaction it completes, else None.  Raises
        :class:`kseg.errors.CorruptRecordError` for an unreadable marker and
        :class:`RecoveryFailure` where Kafka's recovery would fail."""
        if not isinstance(batch, V2Batch):  # magic 0 or 1: no producer
            return None
        h = batch.h
        pid = h[v2.PRODUCER_ID]
        if pid < 0:
            return None
        if batch.is_control:
            return self._end_marker(batch, pid, limit)
        self.apply_data(pid, batch.base_offset, batch.is_transactional, batch.file.path, batch.position)
        return None

    def apply_data(self, pid: int, base_offset: int, transactional: bool, path: str, position: int) -> None:
        """A data batch of producer ``pid`` (``ProducerAppendInfo.appendDataBatch``)."""
        first = self.current_txn.get(pid, NO_OFFSET)
        if first != NO_OFFSET and not transactional:
            raise RecoveryFailure(
                f"InvalidTxnStateException: expected a transactional write from producer {pid} "
                f"at offset {base_offset} (its transaction from offset {first} is open)",
                path=path,
                position=position,
            )
        if first == NO_OFFSET and transactional:
            self.current_txn[pid] = base_offset
            self.ongoing[base_offset] = pid

    def _end_marker(self, batch: V2Batch, pid: int, limit: int) -> tuple[int, int, int, int] | None:
        self.completed = None
        record = next(iter(batch.records(limit)), None)
        if record is None:
            return None  # an empty control batch completes nothing
        try:
            type_id = control.parse_type_id(record[3])
            if type_id not in (control.ABORT, control.COMMIT):
                raise RecoveryFailure(
                    f"IllegalArgumentException: invalid control record type for end transaction marker "
                    f"{control.type_name(type_id)} ({type_id}) in a control batch of producer {pid}",
                    path=batch.file.path,
                    position=batch.position,
                )
            coordinator_epoch = control.parse_end_txn_marker(record[4])
        except KsegError as exc:
            raise exc.at(batch.file.path, default=batch.position) from None
        first = self.current_txn.pop(pid, NO_OFFSET)
        if first == NO_OFFSET:
            return None
        marker = batch.base_offset
        lso = min((f for f, p in self.ongoing.items() if p != pid), default=marker + 1)
        self.ongoing.pop(first, None)
        self.completed = CompletedTxn(pid, first, marker, lso, type_id, coordinator_epoch)
        if type_id == control.ABORT:
            return (pid, first, marker, lso)
        return None
