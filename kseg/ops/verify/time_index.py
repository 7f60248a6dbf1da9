"""The ``.timeindex`` rules of ``verify-index`` (``TimeIndex``; the two levels and the older writers' rules
are in :mod:`kseg.ops.verify.index`'s docstring).

By the lookup rule an entry (``T``, ``O``) needs ``O`` inside a batch of the segment, ``T`` the largest
timestamp up to and including that batch, and timestamps strictly increasing (``TimeIndex.lookup``, then
``LogSegment.findOffsetByTimestamp``); Kafka's ``--verify-index-only`` (``DumpLogSegments.dumpTimeIndex``)
wants ``O`` to be the last offset of a batch whose largest *record* timestamp is ``T``.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

from kseg import engine
from kseg.errors import InputError
from kseg.format.indexes import TIME_ENTRY, TimeIndexView
from kseg.limits import INT64_MAX, INT64_MIN
from kseg.ops.verify.index import BULK, EntryCheck, Records, check_entries, increasing
from kseg.ops.verify.result import LogScan, Problem, SegmentResult, end_cause, entries

if TYPE_CHECKING:  # pragma: no cover
    from kseg.storage.partition import Segment

SIZE = TIME_ENTRY.size  # bytes an entry: entry n is at byte n * SIZE
PRE_37_NOTE = (
    "{n} entries name the offset of the record holding the largest timestamp, not its batch's last "
    "offset: a time index written by a broker before Kafka 3.7 (LogValidator.assignOffsetsNonCompressed, "
    "uncompressed CreateTime appends, Kafka 0.11-3.6; changed in 3.7 by apache/kafka#14697, kept by "
    "KAFKA-16310); lookups work. Kafka's "
    "--verify-index-only and kseg --strict report them"
)


# check_offset_index and check_time_index share their shape on purpose: each kind's entry rules
# in its own EntryCheck (kseg.ops.verify.index.check_entries runs them).
def check_time_index(
    res: SegmentResult, seg: "Segment", scan: LogScan, strict: bool, loaded: TimeIndexView | InputError | None
) -> list[str]:
    """Time-index entries (``loaded``, from :func:`kseg.ops.verify.index.read_indexes`) against the log
    (module docstring); returns the older-writer-rule notes added."""
    return check_entries(res, seg, scan, strict, loaded, _Entries)


class _Entries(EntryCheck):
    """The entry-by-entry check of one ``.timeindex`` (a file :func:`_all_exact_times` did not pass)."""

    entry_size = SIZE

    @staticmethod
    def all_right(view: TimeIndexView, n: int, scan: LogScan, strict: bool) -> bool:
        return scan.ordered and not strict and _all_exact_times(view, n, scan)

    def __init__(self, res: SegmentResult, path: str, scan: LogScan, strict: bool, records: Records) -> None:
        super().__init__(res, path, scan, strict, records)
        self.record_offsets = 0  # entries naming the record holding the largest timestamp (before Kafka 3.7)
        self.prev_ts: int | None = None
        self.by_last: array | None = None  # batch numbers in last-offset order (a log out of order), when asked

    def entry(self, i: int, ts: int, offset: int) -> None:
        """Entry ``i``: timestamps increase; ``offset`` is inside a batch (its last offset, or the rule before
        3.7) and ``ts`` the largest timestamp up to that batch."""
        if self.prev_ts is not None and ts <= self.prev_ts:
            self.problem("timeindex-order", "timestamps do not strictly increase", i, f"> {self.prev_ts}", ts)
        self.prev_ts = ts
        self.at(i, ts, offset)

    def at(self, i: int, ts: int, offset: int) -> None:
        """The batch entry ``i`` names, and its timestamp."""
        scan = self.scan
        if self.ordered:
            k = bisect_right(scan.last_offsets, offset) - 1
            exact = 0 <= k < len(scan.last_offsets) and scan.last_offsets[k] == offset
        else:
            k = self.first_ending(offset)
            exact = k >= 0
        if not exact:
            k = self.holding(i, offset)
            if k < 0:
                return
        if scan.running_max[k] != ts:
            self.problem(
                "timeindex-timestamp",
                "timestamp is not the largest timestamp up to its batch",
                i,
                str(scan.running_max[k]),
                ts,
            )
        elif not exact:
            self.record_at_max(i, ts, offset, k)
        if self.strict:
            record_max = self.records.max_timestamp(scan.positions[k])
            if record_max != ts:
                self.problem(
                    "timeindex-mismatch",
                    "timestamp is not the max record timestamp of the "
                    "batch ending at the indexed offset (Kafka's --verify-index-only rule)",
                    i,
                    str(record_max),
                    ts,
                )

    def query(self, ts: int, offset: int) -> tuple[int, int] | None:
        return offset, 0  # (holding, an entry not naming a batch's last offset)

    def first_ending(self, offset: int) -> int:
        """The first batch whose last offset is ``offset`` (a log whose last offsets do not increase), or -1:
        a binary search of the batch numbers sorted (stably) by last offset, sorted once per file."""
        last = self.scan.last_offsets
        if self.by_last is None:
            self.by_last = array("q", sorted(range(len(last)), key=last.__getitem__))
        order = self.by_last
        p = bisect_left(order, offset, key=last.__getitem__)
        return order[p] if p < len(order) and last[order[p]] == offset else -1

    def holding(self, i: int, offset: int) -> int:
        """The batch holding ``offset``, which is not a batch's last offset; -1 when the entry is past the
        log's readable end, in no batch, or (``--strict``) not a last offset: each said here."""
        res, scan = self.res, self.scan
        if res.last_offset is None or offset > res.last_offset:  # past the log's readable batches
            self.past.add(i, offset)
            return -1
        k = self.held_by(i, offset, 0)
        if k < 0:
            self.problem(
                "timeindex-offset",
                "indexed offset is not an offset of any batch",
                i,
                "an offset inside a batch (its last offset)",
                offset,
            )
        elif self.strict:  # Kafka's tool: "indexed offsets not found in the log"; no timestamp check then
            self.problem(
                "timeindex-offset",
                "indexed offset is not the last offset of its batch (Kafka's --verify-index-only rule)",
                i,
                str(scan.last_offsets[k]),
                offset,
            )
            return -1
        return k

    def record_at_max(self, i: int, ts: int, offset: int, k: int) -> None:
        """An entry inside batch ``k``: right when it names the first record holding ``ts`` (the rule before
        Kafka 3.7)."""
        found = self.records.stats(self.scan.positions[k], offset)
        if found.timestamp_at == ts and found.first_at_max:
            self.record_offsets += 1
        else:
            self.problem(
                "timeindex-offset",
                "indexed offset is neither the last offset of its batch "
                "nor the first record holding the entry's timestamp (the rule before Kafka 3.7)",
                i,
                str(self.scan.last_offsets[k]),
                offset,
            )

    def finish(self) -> list[str]:
        """The row of the entries past the log's readable end, and the older-writer-rule note (returned)."""
        past, res = self.past, self.res
        if past.count:
            above = "" if res.last_offset is None else f", above the last readable offset {res.last_offset}"
            res.problems.append(
                Problem(
                    "timeindex-offset",
                    self.path,
                    f"indexed offset is not an offset of any batch: {entries(past.count)} "
                    f"({past.first}..{past.last_entry}) name offsets {past.low}..{past.high}{above}; "
                    f"{end_cause(self.scan)}",
                    position=past.first * SIZE,
                    entry=past.first,
                    expected=f"an offset <= {res.last_offset}"
                    if res.last_offset is not None
                    else "an offset of a batch",
                    found=str(past.first_value),
                    consequences=past.count,
                )
            )
        rules = [f"{self.path}: " + PRE_37_NOTE.format(n=self.record_offsets)] if self.record_offsets else []
        res.notes.extend(rules)
        return rules


def _all_exact_times(view: TimeIndexView, n: int, scan: LogScan) -> bool:
    """Whether every time-index entry names a batch's last offset with the largest timestamp up to
    that batch, timestamps and offsets strictly increasing (batches in offset order): the entry loop
    of :func:`check_time_index` would find nothing without ``--strict``.  Checked like
    :func:`kseg.ops.verify.offset_index._all_batch_ends`."""
    match = None if engine.C is None else engine.C.entries_match
    prev_ts = prev_offset = INT64_MIN
    for first in range(0, n, BULK):
        stop = min(n, first + BULK)
        if match is not None:
            data = view.read(first * TIME_ENTRY.size, stop * TIME_ENTRY.size)
            last, running = scan.last_offsets, scan.running_max
            matched = match(data, 1, view.base_offset, prev_offset, prev_ts, INT64_MIN, INT64_MAX, last, running, None)
            if matched is not None and len(data):
                if not matched:
                    return False
                prev_ts, rel = TIME_ENTRY.unpack_from(data, len(data) - TIME_ENTRY.size)
                prev_offset = view.base_offset + rel
                continue
        timestamps, offsets = view.columns(first, stop)
        if not _exact_times(timestamps, offsets, prev_ts, prev_offset, scan):
            return False
        prev_ts, prev_offset = timestamps[-1], offsets[-1]
    return True


def _exact_times(timestamps: list[int], offsets: list[int], prev_ts: int, prev_offset: int, scan: LogScan) -> bool:
    """:func:`_all_exact_times` of one run of entries, by the Python rule (the engine's reference)."""
    if not (prev_ts < timestamps[0] and prev_offset < offsets[0] and increasing(timestamps) and increasing(offsets)):
        return False
    last = scan.last_offsets
    k0, k1 = bisect_left(last, offsets[0]), bisect_right(last, offsets[-1])
    batch_ending = dict(zip(last[k0:k1], range(k0, k1), strict=True))  # last offset -> batch number
    try:
        ks = list(map(batch_ending.__getitem__, offsets))
    except KeyError:  # an offset that is not a batch's last
        return False
    return list(map(scan.running_max.__getitem__, ks)) == timestamps
