"""Transactions of a partition, rebuilt offline from its log (``kseg txn``).

Producer and transaction state is kept by :class:`kseg.storage.producer_state.ProducerState`
(the state machine the ``.txnindex`` rebuild uses: ``ProducerAppendInfo`` with
origin REPLICATION).  This module walks the log as Kafka's recovery does
(``UnifiedLog.rebuildProducerState``: from the latest usable ``.snapshot``,
see :mod:`kseg.storage.snapshots`, or from the first segment with
``from_start``) and keeps, per transaction, what an operator needs:

* producer id and epoch, first offset (``ProducerStateEntry.currentTxnFirstOffset``),
  last data offset, record and batch counts, first and last batch timestamps;
* the outcome: ``committed`` / ``aborted`` with the end marker's offset, its
  coordinator epoch (``EndTransactionMarker``) and timestamp, and the last
  stable offset computed when it completed (``ProducerStateManager.lastStableOffset``);
  or ``open`` when no marker follows.

The last stable offset of the partition is ``UnifiedLog.lastStableOffset``:
the first offset of the earliest open transaction (``ProducerStateManager.firstUnstableOffset``),
else the high watermark -- unknown offline, so the log end offset stands in.

An open transaction is *hanging* when its producer's last write
(``ProducerStateEntry.lastTimestamp``) is older than ``hanging_after_ms``
(default ``transaction.max.timeout.ms``, 900000 ms in
``TransactionStateManagerConfigs``) against the latest batch timestamp read --
the rule of ``kafka-transactions.sh find-hanging``
(``TransactionsCommand.FindHangingTransactionsCommand``: current time minus
``lastTimestamp`` over ``--max-transaction-timeout``, 15 minutes): a
coordinator would have aborted it by then, so no marker is coming.

Memory: open transactions and one segment's expected ``.txnindex`` entries;
completed transactions are handed to a callback as they complete.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kseg.errors import CorruptRecordError, InputError, RecoveryFailure
from kseg.format import control, v2
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT
from kseg.ops.txn.audit import TxnProblem, audit_txnindex
from kseg.storage import files
from kseg.storage.outcome import TRUNCATED, ReadOutcome
from kseg.storage.outcome import exit_code as outcome_exit_code
from kseg.storage.partition import Partition, Segment
from kseg.storage.producer_state import ProducerState
from kseg.storage.records import FileRecords, SecondReader
from kseg.storage.snapshots import Snapshot, readable_snapshots

DEFAULT_HANGING_AFTER_MS = 15 * 60 * 1000  # transaction.max.timeout.ms (TransactionStateManagerConfigs)
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
    def lso_holder(self) -> Transaction | None:
        return min(self.open, key=lambda t: t.first_offset, default=None)

    @property
    def last_stable_offset(self) -> int:
        holder = self.lso_holder
        return holder.first_offset if holder is not None else self.log_end

    @property
    def exit_code(self) -> int:
        return outcome_exit_code(self.reads, problems=bool(self.problems))


def topic_partition(name: str) -> tuple[str | None, int | None]:
    """Topic and partition number from a partition directory name (``Log.parseTopicPartitionName``)."""
    topic, sep, number = name.rpartition("-")
    if sep and topic and number.isdigit():
        return topic, int(number)
    return None, None


def abort_command(report: TxnReport, txn: Transaction) -> str:
    """The ``kafka-transactions.sh abort`` line that resolves a hanging transaction (KIP-664,
    ``TransactionsCommand.AbortTransactionCommand``: --topic, --partition, --start-offset for
    brokers 3.0+)."""
    topic, number = topic_partition(report.name)
    return (
        f"kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic {topic or 'TOPIC'} "
        f"--partition {number if number is not None else 'PARTITION'} --start-offset {txn.first_offset}"
    )


def log_end_offset(segments: list[Segment]) -> int:
    """The offset after the last batch of the last non-empty segment (``LocalLog.logEndOffset``)."""
    for seg in reversed(segments):
        last = None
        with FileRecords(seg.log) as records:
            try:
                for items in records.scan():
                    position, _, h, batch = items[-1]
                    last = v2.last_offset(h[0], h[6]) if h is not None else batch.last_offset
            except CorruptRecordError:
                pass
        if last is not None:
            return v2.java_long(last + 1)  # Kafka's nextOffset(), in long arithmetic
    return segments[-1].base_offset


def _segment_for(segments: list[Segment], offset: int) -> int:
    """Index of the segment holding ``offset`` (the last with base <= offset; 0 if none)."""
    index = 0
    for i, seg in enumerate(segments):
        if seg.base_offset <= offset:
            index = i
    return index


class _Walker:
    """Replays batches into the producer state and the report (one instance per partition)."""

    def __init__(
        self,
        report: TxnReport,
        state: ProducerState,
        start: int,
        limit: int,
        on_transaction: Callable[[Transaction], None] | None,
        checks: list[Snapshot],
    ) -> None:
        self.report = report
        self.state = state
        self.start = start
        self.limit = limit
        self.on_transaction = on_transaction
        self.checks = checks  # snapshots above the start, compared with the state when reached
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
                            files.display(snap.path),
                            None,
                            f"producer {pid} at offset {snap.offset}: the snapshot has a transaction "
                            f"{show(want.get(pid))}, the log gives {show(have.get(pid))}",
                            expected=show(have.get(pid)),
                            found=show(want.get(pid)),
                        )
                    )

    def batch(self, seg: Segment, aux, position: int, h: tuple, batch) -> None:
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
        path = files.display(seg.log)
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
        if self.on_transaction is not None:
            self.on_transaction(txn)

    def segment(self, seg: Segment) -> bool:
        """Every batch of one segment; a corrupt batch ends it, as recovery truncates there.  What was
        read is ``report.reads`` (:class:`~kseg.storage.outcome.ReadOutcome`); False when the segment
        could not be read (an I/O error: the state after it is unknown, the walk ends)."""
        path = files.display(seg.log)
        read = ReadOutcome(path, present=seg.log_size())
        self.report.reads.append(read)
        aux = SecondReader(seg.log)  # opened on first use, inside the try below
        try:
            with FileRecords(seg.log) as records:
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
                    self.batch(seg, aux, position, h, batch)
                except RecoveryFailure as exc:
                    report.problems.append(
                        TxnProblem("recovery_failure", path, seg.name, exc.message, position=exc.position)
                    )
                read.read = position + size


_NO_OVERFLOW = v2.INT64_MAX - 0x7FFFFFFF  # no lastOffsetDelta takes a base offset up to this past 2^63-1


def _corrupt(batch, path: str) -> CorruptRecordError:
    return CorruptRecordError(
        f"batch at offset {batch.base_offset} fails its CRC check", path=path, position=batch.position
    )


def analyse(
    partition: Partition,
    *,
    from_start: bool = False,
    hanging_after_ms: int = DEFAULT_HANGING_AFTER_MS,
    limit: int = DEFAULT_DECOMPRESSION_LIMIT,
    on_transaction: Callable[[Transaction], None] | None = None,
    on_start: Callable[[TxnReport], None] | None = None,
    at: int | None = None,
) -> TxnReport:
    """Rebuild the transactions of ``partition`` (module docstring): ``on_start`` is called once the
    starting point is chosen, ``on_transaction`` for each transaction as its marker is read.
    Ages are measured against ``at`` (epoch ms) when given, else the latest batch timestamp.
    Raises :class:`InputError` for a partition without a readable ``.log``."""
    report = TxnReport(partition, from_start)
    segments = [s for s in partition.segments if s.log is not None]
    if not segments:
        raise InputError("no .log segment in this partition directory", path=partition.path)
    report.log_start = segments[0].base_offset
    report.log_end = log_end_offset(segments)
    snaps = readable_snapshots(partition.snapshots, report.log_start, report.log_end, report.notes)
    state = ProducerState()
    seed = None
    if from_start:
        seed = next((s for s in snaps if s.offset == report.log_start), None)
        if seed is None and report.log_start > 0:
            report.notes.append(
                f"no snapshot at the log start offset {report.log_start}: state starts empty there; "
                "a transaction opened before it is not known"
            )
    elif snaps:
        seed = snaps[-1]
    else:
        report.notes.append("no usable .snapshot: state rebuilt from the first segment")
    report.start_offset = seed.offset if seed is not None else report.log_start
    if seed is not None:
        report.snapshot = files.display(seed.path)
        state.load(seed.open_txns().items())
        for pid, first in sorted(seed.open_txns().items(), key=lambda kv: kv[1]):
            entry = seed.entry(pid)
            report.open.append(Transaction(pid, entry.epoch, first, seeded=True))
    checks = [s for s in snaps if s.offset > report.start_offset]
    if from_start and seed is None and report.log_start > 0:
        checks = []  # the state before the log start is unknown: no fair comparison
    if on_start is not None:
        on_start(report)
    walker = _Walker(report, state, report.start_offset, limit, on_transaction, checks)
    last_nonempty = max((i for i, s in enumerate(segments) if s.log_size() > 0), default=len(segments) - 1)
    read_from = min([report.start_offset] + [t.first_offset for t in report.open])
    first_index = min(_segment_for(segments, read_from), last_nonempty)
    for i, seg in enumerate(segments):
        audited = seg.base_offset >= report.start_offset
        if not audited:
            report.txnindex_not_checked += 1
        if i < first_index:
            continue
        walker.expected = []
        if not walker.segment(seg):
            break
        if audited:
            report.txnindex_checked += 1
            report.problems.extend(audit_txnindex(seg, walker.expected))
    walker.check_snapshots(None)
    report.open = sorted(walker.open.values(), key=lambda t: t.first_offset)
    for txn in report.open:
        last_write = txn.last_timestamp
        if last_write is None and seed is not None and seed.entry(txn.producer_id) is not None:
            last_write = seed.entry(txn.producer_id).timestamp  # ProducerStateEntry.lastTimestamp, from the snapshot
        latest = report.latest_timestamp if at is None else at
        if latest is not None:
            txn.open_ms = None if txn.first_timestamp is None else latest - txn.first_timestamp
            if last_write is not None:
                txn.idle_ms = latest - last_write
                txn.hanging = txn.idle_ms > hanging_after_ms
        if txn.hanging:
            holds = "; it holds the last stable offset" if txn is report.lso_holder else ""
            report.problems.append(
                TxnProblem(
                    "hanging_transaction",
                    files.display(partition.path),
                    None,
                    f"producer {txn.producer_id} (epoch {txn.producer_epoch}) has a transaction open from offset "
                    f"{txn.first_offset} and has not written for {txn.idle_ms} ms (over --hanging-after "
                    f"{hanging_after_ms} ms){holds}",
                    command=abort_command(report, txn),
                )
            )
    return report
