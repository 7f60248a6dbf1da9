"""The walk of ``kseg txn`` over a partition's log: every batch replayed into the producer state
(:class:`kseg.storage.producer_state.ProducerState`, as ``UnifiedLog.rebuildProducerState`` does) and
into the report, each transaction followed from its first batch to its end marker; a corrupt batch
ends its segment (recovery truncates there), an I/O error ends the walk."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from kseg.errors import CorruptRecordError, InputError, RecoveryFailure
from kseg.format import control, v2
from kseg.limits import INT64_MAX
from kseg.ops.txn.audit import TxnProblem
from kseg.ops.txn.report import ABORTED, COMMITTED, Transaction, TxnReport
from kseg.storage import files
from kseg.storage.batch import V2Batch
from kseg.storage.outcome import TRUNCATED, ReadOutcome
from kseg.storage.partition import Segment
from kseg.storage.producer_state import ProducerState
from kseg.storage.records import FileRecords, SecondReader
from kseg.storage.snapshots import Snapshot

if TYPE_CHECKING:
    from kseg.storage.context import Store


class Walker:
    """Replays batches into the producer state and the report (one instance per partition)."""

    def __init__(
        self,
        report: TxnReport,
        state: ProducerState,
        start: int,
        limit: int,
        on_transaction: Callable[[Transaction], None] | None,
        checks: list[Snapshot],
        store: Store,
    ) -> None:
        self.report = report
        self.state = state
        self.start = start
        self.limit = limit
        self.on_transaction = on_transaction
        self.checks = checks  # snapshots above the start, compared with the state when reached
        self.store = store  # the partition's: its snapshots are shown in its grammar
        self.open: dict[int, Transaction] = {t.producer_id: t for t in report.open}
        self.expected: list[tuple[int, int, int, int]] = []

    def check_snapshots(self, offset: int | None) -> None:
        """Compare the state with each snapshot at or below ``offset`` (None: all remaining)."""
        while self.checks and (offset is None or self.checks[0].offset <= offset):
            snap = self.checks.pop(0)
            self.report.snapshots_checked += 1
            want, have = snap.open_txns(), dict(self.state.current_txn)
            for pid in sorted(set(want) | set(have)):
                if want.get(pid) != have.get(pid):

                    def show(v):
                        return "none" if v is None else f"open from offset {v}"

                    self.report.problems.append(
                        TxnProblem(
                            "snapshot_mismatch",
                            files.display(snap.path, store=self.store),
                            None,
                            f"producer {pid} at offset {snap.offset}: the snapshot has a transaction "
                            f"{show(want.get(pid))}, the log gives {show(have.get(pid))}",
                            expected=show(have.get(pid)),
                            found=show(want.get(pid)),
                        )
                    )

    def batch(self, path: str, aux: SecondReader, position: int, h: tuple, batch: V2Batch | None) -> None:
        """One magic-2 batch with header ``h`` (``batch`` a FileBatch, or None to read one via ``aux``)."""
        base, last, ts, pid = h[0], v2.last_offset(h[0], h[6]), h[8], h[9]
        if last < base and h[6] >= 0:  # baseOffset + lastOffsetDelta wrapped past 2^63-1
            raise RecoveryFailure(
                f"batch last offset {base + h[6]} is past 2^63-1 (Kafka's long arithmetic wraps "
                f"it to {last}); the transactions of this batch are not read",
                position=position,
            )
        report = self.report
        if report.latest_timestamp is None or ts > report.latest_timestamp:
            report.latest_timestamp = ts
        if pid < 0:
            return
        is_control = bool(h[5] & v2.CONTROL_FLAG)
        if base < self.start:  # before the snapshot: only the open transactions it names are counted
            txn = self.open.get(pid)
            if txn is not None and txn.seeded and not is_control and base >= txn.first_offset:
                txn.add_batch(last, h[12], h[10], ts)
            return
        self.check_snapshots(base)
        if not is_control:
            transactional = bool(h[5] & v2.TRANSACTIONAL_FLAG)
            self.state.apply_data(pid, base, transactional, path, position)
            if transactional:
                txn = self.open.get(pid)
                if txn is None:
                    txn = self.open[pid] = Transaction(pid, h[10], base)
                txn.add_batch(last, h[12], h[10], ts)
            return
        self.state.completed = None
        self.state.apply(batch if batch is not None else aux.batch(position), self.limit)
        done = self.state.completed
        if done is None:
            return
        txn = self.open.pop(pid, None) or Transaction(pid, h[10], done.first_offset)
        txn.outcome = ABORTED if done.type_id == control.ABORT else COMMITTED
        txn.producer_epoch = h[10]
        txn.marker_offset, txn.coordinator_epoch = done.marker_offset, done.coordinator_epoch
        txn.marker_timestamp, txn.last_stable_offset = ts, done.last_stable_offset
        if txn.outcome == ABORTED:
            report.aborted += 1
            self.expected.append((pid, done.first_offset, done.marker_offset, done.last_stable_offset))
        else:
            report.committed += 1
        report.completed(txn)
        if self.on_transaction is not None:
            self.on_transaction(txn)

    def segment(self, seg: Segment) -> bool:
        """Every batch of one segment; a corrupt batch ends it, as recovery truncates there.  What was
        read is ``report.reads`` (:class:`~kseg.storage.outcome.ReadOutcome`); False when the segment
        could not be read (an I/O error: the state after it is unknown, the walk ends)."""
        log = seg.log
        if log is None:  # nothing to read (analyse walks the segments with a .log)
            return True
        path = files.display(log, store=seg.store)
        read = ReadOutcome(path, present=seg.log_size())
        self.report.reads.append(read)
        aux = SecondReader(log, seg.store)  # opened on first use, inside the try below
        try:
            with FileRecords(log, store=seg.store) as records:
                read.present = records.end
                self._scan(seg, records, aux, read, path)
            if read.read < read.present:
                read.stop, read.position = TRUNCATED, read.read
                read.reason = (
                    f"{read.present - read.read} bytes after the last whole batch: a partial batch "
                    "(Kafka's recovery truncates them); later transactions of this segment are not read"
                )
                self.report.problems.append(
                    TxnProblem("partial_batch", path, seg.name, read.reason, position=read.position)
                )
        except CorruptRecordError as exc:
            exc = exc.at(path)
            read.stopped_at(exc)
            self.report.problems.append(
                TxnProblem(
                    "corrupt_batch",
                    path,
                    seg.name,
                    f"{exc.message}; Kafka's recovery truncates the segment here, "
                    "later transactions of this segment are not read (see kseg verify-index)",
                    position=exc.position,
                )
            )
        except InputError as exc:
            return self._failed(seg, read, exc)
        finally:
            aux.close()
        return True

    def _failed(self, seg: Segment, read: ReadOutcome, exc: InputError) -> bool:
        exc = exc.at(read.path)
        read.stopped_at(exc)
        self.report.problems.append(
            TxnProblem(
                read.stop,
                read.path,
                seg.name,
                f"{exc.message}; this segment and the ones after it are not read",
                position=exc.position,
            )
        )
        return False

    def _scan(self, seg: Segment, records, aux, read: ReadOutcome, path: str) -> None:
        report = self.report
        for items in records.scan():
            for position, size, h, item in items:
                if h is not None and item and h[9] < 0 and h[0] <= _NO_OVERFLOW:  # no producer: only its
                    # timestamp matters (a base offset within 2^31 of 2^63-1: batch() checks the last offset)
                    if report.latest_timestamp is None or h[8] > report.latest_timestamp:
                        report.latest_timestamp = h[8]
                    read.read = position + size
                    continue
                batch = None
                if h is None:
                    batch = item
                    if not batch.is_valid():
                        raise _corrupt(batch, path)
                    if batch.magic < 2:
                        ts = batch.max_timestamp
                        if report.latest_timestamp is None or ts > report.latest_timestamp:
                            report.latest_timestamp = ts
                        read.read = position + size
                        continue
                    h = batch.h
                elif not item:
                    raise _corrupt(aux.batch(position), path)
                try:
                    self.batch(path, aux, position, h, batch)
                except RecoveryFailure as exc:
                    report.problems.append(
                        TxnProblem("recovery_failure", path, seg.name, exc.message, position=exc.position)
                    )
                read.read = position + size


_NO_OVERFLOW = INT64_MAX - 0x7FFFFFFF  # no lastOffsetDelta takes a base offset up to this past 2^63-1


def _corrupt(batch, path: str) -> CorruptRecordError:
    return CorruptRecordError(batch.crc_mismatch(), path=path, position=batch.position)
