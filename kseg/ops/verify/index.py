"""The ``.index`` and ``.timeindex`` checks of ``verify-index``, against one pass over the log.

Two levels (``docs/verify-index.md``, "Which rule applies"):

* **Lookup rule** (default).  An entry is right when Kafka's lookups through
  it are right.  ``OffsetIndex.lookup(t)`` gives the position of the largest
  entry whose offset is <= ``t``; ``FileRecords.searchForOffsetWithSize``
  scans forward from it for the first batch whose last offset is >= ``t``.
  So an offset-index entry (``X``, ``P``) needs a batch starting at ``P``
  whose base offset is <= ``X``, with ``X`` an offset inside a batch at or
  after ``P``.  ``TimeIndex.lookup(ts)`` gives the largest entry whose
  timestamp is <= ``ts``; ``LogSegment.findOffsetByTimestamp`` scans from
  the offset-index position of that entry's offset for the first record
  whose timestamp is >= ``ts``.  So a time-index entry (``T``, ``O``) needs
  ``O`` inside a batch of the segment, ``T`` the largest timestamp up to and
  including that batch, and timestamps strictly increasing.
* **Kafka's ``--verify-index-only``** (``DumpLogSegments.dumpIndex`` /
  ``dumpTimeIndex``, ``--strict``): an offset-index entry names the last
  offset of the batch at its position; a time-index entry names the last
  offset of a batch whose largest *record* timestamp is the entry's.

Healthy files that pass the first and not the second, each a writer rule of
some Kafka version (noted by default, reported with ``--strict``):

* entries naming the last offset of a multi-batch append at its start
  position (``LogSegment.append`` before KAFKA-806: follower fetches,
  uncompressed v0/v1 produce requests, the log cleaner's appends);
* entries naming the largest retained offset of a batch the log cleaner
  rewrote (``MemoryRecords.filterTo``: ``FilterResult.maxOffset`` is the
  largest *kept* record's offset, while ``overrideLastOffset`` keeps the
  batch's original last offset);
* time-index entries naming the record that holds the largest timestamp
  (``LogValidator.assignOffsetsNonCompressed`` on branches 0.11.0-3.6, for
  uncompressed CreateTime appends; 3.7 names the batch's last offset, commit
  e905ef1 "Small LogValidator clean ups", kept by KAFKA-16310 in 3.8).

A preallocated zero tail (an active segment's index after a crash or copied
from a live broker; also a file that is all zeros) is noted, not checked.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from operator import le, lt
from typing import TYPE_CHECKING, NamedTuple

from kseg.errors import CorruptIndexError, InputError, KsegError
from kseg.format.indexes import OffsetIndexView, TimeIndexView
from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE, INT64_MIN, decompression_limit
from kseg.ops.verify.result import IndexFiles, LogScan, PastEnd, Problem, SegmentResult, end_cause, entries
from kseg.storage import files
from kseg.storage.records import FileRecords

if TYPE_CHECKING:  # pragma: no cover
    from kseg.storage.partition import Segment

RECORD_LIMIT = decompression_limit(DEFAULT_MAX_MESSAGE_SIZE)  # the largest batch whose records --strict reads

INDEX_OFFSET_MESSAGE = (
    "indexed offset is not the last offset of a batch (nor of a multi-batch append starting "
    "at this position, nor the last record the log cleaner kept in a batch)"
)
PRE_806_NOTE = (
    "{n} entries index a multi-batch append (last offset of the append at its start position), as "
    "brokers before KAFKA-806 wrote them; lookups work. Kafka's --verify-index-only and kseg --strict "
    "report them"
)
CLEANER_NOTE = (
    "{n} entries name the largest offset the log cleaner kept in a batch it rewrote (not the batch's "
    "last offset; MemoryRecords.filterTo before KAFKA-806); lookups work. Kafka's --verify-index-only "
    "and kseg --strict report them"
)
PRE_37_NOTE = (
    "{n} entries name the offset of the record holding the largest timestamp, not its batch's last "
    "offset: a time index written by a broker before Kafka 3.7 (LogValidator.assignOffsetsNonCompressed, "
    "uncompressed CreateTime appends, Kafka 0.11-3.6; changed in 3.7 by apache/kafka#14697, kept by "
    "KAFKA-16310); lookups work. Kafka's "
    "--verify-index-only and kseg --strict report them"
)


def read_indexes(seg: "Segment") -> IndexFiles:
    """Read ``seg``'s ``.index`` and ``.timeindex`` once (errors are kept for :func:`load_index` to report)."""
    loaded = []
    for path, view_cls in ((seg.index, OffsetIndexView), (seg.timeindex, TimeIndexView)):
        try:
            loaded.append(view_cls(files.open_index(path), seg.base_offset, path) if path else None)
        except InputError as exc:
            loaded.append(exc)
    return IndexFiles(*loaded)


def load_index(res: "SegmentResult", loaded):
    """The index file's view (from :func:`read_indexes`), after the broker's start-up sanity check;
    None if it could not be read (the segment is then failed, never clean)."""
    if isinstance(loaded, InputError):
        res.fail(loaded.describe())
        return None
    view = loaded
    try:
        view.sanity_check()
    except CorruptIndexError as exc:
        if not zero_tail(view):
            res.problem("sanity", view.path, f"fails the broker's start-up sanity check: {exc.message}")
    return view


def zero_tail(view, *, whole_file: bool = True) -> int:
    """Entries of a preallocated zero tail, or 0.

    The tail starts at the first entry after entry 0 whose bytes are all zero
    (its offset is then the base offset: Kafka's tool stops there).  A file
    of more than one entry that is all zeros is a tail from entry 0 when
    ``whole_file`` (an active segment's index with no entry yet: Kafka never
    writes an offset-index entry at position 0, as an entry needs more than
    ``index.interval.bytes`` before it); ``DumpLogSegments`` still checks its
    entry 0, so ``--strict`` passes ``whole_file=False``.
    """
    size = view.entry_size
    if whole_file and view.entries > 1 and view.all_zero():
        return view.entries
    return view.zero_tail()


def used_entries(res: "SegmentResult", view, path: str, strict: bool) -> int:
    """The entries to check (those before a zero tail), noting the tail."""
    tail = zero_tail(view)
    if tail:
        res.notes.append(
            f"{path}: preallocated zero tail of {tail} entries (an active segment's index, "
            "as after a crash, or a rolled segment's left untrimmed, KAFKA-10207); the broker "
            "rebuilds it on recovery"
        )
    if view.length % view.entry_size:
        res.problem(
            "index-length",
            path,
            "file length is not a multiple of the entry size",
            expected=f"a multiple of {view.entry_size}",
            found=str(view.length),
        )
    if strict and tail == view.entries:
        return view.entries - zero_tail(view, whole_file=False)
    return view.entries - tail


def _increasing(values) -> bool:
    return all(map(lt, values, values[1:]))


BULK = 4096  # index entries checked together by the bulk checks (their memory: a few of these)


def _all_batch_ends(view: OffsetIndexView, n: int, scan: "LogScan") -> bool:
    """Whether every entry names the last offset of the batch starting at its position, offsets and
    positions strictly increasing: what a current broker writes, so the entry loop of
    :func:`check_offset_index` would find nothing.  Checked ``BULK`` entries at a time in C loops;
    any other index goes entry by entry."""
    starts, end = scan.positions, max(scan.valid_end, 1)
    prev_offset = prev_position = INT64_MIN
    for first in range(0, n, BULK):
        offsets, positions = view.columns(first, min(n, first + BULK))
        if (
            not (
                prev_offset < offsets[0]
                and prev_position < positions[0]
                and positions[-1] < end
                and _increasing(offsets)
                and _increasing(positions)
            )
            or positions[0] < 0
        ):
            return False
        k0, k1 = bisect_left(starts, positions[0]), bisect_right(starts, positions[-1])
        batch_at = dict(zip(starts[k0:k1], range(k0, k1)))  # batch start -> batch number
        ks = list(map(batch_at.get, positions))
        if not (
            None not in ks
            and list(map(scan.last_offsets.__getitem__, ks)) == offsets
            and all(map(le, map(scan.base_offsets.__getitem__, ks), offsets))
        ):
            return False
        prev_offset, prev_position = offsets[-1], positions[-1]
    return True


def _all_exact_times(view: TimeIndexView, n: int, scan: "LogScan") -> bool:
    """Whether every time-index entry names a batch's last offset with the largest timestamp up to
    that batch, timestamps and offsets strictly increasing (batches in offset order): the entry loop
    of :func:`check_time_index` would find nothing without ``--strict``.  Checked like
    :func:`_all_batch_ends`."""
    last = scan.last_offsets
    prev_ts = prev_offset = INT64_MIN
    for first in range(0, n, BULK):
        timestamps, offsets = view.columns(first, min(n, first + BULK))
        if not (
            prev_ts < timestamps[0] and prev_offset < offsets[0] and _increasing(timestamps) and _increasing(offsets)
        ):
            return False
        k0, k1 = bisect_left(last, offsets[0]), bisect_right(last, offsets[-1])
        batch_ending = dict(zip(last[k0:k1], range(k0, k1)))  # last offset -> batch number
        ks = list(map(batch_ending.get, offsets))
        if None in ks or list(map(scan.running_max.__getitem__, ks)) != timestamps:
            return False
        prev_ts, prev_offset = timestamps[-1], offsets[-1]
    return True


def _batch_holding(scan: "LogScan", offset: int, start: int, ordered: bool) -> int:
    """The first batch from ``start`` whose offsets (base..last) hold ``offset``, or -1."""
    if ordered:
        k = bisect_left(scan.last_offsets, offset, start)
        if k < len(scan.last_offsets) and scan.base_offsets[k] <= offset:
            return k
        return -1
    for k in range(start, len(scan.last_offsets)):
        if scan.base_offsets[k] <= offset <= scan.last_offsets[k]:
            return k
    return -1


def check_offset_index(
    res: "SegmentResult", seg: "Segment", scan: "LogScan", strict: bool, loaded: "OffsetIndexView | InputError"
) -> list[str]:
    """Offset-index entries (``loaded``, from :func:`read_indexes`) against the log (module docstring);
    returns the older-writer-rule notes added."""
    path = seg.index
    view = load_index(res, loaded)
    if view is None:
        return []
    n = used_entries(res, view, path, strict)
    if _all_batch_ends(view, n, scan):
        return []
    ordered = scan.ordered  # of the whole log: the scan may hold only the batches the indexes ask about
    prev_offset = prev_pos = None
    pre806 = cleaned = 0
    past = PastEnd()
    reader = None  # opened only for an entry inside a batch: its records are read
    for i in range(n):
        offset, position = view.entry(i)
        if prev_offset is not None and offset <= prev_offset:
            res.problem(
                "index-order",
                path,
                "offsets do not strictly increase",
                entry=i,
                position=i * 8,
                expected=f"> {prev_offset}",
                found=str(offset),
            )
        if prev_pos is not None and position <= prev_pos:
            res.problem(
                "index-order",
                path,
                "positions do not strictly increase",
                entry=i,
                position=i * 8,
                expected=f"> {prev_pos}",
                found=str(position),
            )
        prev_offset, prev_pos = offset, position
        if position >= max(scan.valid_end, 1):  # past the readable end: one row for them all, after the loop
            past.add(i, position)
            continue
        if position < 0:
            res.problem(
                "index-position",
                path,
                "position outside the log's batches",
                entry=i,
                position=i * 8,
                expected=f"0 <= position < {scan.valid_end}",
                found=str(position),
            )
            continue
        k = bisect_left(scan.positions, position)
        if k == len(scan.positions) or scan.positions[k] != position:
            res.problem(
                "index-boundary",
                path,
                "position is not a batch boundary",
                entry=i,
                position=i * 8,
                expected="the start of a batch",
                found=str(position),
            )
            continue
        first, last = scan.base_offsets[k], scan.last_offsets[k]
        if first > offset:
            res.problem(
                "index-offset",
                path,
                "the batch at this position starts after the indexed offset",
                entry=i,
                position=i * 8,
                expected=f"a batch holding offsets <= {offset}",
                found=f"batch {first}-{last}",
            )
            continue
        if last == offset:
            continue
        k2 = _batch_holding(scan, offset, k, ordered)
        if k2 < 0:
            res.problem(
                "index-offset",
                path,
                INDEX_OFFSET_MESSAGE,
                entry=i,
                position=i * 8,
                expected=f"{last} (or a later batch's last offset)",
                found=str(offset),
            )
        elif strict:
            res.problem(
                "index-mismatch",
                path,
                "indexed offset is not the last offset of the batch at its position (Kafka's --verify-index-only rule)",
                entry=i,
                position=i * 8,
                expected=str(last),
                found=str(offset),
            )
        elif scan.last_offsets[k2] == offset:
            pre806 += 1
        else:
            if reader is None:
                reader = FileRecords(seg.log)
            kept = _record_stats(reader, scan.positions[k2], offset)
            if kept.is_last_record:
                cleaned += 1
            else:
                res.problem(
                    "index-offset",
                    path,
                    INDEX_OFFSET_MESSAGE,
                    entry=i,
                    position=i * 8,
                    expected=f"{last} (or a later batch's last offset)",
                    found=str(offset),
                )
    if reader is not None:
        reader.close()
    if past.count:
        res.problems.append(
            Problem(
                "index-position",
                path,
                f"position outside the log's batches: {entries(past.count)} "
                f"({past.first}..{past.last_entry}) point at bytes {past.low}..{past.high}; {end_cause(scan)}",
                position=past.first * 8,
                entry=past.first,
                expected=f"0 <= position < {scan.valid_end}",
                found=str(past.first_value),
                consequences=past.count,
            )
        )
    rules = []
    if pre806:
        rules.append(f"{path}: " + PRE_806_NOTE.format(n=pre806))
    if cleaned:
        rules.append(f"{path}: " + CLEANER_NOTE.format(n=cleaned))
    res.notes.extend(rules)
    return rules


def check_time_index(
    res: "SegmentResult", seg: "Segment", scan: "LogScan", strict: bool, loaded: "TimeIndexView | InputError"
) -> list[str]:
    """Time-index entries (``loaded``, from :func:`read_indexes`) against the log (module docstring);
    returns the older-writer-rule notes added."""
    path = seg.timeindex
    view = load_index(res, loaded)
    if view is None:
        return []
    n = used_entries(res, view, path, strict)
    prev_ts = None
    running = scan.running_max
    ordered = scan.ordered  # of the whole log: the scan may hold only the batches the indexes ask about
    if ordered and not strict and _all_exact_times(view, n, scan):
        return []
    records = None  # opened when records are needed: --strict (Kafka reads them), an entry inside a batch
    record_offsets = 0
    past = PastEnd()
    try:
        for i in range(n):
            ts, offset = view.entry(i)
            if prev_ts is not None and ts <= prev_ts:
                res.problem(
                    "timeindex-order",
                    path,
                    "timestamps do not strictly increase",
                    entry=i,
                    position=i * 12,
                    expected=f"> {prev_ts}",
                    found=str(ts),
                )
            prev_ts = ts
            if ordered:
                k = bisect_right(scan.last_offsets, offset) - 1
                exact = 0 <= k < len(scan.last_offsets) and scan.last_offsets[k] == offset
            else:
                k = _find_last(scan, offset)
                exact = k >= 0
            if not exact:
                if res.last_offset is None or offset > res.last_offset:  # past the log's readable batches
                    past.add(i, offset)
                    continue
                k = _batch_holding(scan, offset, 0, ordered)
                if k < 0:
                    res.problem(
                        "timeindex-offset",
                        path,
                        "indexed offset is not an offset of any batch",
                        entry=i,
                        position=i * 12,
                        expected="an offset inside a batch (its last offset)",
                        found=str(offset),
                    )
                    continue
                if strict:  # Kafka's tool: "indexed offsets not found in the log"; no timestamp check then
                    res.problem(
                        "timeindex-offset",
                        path,
                        "indexed offset is not the last offset of its batch (Kafka's --verify-index-only rule)",
                        entry=i,
                        position=i * 12,
                        expected=str(scan.last_offsets[k]),
                        found=str(offset),
                    )
                    continue
            if running[k] != ts:
                res.problem(
                    "timeindex-timestamp",
                    path,
                    "timestamp is not the largest timestamp up to its batch",
                    entry=i,
                    position=i * 12,
                    expected=str(running[k]),
                    found=str(ts),
                )
            elif not exact:
                if records is None:
                    records = FileRecords(seg.log)
                found = _record_stats(records, scan.positions[k], offset)
                if found.timestamp_at == ts and found.first_at_max:
                    record_offsets += 1
                else:
                    res.problem(
                        "timeindex-offset",
                        path,
                        "indexed offset is neither the last offset of its batch "
                        "nor the first record holding the entry's timestamp (the rule before Kafka 3.7)",
                        entry=i,
                        position=i * 12,
                        expected=str(scan.last_offsets[k]),
                        found=str(offset),
                    )
            if strict:
                if records is None:
                    records = FileRecords(seg.log)
                record_max = _record_max_timestamp(records, scan.positions[k])
                if record_max != ts:
                    res.problem(
                        "timeindex-mismatch",
                        path,
                        "timestamp is not the max record timestamp of the "
                        "batch ending at the indexed offset (Kafka's --verify-index-only rule)",
                        entry=i,
                        position=i * 12,
                        expected=str(record_max),
                        found=str(ts),
                    )
    finally:
        if records is not None:
            records.close()
    if past.count:
        above = "" if res.last_offset is None else f", above the last readable offset {res.last_offset}"
        res.problems.append(
            Problem(
                "timeindex-offset",
                path,
                f"indexed offset is not an offset of any batch: {entries(past.count)} "
                f"({past.first}..{past.last_entry}) name offsets {past.low}..{past.high}{above}; {end_cause(scan)}",
                position=past.first * 12,
                entry=past.first,
                expected=f"an offset <= {res.last_offset}" if res.last_offset is not None else "an offset of a batch",
                found=str(past.first_value),
                consequences=past.count,
            )
        )
    rules = [f"{path}: " + PRE_37_NOTE.format(n=record_offsets)] if record_offsets else []
    res.notes.extend(rules)
    return rules


def _record_max_timestamp(records: FileRecords, position: int) -> int:
    """The largest record timestamp of the batch at ``position``, as Kafka's dumpTimeIndex computes it."""
    batch = records.batch_at(position)
    best = -1
    try:
        for rec in batch.records(RECORD_LIMIT):
            best = max(best, rec.timestamp)
    except KsegError:
        pass  # the batch's own problems are reported by the log scan (the records before it still count)
    return best


class RecordStats(NamedTuple):
    """What the records of one batch say about an offset inside it."""

    is_last_record: bool  # the offset is that of the batch's last record
    timestamp_at: int | None  # the timestamp of the record at the offset, None if no such record
    first_at_max: bool  # no earlier record of the batch has a timestamp >= that one


def _record_stats(records: FileRecords, position: int, offset: int) -> RecordStats:
    """Read the batch at ``position`` up to ``offset`` and one record past it."""
    batch = records.batch_at(position)
    ts_at, best, after = None, -1, False
    try:
        for rec in batch.records(RECORD_LIMIT):
            if rec.offset > offset:
                after = True
                break
            if rec.offset == offset:
                ts_at = rec.timestamp
            elif ts_at is None:
                best = max(best, rec.timestamp)
    except KsegError:
        pass  # the batch's own problems are reported by the log scan
    return RecordStats(ts_at is not None and not after, ts_at, ts_at is not None and best < ts_at)


def _find_last(scan: "LogScan", offset: int) -> int:
    for k, last in enumerate(scan.last_offsets):
        if last == offset:
            return k
    return -1
