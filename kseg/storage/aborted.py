"""Which records a ``read_committed`` consumer drops as aborted: Kafka's rule, over batches read in order.

A broker answers a ``read_committed`` fetch with the aborted transactions that overlap it, read from
the ``.txnindex`` files of the segment fetched from and the ones after it (an ABORT marker's entry is
in the index of the segment holding the marker, so a transaction may start in an earlier one:
``LocalLog.collectAbortedTransactions``, entries with ``lastOffset >= fetchOffset``).  The consumer
then walks the batches (``CompletedFetch.nextFetchedRecord``): for each batch with a producer id it
first takes every aborted transaction whose ``firstOffset`` is at or below the batch's last offset
(its producer joins the aborted set), then an ABORT control batch takes its producer out of the set,
and a *transactional* data batch whose producer is in the set is aborted.  Control batches are never
delivered.  v0/v1 entries have no producer: never aborted.

:class:`ReadCommitted` is that walk; its entries come from the ``.txnindex`` files given (those of
the segment read and every later one of the partition), read as streams, and an entry whose
``lastOffset`` is below the first batch read is left out as the broker leaves it out.

A ``read_committed`` fetch also stops at the partition's *last stable offset* (LSO): the first offset
of the earliest transaction still open.  :func:`last_stable_offset` finds it as a broker's log loading
does (``UnifiedLog.rebuildProducerState``): the latest readable producer snapshot, then every batch
after it (:class:`~kseg.storage.producer_state.ProducerState`); with no snapshot, from the first
segment.  Offline there is no high watermark to bound it (a follower's records above it are read).
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache
from typing import TYPE_CHECKING, Sequence

from kseg.errors import InputError, KsegError
from kseg.format import control, v2
from kseg.format.indexes import iter_aborted_txns
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT, INT64_MAX
from kseg.storage import files
from kseg.storage.batch import FileBatch, V2Batch

if TYPE_CHECKING:
    from kseg.storage.context import Store


class ReadCommitted:
    """The aborted transactions of ``txn_indexes`` (paths) walked as a consumer walks them (module
    docstring); ``problems`` holds one line per ``.txnindex`` that could not be used (a corrupt entry:
    its entries up to it are used)."""

    def __init__(self, txn_indexes: Sequence[str], store: Store) -> None:
        entries: list[tuple[int, int, int]] = []
        self.problems: list[tuple[str, int, str]] = []
        for path in txn_indexes:
            data = files.read_small_file(path, store=store)  # InputError: the OS's reason, exit 2
            try:
                for _, pid, first, last, _ in iter_aborted_txns(data):
                    entries.append((first, last, pid))
            except InputError:
                raise
            except KsegError as exc:
                self.problems.append((path, exc.position or 0, exc.message))
        entries.sort()
        self._pending = deque(entries)
        self._aborted: set[int] = set()

    @property
    def quiet(self) -> bool:
        """No aborted transaction pending or open: :meth:`aborted` is False for every data batch and moves
        nothing (the batches may be read without it)."""
        return not self._pending and not self._aborted

    def aborted(self, batch: FileBatch, limit: int) -> bool:
        """Whether the records of ``batch`` (the next batch read) are aborted; moves the walk on."""
        if not isinstance(batch, V2Batch):
            return False
        h = batch.h
        pid = h[v2.PRODUCER_ID]
        if pid < 0:
            return False
        last, base, pending = batch.last_offset, batch.base_offset, self._pending
        while pending and pending[0][0] <= last:
            _, end, producer = pending.popleft()
            if end >= base:  # (an entry whose marker precedes the reading is not the fetch's)
                self._aborted.add(producer)
        if batch.is_control:
            if _is_abort_marker(batch, limit):
                self._aborted.discard(pid)
            return False
        return batch.is_transactional and pid in self._aborted


def _is_abort_marker(batch: V2Batch, limit: int) -> bool:
    """``containsAbortMarker``: the control batch's first record is an ABORT marker (an unreadable one is not)."""
    try:
        record = next(iter(batch.records(limit)), None)
        return record is not None and control.parse_type_id(record[3]) == control.ABORT
    except InputError:
        raise
    except KsegError:
        return False


@lru_cache(maxsize=64)  # a partition's splits are read one after another (locally, and in a task)
def last_stable_offset(partition: str, store: Store) -> int | None:
    """The LSO of the partition directory ``partition`` of ``store`` (module docstring): the first offset of its
    earliest transaction still open at the log end, None when none is open.  Raises :class:`InputError` for what
    cannot be read; a log that Kafka's recovery would stop in ends the replay there (what was read decides)."""
    from kseg.storage.partition import scan_partition
    from kseg.storage.producer_state import ProducerState
    from kseg.storage.records import FileRecords
    from kseg.storage.snapshots import readable_snapshots

    part = scan_partition(partition, [], store=store)
    segments = [seg for seg in part.segments if seg.log is not None]
    if not segments:
        return None
    snaps = readable_snapshots(part.snapshots, segments[0].base_offset, INT64_MAX, [], store)
    state = ProducerState()
    start = segments[0].base_offset
    if snaps:
        state.load(snaps[-1].open_txns().items())
        start = snaps[-1].offset
    first = max((k for k, seg in enumerate(segments) if seg.base_offset <= start), default=0)
    try:
        for seg in segments[first:]:
            assert seg.log is not None
            with FileRecords(seg.log, store=seg.store) as records:
                for batch in records.batches():
                    if batch.base_offset >= start:
                        state.apply(batch, DEFAULT_DECOMPRESSION_LIMIT)
    except InputError:
        raise
    except KsegError:
        pass  # recovery stops at a batch it cannot take: the state read so far
    return min(state.ongoing, default=None)
