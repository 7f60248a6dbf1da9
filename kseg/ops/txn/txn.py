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

The last stable offset of the partition is ``UnifiedLog.lastStableOffset``: the first unstable offset
(``ProducerStateManager.firstUnstableOffset``: the first offset of the earliest open transaction, or of the
earliest completed one whose marker is at or above the high watermark -- ``unreplicatedTxns``) when it is
below the high watermark, else the high watermark.  The high watermark is the partition's entry in
``replication-offset-checkpoint`` of its log directory (``ReplicaManager.checkpointHighWatermarks``),
bounded as ``UnifiedLog.updateHighWatermark`` bounds it on load (at least the log start offset, at most
the log end offset); where the file or the entry is absent the log end offset stands in, and a note says so.
The LSO is never above the high watermark; an LSO below it means transactions open (or not yet replicated)
below it: ``read_committed`` consumers stop there (``lastStableOffsetLag``).

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

from typing import Callable

from kseg.errors import CorruptRecordError, InputError
from kseg.format import v2
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT
from kseg.ops.txn.audit import TxnProblem, audit_txnindex
from kseg.ops.txn.report import Transaction, TxnReport
from kseg.ops.txn.walk import Walker
from kseg.storage import checkpoints as cp
from kseg.storage import files
from kseg.storage.partition import Partition, Segment
from kseg.storage.producer_state import ProducerState
from kseg.storage.records import FileRecords
from kseg.storage.snapshots import Snapshot, readable_snapshots

DEFAULT_HANGING_AFTER_MS = 15 * 60 * 1000  # transaction.max.timeout.ms (TransactionStateManagerConfigs)


def topic_partition(name: str) -> tuple[str | None, int | None]:
    """Topic and partition number from a partition directory name (``Log.parseTopicPartitionName``)."""
    tp = cp.topic_partition(name)
    return (None, None) if tp is None else tp


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
        if seg.log is None:
            continue
        last = None
        with FileRecords(seg.log, store=seg.store) as records:
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
    _high_watermark(report)
    snaps = readable_snapshots(partition.snapshots, report.log_start, report.log_end, report.notes, partition.store)
    state = ProducerState()
    seed = _seed(report, snaps, from_start)
    report.start_offset = seed.offset if seed is not None else report.log_start
    if report.high_watermark is not None and report.high_watermark < report.start_offset:
        report.notes.append(
            f"the high watermark {report.high_watermark} is below the walk's start {report.start_offset}: a "
            "transaction completed before the start with its marker above the high watermark is not seen"
        )
    if seed is not None:
        report.snapshot = files.display(seed.path, store=partition.store)
        state.load(seed.open_txns().items())
        for pid, entry in sorted(seed.open_entries.items(), key=lambda kv: kv[1].current_txn_first_offset):
            report.open.append(Transaction(pid, entry.epoch, entry.current_txn_first_offset, seeded=True))
    checks = [s for s in snaps if s.offset > report.start_offset]
    if from_start and seed is None and report.log_start > 0:
        checks = []  # the state before the log start is unknown: no fair comparison
    if on_start is not None:
        on_start(report)
    walker = Walker(report, state, report.start_offset, limit, on_transaction, checks, partition.store)
    _walk(report, walker, segments)
    walker.check_snapshots(None)
    report.open = sorted(walker.open.values(), key=lambda t: t.first_offset)
    latest = report.latest_timestamp if at is None else at
    for txn in report.open:
        _age(report, txn, seed, latest, hanging_after_ms)
    return report


def _high_watermark(report: TxnReport) -> None:
    """The partition's high watermark from ``replication-offset-checkpoint`` (module docstring), or a note."""
    hw = cp.partition_entry(report.partition.path, cp.HIGH_WATERMARK, store=report.partition.store)
    if hw.value is None:
        report.notes.append(f"{hw.note}: the log end offset stands in for the high watermark")
        return
    report.high_watermark_file = hw.file
    report.high_watermark = min(max(hw.value, report.log_start), report.log_end)
    if report.high_watermark != hw.value:
        report.notes.append(
            f"high watermark {hw.value} in {hw.file} is outside the log [{report.log_start}, {report.log_end}]: "
            f"{report.high_watermark} taken, as Kafka's load bounds it (UnifiedLog.updateHighWatermark)"
        )


def _seed(report: TxnReport, snaps: list[Snapshot], from_start: bool) -> Snapshot | None:
    """The snapshot the walk starts from (``UnifiedLog.rebuildProducerState``): the latest usable one,
    or with ``from_start`` the one at the log start; None: from an empty state (a note says so)."""
    if from_start:
        seed = next((s for s in snaps if s.offset == report.log_start), None)
        if seed is None and report.log_start > 0:
            report.notes.append(
                f"no snapshot at the log start offset {report.log_start}: state starts empty there; "
                "a transaction opened before it is not known"
            )
        return seed
    if snaps:
        return snaps[-1]
    report.notes.append("no usable .snapshot: state rebuilt from the first segment")
    return None


def _walk(report: TxnReport, walker: Walker, segments: list[Segment]) -> None:
    """Every segment from the one holding the start (or an earlier open transaction's first offset),
    each audited against its ``.txnindex`` when it lies above the start; an unreadable one ends it."""
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


def _age(report: TxnReport, txn: Transaction, seed: Snapshot | None, latest: int | None, hanging_after_ms: int) -> None:
    """An open transaction's age and idle time against ``latest`` (epoch ms), and whether it hangs (the
    rule of ``kafka-transactions.sh find-hanging``: idle over ``hanging_after_ms``)."""
    last_write = txn.last_timestamp
    entry = seed.entry(txn.producer_id) if seed is not None and last_write is None else None
    if entry is not None:
        last_write = entry.timestamp  # ProducerStateEntry.lastTimestamp, from the snapshot
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
                files.display(report.partition.path, store=report.partition.store),
                None,
                f"producer {txn.producer_id} (epoch {txn.producer_epoch}) has a transaction open from offset "
                f"{txn.first_offset} and has not written for {txn.idle_ms} ms (over --hanging-after "
                f"{hanging_after_ms} ms){holds}",
                command=abort_command(report, txn),
            )
        )
