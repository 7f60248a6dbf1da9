"""The ``.index`` rules of ``verify-index`` (``OffsetIndex``; the two levels and the older writers' rules
are in :mod:`kseg.ops.verify.index`'s docstring).

By the lookup rule an entry (``X``, ``P``) needs a batch starting at ``P`` whose base offset is <= ``X``,
with ``X`` an offset inside a batch at or after ``P`` (``OffsetIndex.lookup``, then
``FileRecords.searchForOffsetWithSize``); Kafka's ``--verify-index-only`` (``DumpLogSegments.dumpIndex``)
wants ``X`` to be the last offset of the batch at ``P``.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from operator import le
from typing import TYPE_CHECKING

from kseg import engine
from kseg.errors import InputError
from kseg.format.indexes import OFFSET_ENTRY, OffsetIndexView
from kseg.limits import INT64_MIN
from kseg.ops.verify.index import BULK, EntryCheck, Records, check_entries, increasing
from kseg.ops.verify.result import LogScan, Problem, SegmentResult, end_cause, entries

if TYPE_CHECKING:  # pragma: no cover
    from kseg.storage.partition import Segment

SIZE = OFFSET_ENTRY.size  # bytes an entry: entry n is at byte n * SIZE
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


# check_offset_index and check_time_index share their shape on purpose: each kind's entry rules
# in its own EntryCheck (kseg.ops.verify.index.check_entries runs them).
def check_offset_index(
    res: SegmentResult, seg: "Segment", scan: LogScan, strict: bool, loaded: OffsetIndexView | InputError | None
) -> list[str]:
    """Offset-index entries (``loaded``, from :func:`kseg.ops.verify.index.read_indexes`) against the log
    (module docstring); returns the older-writer-rule notes added."""
    return check_entries(res, seg, scan, strict, loaded, _Entries)


class _Entries(EntryCheck):
    """The entry-by-entry check of one ``.index`` (a file :func:`_all_batch_ends` did not pass)."""

    entry_size = SIZE

    @staticmethod
    def all_right(view: OffsetIndexView, n: int, scan: LogScan, strict: bool) -> bool:
        return _all_batch_ends(view, n, scan)

    def __init__(self, res: SegmentResult, path: str, scan: LogScan, strict: bool, records: Records) -> None:
        super().__init__(res, path, scan, strict, records)
        self.pre806 = self.cleaned = 0
        self.prev_offset: int | None = None
        self.prev_pos: int | None = None

    def entry(self, i: int, offset: int, position: int) -> None:
        """Entry ``i``: offsets and positions increase; its position names the start of a batch that
        holds offsets up to ``offset``."""
        if self.prev_offset is not None and offset <= self.prev_offset:
            self.problem("index-order", "offsets do not strictly increase", i, f"> {self.prev_offset}", offset)
        if self.prev_pos is not None and position <= self.prev_pos:
            self.problem("index-order", "positions do not strictly increase", i, f"> {self.prev_pos}", position)
        self.prev_offset, self.prev_pos = offset, position
        self.at(i, offset, position)

    def at(self, i: int, offset: int, position: int) -> None:
        """The batch at entry ``i``'s position, and ``offset`` in it or after it."""
        scan = self.scan
        if position >= max(scan.valid_end, 1):  # past the readable end: one row for them all, after the loop
            self.past.add(i, position)
            return
        if position < 0:
            self.problem(
                "index-position", "position outside the log's batches", i, f"0 <= position < {scan.valid_end}", position
            )
            return
        k = self.batch_at(position)
        if k < 0:
            self.problem("index-boundary", "position is not a batch boundary", i, "the start of a batch", position)
            return
        first, last = scan.base_offsets[k], scan.last_offsets[k]
        if first > offset:
            self.problem(
                "index-offset",
                "the batch at this position starts after the indexed offset",
                i,
                f"a batch holding offsets <= {offset}",
                f"batch {first}-{last}",
            )
        elif last != offset:
            self.inside(i, offset, k, last)

    def batch_at(self, position: int) -> int:
        """The batch starting at ``position``, or -1."""
        k = bisect_left(self.scan.positions, position)
        return k if k < len(self.scan.positions) and self.scan.positions[k] == position else -1

    def query(self, offset: int, position: int) -> tuple[int, int] | None:
        k = self.batch_at(position)  # (inside, an entry not naming the last offset of the batch at its position)
        return None if k < 0 else (offset, k)

    def inside(self, i: int, offset: int, k: int, last: int) -> None:
        """Entry ``i`` names ``offset``, not the last offset ``last`` of batch ``k`` at its position: an
        offset of a later batch (a multi-batch append), the last record the log cleaner kept, or wrong."""
        k2 = self.held_by(i, offset, k)
        if k2 < 0:
            self.problem("index-offset", INDEX_OFFSET_MESSAGE, i, f"{last} (or a later batch's last offset)", offset)
        elif self.strict:
            self.problem(
                "index-mismatch",
                "indexed offset is not the last offset of the batch at its position (Kafka's --verify-index-only rule)",
                i,
                str(last),
                offset,
            )
        elif self.scan.last_offsets[k2] == offset:
            self.pre806 += 1
        elif self.records.stats(self.scan.positions[k2], offset).is_last_record:
            self.cleaned += 1
        else:
            self.problem("index-offset", INDEX_OFFSET_MESSAGE, i, f"{last} (or a later batch's last offset)", offset)

    def finish(self) -> list[str]:
        """The row of the entries past the log's readable end, and the older-writer-rule notes (returned)."""
        past, scan = self.past, self.scan
        if past.count:
            self.res.problems.append(
                Problem(
                    "index-position",
                    self.path,
                    f"position outside the log's batches: {entries(past.count)} "
                    f"({past.first}..{past.last_entry}) point at bytes {past.low}..{past.high}; {end_cause(scan)}",
                    position=past.first * SIZE,
                    entry=past.first,
                    expected=f"0 <= position < {scan.valid_end}",
                    found=str(past.first_value),
                    consequences=past.count,
                )
            )
        rules = []
        if self.pre806:
            rules.append(f"{self.path}: " + PRE_806_NOTE.format(n=self.pre806))
        if self.cleaned:
            rules.append(f"{self.path}: " + CLEANER_NOTE.format(n=self.cleaned))
        self.res.notes.extend(rules)
        return rules


def _all_batch_ends(view: OffsetIndexView, n: int, scan: LogScan) -> bool:
    """Whether every entry names the last offset of the batch starting at its position, offsets and
    positions strictly increasing: what a current broker writes, so the entry loop of
    :func:`check_offset_index` would find nothing.  Checked ``BULK`` entries at a time, by the engine's
    ``entries_match`` from the file's bytes or in C loops here (:func:`_batch_ends`); any other index goes
    entry by entry."""
    end = max(scan.valid_end, 1)
    match = None if engine.C is None else engine.C.entries_match
    prev_offset = prev_position = INT64_MIN
    for first in range(0, n, BULK):
        stop = min(n, first + BULK)
        if match is not None:
            data = view.read(first * OFFSET_ENTRY.size, stop * OFFSET_ENTRY.size)
            last, base = scan.last_offsets, scan.base_offsets
            matched = match(
                data, 0, view.base_offset, prev_position, prev_offset, 0, end - 1, scan.positions, last, base
            )
            if matched is not None and len(data):
                if not matched:
                    return False
                rel, prev_position = OFFSET_ENTRY.unpack_from(data, len(data) - OFFSET_ENTRY.size)
                prev_offset = view.base_offset + rel
                continue
        offsets, positions = view.columns(first, stop)
        if not _batch_ends(offsets, positions, prev_offset, prev_position, end, scan):
            return False
        prev_offset, prev_position = offsets[-1], positions[-1]
    return True


def _batch_ends(
    offsets: list[int], positions: list[int], prev_offset: int, prev_position: int, end: int, scan: LogScan
) -> bool:
    """:func:`_all_batch_ends` of one run of entries, by the Python rule (the engine's reference)."""
    if (
        not (
            prev_offset < offsets[0]
            and prev_position < positions[0]
            and positions[-1] < end
            and increasing(offsets)
            and increasing(positions)
        )
        or positions[0] < 0
    ):
        return False
    starts = scan.positions
    k0, k1 = bisect_left(starts, positions[0]), bisect_right(starts, positions[-1])
    batch_at = dict(zip(starts[k0:k1], range(k0, k1), strict=True))  # batch start -> batch number
    try:
        ks = list(map(batch_at.__getitem__, positions))
    except KeyError:  # a position that is not a batch start
        return False
    return list(map(scan.last_offsets.__getitem__, ks)) == offsets and all(
        map(le, map(scan.base_offsets.__getitem__, ks), offsets)
    )
