"""The log pass of ``verify-index``: one streaming read of a ``.log``, its own checks, and the batches
its indexes ask about.

Per batch (``FileRecords.scan``'s header tuples: no object per v2 batch) the pass checks the CRC
verdict, that offsets increase and stay at or above the segment's base offset, and that the last
offset is not below the base offset; after the last batch, trailing bytes that do not frame a batch
(Kafka's recovery truncates them).  It records, in a :class:`~kseg.ops.verify.result.LogScan`,
only the batches an index entry can ask about (:class:`~kseg.ops.verify.result.IndexKeys`):
memory follows the index entries, not the batches, so a segment of one-record batches costs what a
segment of large ones does.
"""

from __future__ import annotations

import heapq
from functools import partial
from itertools import islice
from operator import le
from typing import Callable, Iterable, Iterator

from kseg.errors import InputError, KsegError
from kseg.format.indexes import OffsetIndexView
from kseg.format.v2 import LEADER_EPOCH as _EPOCH
from kseg.format.v2 import java_long
from kseg.limits import INT64_MAX
from kseg.ops.verify.result import IndexFiles, IndexKeys, LogScan, SegmentResult
from kseg.storage.leader_epochs import NO_EPOCH, EpochCheck
from kseg.storage.records import FileRecords
from kseg.storage.stores.base import ReadFile, Store

_PAST_ALL = INT64_MAX + 1  # a key beyond every position and offset: ends the walks below without a length check


def index_keys(indexes: IndexFiles) -> IndexKeys | None:
    """The ``.log`` positions a segment's ``.index`` names and the offsets its ``.index`` and
    ``.timeindex`` name, each ascending, read lazily from the views (a file that could not be read
    names none: its check reports it).  None when an index's keys do not ascend (a damaged or garbage
    index): the log pass then records every batch, so memory follows the log, never the index (sorting
    a random 1 GiB index's 134 M keys would cost gigabytes)."""
    positions: Iterable[int] = ()
    offsets: list[Iterable[int]] = []
    for view in indexes:
        if view is None or isinstance(view, InputError):
            continue
        stop = view.entries - view.zero_tail()  # a preallocated tail asks nothing the checks look at
        if not _ascends(partial(view.iter_offsets, stop)):
            return None
        offsets.append(view.iter_offsets(stop))
        if isinstance(view, OffsetIndexView):
            if not _ascends(partial(view.iter_positions, stop)):
                return None
            positions = view.iter_positions(stop)
    return IndexKeys(iter(positions), heapq.merge(*offsets))


def _ascends(values: Callable[[], Iterator[int]]) -> bool:
    """Whether ``values()`` ascends (an index as brokers write it), read twice lazily: nothing is held."""
    return all(map(le, values(), islice(values(), 1, None)))


def scan_log(
    res: SegmentResult,
    path: str,
    keys: IndexKeys | None = None,
    max_message_size: int | None = None,
    epochs: EpochCheck | None = None,
    store: Store | None = None,
    opened: ReadFile | KsegError | None = None,
) -> LogScan:
    """One pass over the log at ``path`` (in ``store``, its segment's; ``opened``: the log opened with its
    segment, or the error opening it, ``Segment.open``): its checks into ``res``, and the batches ``keys``
    ask about (every batch when ``keys`` is None).  The recorded batches answer the index
    checks only when the log's last offsets strictly increase; when they do not, a second pass records every batch.
    A batch larger than ``max_message_size`` (``--max-message-size``) is a problem.  Each batch with a valid CRC
    goes to ``epochs`` (the leader-epoch check) in the first pass.  An I/O error
    is raised (:class:`InputError`): the segment failed, it is not corrupt."""
    scan = _LogPass(res, path, keys, max_message_size, epochs, store).run(opened)
    if keys is not None and not scan.ordered:
        again = SegmentResult(res.partition, res.segment, res.base_offset, path)
        scan = _LogPass(again, path, None, max_message_size, None, store).run()
    return scan


class _LogPass:
    """One read of a log: :meth:`batch` is called for each batch in file order."""

    __slots__ = (
        "res",
        "path",
        "scan",
        "every",
        "positions",
        "offsets",
        "p",
        "o",
        "prev_last",
        "max_last",
        "running",
        "limit",
        "epochs",
        "store",
    )

    def __init__(
        self,
        res: SegmentResult,
        path: str,
        keys: IndexKeys | None,
        max_message_size: int | None = None,
        epochs: EpochCheck | None = None,
        store: Store | None = None,
    ) -> None:
        self.res, self.path, self.epochs, self.store = res, path, epochs, store
        self.limit = max_message_size
        self.scan = LogScan()
        self.every = keys is None  # record every batch
        self.positions: Iterator[int] = iter(()) if keys is None else keys.positions
        self.offsets: Iterator[int] = iter(()) if keys is None else keys.offsets
        # the first position and offset the log has not passed yet
        self.p = next(self.positions, _PAST_ALL)
        self.o = next(self.offsets, _PAST_ALL)
        self.prev_last: int | None = None  # the last batch's last offset
        self.max_last: int | None = None  # the largest last offset so far
        self.running = -1  # the largest batch max timestamp so far

    def run(self, log: ReadFile | KsegError | None = None) -> LogScan:
        res, scan, batch = self.res, self.scan, self.batch
        try:
            if isinstance(log, KsegError):
                raise log
            opened = FileRecords(self.path, store=self.store, opened=log)
        except InputError:
            raise
        except KsegError as exc:  # a tiered segment whose manifest cannot be read: none of its log was read
            res.problem("corrupt-batch", self.path, exc.describe(), position=None)
            return scan
        with opened as records:
            scan.size = res.bytes = records.size
            try:
                for items in records.scan():
                    for pos, size, h, verdict in items:
                        if h is not None:  # a v2 header tuple (kseg.format.v2.BatchHeader's order)
                            batch(pos, size, h[0], h[0] + h[6], h[8], verdict, h[4], h[_EPOCH])
                        else:  # a legacy entry, or a v2 batch too odd or too large for the fast path
                            last = verdict.h[0] + verdict.h[6] if verdict.magic >= 2 else verdict.last_offset
                            batch(
                                pos,
                                size,
                                verdict.base_offset,
                                last,
                                verdict.max_timestamp,
                                verdict.is_valid(),
                                verdict.checksum,
                                verdict.h[_EPOCH] if verdict.magic >= 2 else NO_EPOCH,
                            )
            except InputError:  # no corruption: the segment failed (verify_segment), no index check follows
                res.bytes = scan.valid_end  # what was read: the summary counts no bytes that were not
                raise
            except KsegError as exc:
                res.problem("corrupt-batch", self.path, exc.message, position=exc.position)
            else:
                trailing = records.size - scan.valid_end
                if trailing > 0:
                    res.problem(
                        "trailing-bytes",
                        self.path,
                        f"{trailing} invalid bytes at the end of the log (Kafka's recovery would truncate them)",
                        position=scan.valid_end,
                    )
        res.batches, res.last_offset = scan.batches, self.max_last
        return scan

    def batch(
        self, pos: int, size: int, base: int, last: int, max_ts: int, valid: bool, stored_crc: int, epoch: int
    ) -> None:
        """Check one batch's header, and record it if an index entry can ask about it."""
        res, path, scan = self.res, self.path, self.scan
        epochs = self.epochs
        if epochs is not None and valid and not (epochs.lo <= base < epochs.hi and epoch == epochs.expected):
            epochs.batch(base, last, epoch)  # (a batch inside the range its predecessor agreed with agrees too)
        if self.limit is not None and size > self.limit:
            res.problem_at(
                "batch-too-large",
                path,
                "batch larger than --max-message-size",
                pos,
                f"<= {self.limit} bytes",
                f"{size} bytes",
            )
        if not valid:
            res.problem_at(
                "crc",
                path,
                "batch CRC does not match its contents",
                pos,
                "a valid checksum",
                f"stored crc {stored_crc}",
            )
        if base < res.base_offset:
            res.problem_at(
                "offset-below-base",
                path,
                "batch offset below the segment's base offset",
                pos,
                f">= {res.base_offset}",
                base,
            )
        max_last = self.max_last
        if max_last is not None and base <= max_last:
            res.problem_at(
                "offsets-not-increasing", path, "batch offsets do not increase", pos, f"base offset > {max_last}", base
            )
        if last > INT64_MAX:  # baseOffset + lastOffsetDelta past a long: Kafka's lastOffset() wraps
            res.problem_at(
                "bad-last-offset",
                path,
                "batch last offset past 2^63-1 (baseOffset + lastOffsetDelta overflows a 64-bit offset)",
                pos,
                f"<= {INT64_MAX}",
                last,
            )
            last = java_long(last)
        elif last < base:
            res.problem_at("bad-last-offset", path, "batch last offset below its base offset", pos, f">= {base}", last)
        if max_last is None or last > max_last:
            self.max_last = last
        if self.prev_last is not None and last <= self.prev_last:
            scan.ordered = False
        self.prev_last = last
        if max_ts > self.running:
            self.running = max_ts
        scan.batches += 1
        scan.valid_end = pos + size
        if not self.every and not self._asked_about(pos, last):
            return
        scan.positions.append(pos)
        scan.base_offsets.append(base)
        scan.last_offsets.append(last)
        scan.running_max.append(self.running)

    def _asked_about(self, pos: int, last: int) -> bool:
        """Whether an ``.index`` entry names ``pos``, or this is the first batch reaching an offset an
        entry names (last offsets increasing: the first whose last offset is >= it)."""
        p = self.p
        while p < pos:
            p = next(self.positions, _PAST_ALL)
        self.p = p
        o = reached = self.o
        while o <= last:
            o = next(self.offsets, _PAST_ALL)
        self.o = o
        return o != reached or p == pos
