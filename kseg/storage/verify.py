"""Verification of one segment: its log, offset index, time index and transaction index.

One streaming pass over the ``.log`` collects, per batch, its position, base
and last offset and max timestamp (compact ``array``s, 32 bytes a batch),
checking CRCs, framing and offset order as it goes.  The indexes are then
checked against those arrays without reading the log again.

Rules (see ``docs/verify-index.md``):

* Kafka's ``--index-sanity-check`` (``OffsetIndex``/``TimeIndex.sanityCheck``).
* Kafka's ``--verify-index-only`` (``DumpLogSegments.dumpIndex``/``dumpTimeIndex``),
  in ``strict`` mode only for the rule that an offset-index entry's offset is
  the last offset of the batch at its position.
* The *lookup* rules (default): each offset-index entry points at a batch
  boundary whose batch holds offsets <= the entry's offset; offsets and
  positions strictly increase; positions lie inside the log.  A broker before
  KAFKA-806 indexed a multi-batch append as (last offset of the append, start
  of the append): lookups work, so by default that is a note, not a problem.
* Time-index entries: strictly increasing timestamps, each entry's offset the
  last offset of a batch, and its timestamp the largest batch timestamp seen
  up to that batch.
* A preallocated zero tail (an active segment copied from a live broker) is
  recognised and noted, not reported.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from kseg.errors import CorruptIndexError, InputError, KsegError
from kseg.format.indexes import OffsetIndexView, TimeIndexView, iter_aborted_txns
from kseg.storage import files
from kseg.storage.partition import Segment
from kseg.storage.records import FileRecords

DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024


@dataclass
class Problem:
    """One thing wrong: which file, where (byte position or index entry), expected vs found."""

    kind: str
    file: str
    message: str
    position: int | None = None  # byte position in the file
    entry: int | None = None  # index entry number
    expected: str | None = None
    found: str | None = None

    def line(self) -> str:
        where = [self.file]
        if self.entry is not None:
            where.append(f"entry {self.entry}")
        if self.position is not None:
            where.append(f"byte {self.position}")
        text = f"{': '.join(where)}: {self.kind}: {self.message}"
        if self.expected is not None or self.found is not None:
            text += f" (expected {self.expected}, found {self.found})"
        return text


@dataclass
class SegmentResult:
    """The outcome for one segment (a report row), with its problems and notes."""

    partition: str
    segment: str
    base_offset: int
    path: str
    bytes: int = 0
    batches: int = 0
    last_offset: int | None = None
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: str | None = None  # the segment could not be verified at all (I/O)
    log_dir: str = ""  # the log directory holding the partition (with ``partition``, its identity)

    @property
    def status(self) -> str:
        if self.failed:
            return "failed"
        return "problems" if self.problems else "clean"

    def fail(self, why: str) -> None:
        """This segment could not be read whole: ``failed`` (exit 2), whatever else was found."""
        self.failed = why if self.failed is None else f"{self.failed}; {why}"

    def problem(self, kind: str, file: str | None, message: str, **where) -> None:
        self.problems.append(Problem(kind, file or self.path, message, **where))


@dataclass
class LogScan:
    """What one pass over the log found, per batch."""

    positions: array = field(default_factory=lambda: array("q"))
    base_offsets: array = field(default_factory=lambda: array("q"))
    last_offsets: array = field(default_factory=lambda: array("q"))
    max_timestamps: array = field(default_factory=lambda: array("q"))
    size: int = 0
    valid_end: int = 0


def verify_segment(partition: str, seg: Segment, *, strict: bool = False,
                   max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> SegmentResult:
    """Verify one segment; never raises for bad data (problems are collected)."""
    path = seg.log or seg.index or seg.timeindex or seg.txnindex or ""
    res = SegmentResult(partition, seg.name, seg.base_offset, path)
    if seg.log is None:
        for idx in (seg.index, seg.timeindex, seg.txnindex):
            if idx:
                res.problem("missing-log", idx, "index file without its .log segment",
                            expected=files.stem(idx) + files.LOG, found="nothing")
        return res
    try:
        scan = _scan_log(res, seg.log)
    except InputError as exc:
        res.failed = exc.describe()
        return res
    if seg.index:
        _check_offset_index(res, seg, scan, strict)
    if seg.timeindex:
        _check_time_index(res, seg, scan, strict)
    if seg.txnindex:
        _check_txn_index(res, seg)
    return res


def _scan_log(res: SegmentResult, path: str) -> LogScan:
    scan = LogScan()
    with FileRecords(path) as records:
        scan.size = res.bytes = records.size
        state = [None]  # the largest last offset so far
        try:
            for items in records.scan():  # header tuples with CRC verdicts, no object per v2 batch
                for pos, size, h, verdict in items:
                    if h is not None:
                        base, last, max_ts, valid, stored = h[0], h[0] + h[6], h[8], verdict, h[4]
                    else:  # a legacy entry, or a v2 batch too odd or too large for the fast path
                        batch = verdict
                        base, last, max_ts = batch.base_offset, batch.last_offset, batch.max_timestamp
                        valid, stored = batch.is_valid(), batch.checksum
                    _check_batch(res, scan, state, path, pos, size, base, last, max_ts, valid, stored)
        except KsegError as exc:
            res.problem("corrupt-batch", path, exc.message, position=exc.position)
            res.batches, res.last_offset = len(scan.positions), state[0]
            return scan
        res.batches, res.last_offset = len(scan.positions), state[0]
        trailing = records.size - scan.valid_end
        if trailing > 0:
            res.problem("trailing-bytes", path, f"{trailing} invalid bytes at the end of the log (Kafka's "
                        "recovery would truncate them)", position=scan.valid_end)
    return scan


def _check_batch(res: SegmentResult, scan: LogScan, state: list, path: str, pos: int, size: int, base: int,
                 last: int, max_ts: int, valid: bool, stored_crc: int) -> None:
    """Checks on one batch's header; record it in ``scan``."""
    prev_last = state[0]
    if not valid:
        res.problem("crc", path, "batch CRC does not match its contents", position=pos,
                    expected="a valid checksum", found=f"stored crc {stored_crc}")
    if base < res.base_offset:
        res.problem("offset-below-base", path, "batch offset below the segment's base offset",
                    position=pos, expected=f">= {res.base_offset}", found=str(base))
    if prev_last is not None and base <= prev_last:
        res.problem("offsets-not-increasing", path, "batch offsets do not increase", position=pos,
                    expected=f"base offset > {prev_last}", found=str(base))
    if last < base:
        res.problem("bad-last-offset", path, "batch last offset below its base offset",
                    position=pos, expected=f">= {base}", found=str(last))
    state[0] = last if prev_last is None else max(prev_last, last)
    scan.positions.append(pos)
    scan.base_offsets.append(base)
    scan.last_offsets.append(last)
    scan.max_timestamps.append(max_ts)
    scan.valid_end = pos + size


def _load_index(res: SegmentResult, path: str, view_cls, base: int):
    try:
        view = view_cls(files.read_small_file(path), base, path)
    except InputError as exc:  # a file that cannot be read makes the segment failed, never clean
        res.fail(exc.describe())
        return None
    try:
        view.sanity_check()
    except CorruptIndexError as exc:
        if not _zero_tail(view):
            res.problem("sanity", path, f"fails the broker's start-up sanity check: {exc.message}")
    return view


def _zero_tail(view) -> int:
    """Entries of a preallocated zero tail (offset == base after entry 0), or 0."""
    for i in range(1, view.entries):
        e = view.entry(i)
        offset = e[0] if isinstance(view, OffsetIndexView) else e[1]
        if offset == view.base_offset and view.data[i * view.entry_size:(i + 1) * view.entry_size].count(0) \
                == view.entry_size:
            return view.entries - i
    return 0


def _used_entries(res: SegmentResult, view, path: str) -> int:
    tail = _zero_tail(view)
    if tail:
        res.notes.append(f"{path}: preallocated zero tail of {tail} entries (an active segment's index, "
                         "as after a crash); the broker rebuilds it on recovery")
    if view.length % view.entry_size:
        res.problem("index-length", path, "file length is not a multiple of the entry size",
                    expected=f"a multiple of {view.entry_size}", found=str(view.length))
    return view.entries - tail


def _check_offset_index(res: SegmentResult, seg: Segment, scan: LogScan, strict: bool) -> None:
    path = seg.index
    view = _load_index(res, path, OffsetIndexView, seg.base_offset)
    if view is None:
        return
    n = _used_entries(res, view, path)
    prev_offset = prev_pos = None
    pre806 = 0
    for i in range(n):
        offset, position = view.entry(i)
        if prev_offset is not None and offset <= prev_offset:
            res.problem("index-order", path, "offsets do not strictly increase", entry=i, position=i * 8,
                        expected=f"> {prev_offset}", found=str(offset))
        if prev_pos is not None and position <= prev_pos:
            res.problem("index-order", path, "positions do not strictly increase", entry=i, position=i * 8,
                        expected=f"> {prev_pos}", found=str(position))
        prev_offset, prev_pos = offset, position
        if position < 0 or position >= max(scan.valid_end, 1):
            res.problem("index-position", path, "position outside the log's batches", entry=i, position=i * 8,
                        expected=f"0 <= position < {scan.valid_end}", found=str(position))
            continue
        k = bisect_left(scan.positions, position)
        if k == len(scan.positions) or scan.positions[k] != position:
            res.problem("index-boundary", path, "position is not a batch boundary", entry=i, position=i * 8,
                        expected="the start of a batch", found=str(position))
            continue
        first, last = scan.base_offsets[k], scan.last_offsets[k]
        if first > offset:
            res.problem("index-offset", path, "the batch at this position starts after the indexed offset",
                        entry=i, position=i * 8, expected=f"a batch holding offsets <= {offset}",
                        found=f"batch {first}-{last}")
        elif last != offset:
            k2 = bisect_left(scan.last_offsets, offset, k)
            if k2 == len(scan.last_offsets) or scan.last_offsets[k2] != offset:
                res.problem("index-offset", path, "indexed offset is not the last offset of a batch (nor of a "
                            "multi-batch append starting at this position)", entry=i, position=i * 8,
                            expected=f"{last} (or a later batch's last offset)", found=str(offset))
            elif strict:
                res.problem("index-mismatch", path, "indexed offset is not the last offset of the batch at its "
                            "position (Kafka's --verify-index-only rule)", entry=i, position=i * 8,
                            expected=str(last), found=str(offset))
            else:
                pre806 += 1
    if pre806:
        res.notes.append(f"{path}: {pre806} entries index a multi-batch append (last offset of the append at "
                         "its start position), as brokers before KAFKA-806 wrote them; lookups work. Kafka's "
                         "--verify-index-only and kseg --strict report them")


def _check_time_index(res: SegmentResult, seg: Segment, scan: LogScan, strict: bool) -> None:
    path = seg.timeindex
    view = _load_index(res, path, TimeIndexView, seg.base_offset)
    if view is None:
        return
    n = _used_entries(res, view, path)
    prev_ts = None
    running = array("q")  # the largest batch max timestamp up to each batch
    best = -1
    for ts in scan.max_timestamps:
        best = max(best, ts)
        running.append(best)
    ordered = all(a < b for a, b in zip(scan.last_offsets, scan.last_offsets[1:]))
    records = None  # opened for --strict only: Kafka's rule needs the records' timestamps
    for i in range(n):
        ts, offset = view.entry(i)
        if prev_ts is not None and ts <= prev_ts:
            res.problem("timeindex-order", path, "timestamps do not strictly increase", entry=i, position=i * 12,
                        expected=f"> {prev_ts}", found=str(ts))
        prev_ts = ts
        k = bisect_right(scan.last_offsets, offset) - 1 if ordered else _find_last(scan, offset)
        if k < 0 or k >= len(scan.last_offsets) or scan.last_offsets[k] != offset:
            res.problem("timeindex-offset", path, "indexed offset is not the last offset of any batch",
                        entry=i, position=i * 12, expected="a batch's last offset", found=str(offset))
            continue
        if running[k] != ts:
            res.problem("timeindex-timestamp", path, "timestamp is not the largest timestamp up to its batch",
                        entry=i, position=i * 12, expected=str(running[k]), found=str(ts))
        if strict:
            if records is None:
                records = FileRecords(seg.log)
            record_max = _record_max_timestamp(records, scan.positions[k])
            if record_max != ts:
                res.problem("timeindex-mismatch", path, "timestamp is not the max record timestamp of the batch "
                            "ending at the indexed offset (Kafka's --verify-index-only rule)", entry=i,
                            position=i * 12, expected=str(record_max), found=str(ts))
    if records is not None:
        records.close()


def _record_max_timestamp(records: FileRecords, position: int) -> int:
    """The largest record timestamp of the batch at ``position``, as Kafka's dumpTimeIndex computes it."""
    batch = records.batch_at(position)
    best = -1
    try:
        for rec in batch.records(8 * DEFAULT_MAX_MESSAGE_SIZE):
            best = max(best, rec[1])
    except KsegError:
        pass  # the batch's own problems are reported by the log scan
    return best


def _find_last(scan: LogScan, offset: int) -> int:
    for k, last in enumerate(scan.last_offsets):
        if last == offset:
            return k
    return -1


def _check_txn_index(res: SegmentResult, seg: Segment) -> None:
    path = seg.txnindex
    try:
        data = files.read_small_file(path)
    except InputError as exc:
        res.fail(exc.describe())
        return
    if len(data) % 34:
        res.problem("index-length", path, "file length is not a multiple of the entry size",
                    expected="a multiple of 34", found=str(len(data)))
    try:
        for i, (_, pid, first, last, lso) in enumerate(iter_aborted_txns(data)):
            if first > last:
                res.problem("txnindex-range", path, "first offset after last offset", entry=i, position=i * 34,
                            expected=f"<= {last}", found=str(first))
            if res.last_offset is not None and not seg.base_offset <= last <= res.last_offset:
                res.problem("txnindex-range", path, "aborted transaction's last offset (its marker) is outside the "
                            "segment", entry=i, position=i * 34,
                            expected=f"{seg.base_offset}..{res.last_offset}", found=str(last))
    except CorruptIndexError as exc:
        res.problem("txnindex-version", path, exc.message, position=exc.position)


def check_overlap(prev: SegmentResult, cur: SegmentResult) -> None:
    """Consecutive segments must not overlap: the next base offset is after this one's last offset."""
    if prev.last_offset is not None and cur.base_offset <= prev.last_offset:
        cur.problem("segment-overlap", cur.path, "segment overlaps the previous one",
                    expected=f"base offset > {prev.last_offset} (last offset of {os.path.basename(prev.path)})",
                    found=str(cur.base_offset))
