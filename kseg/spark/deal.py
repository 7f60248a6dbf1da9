"""Segment units dealt to tasks as shares of the compact listing, in the listing's order.

``export --spark`` and the ``kseg`` data source plan *segment units* (a
segment, or one ``splitBytes`` band of a large one:
:func:`kseg.ops.export.export.unit_places`) from the driver's compact
listing (:mod:`kseg.storage.listing`) and give each task consecutive units.
A task's share is a :class:`Deal`: the partitions its units are in (the
first and last cut to its segments when another task shares them) and which
of their units are its own -- never a unit object or a path per unit on the
driver; the task makes its units (:meth:`Deal.units`).
:func:`deal_in_order` is the one dealing; what differs is the rule saying
where a task starts: export's (:func:`deal`: about equal bytes in a number of
tasks sized from the data) or the data source's (:func:`packing`: tasks of at
most ``splitBytes`` and 256 units).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache
from itertools import islice
from typing import NamedTuple

from kseg.ops.export.export import SegmentUnit, unit_bytes, unit_places, units
from kseg.storage.listing import COPIES, SLOTS, Listed

_TXN_INDEX = 1 << [slot for slot, _ in SLOTS].index("txnindex")
_WITH_TXN_INDEX = tuple(bytes([bits]) for bits in range(2 * COPIES) if bits & _TXN_INDEX)  # a segment's flags byte


class Deal(NamedTuple):
    """One task's share: ``take`` consecutive units of the listing (``bytes`` their planned size), found
    again by the task as :func:`kseg.ops.export.export.units` of ``parts`` -- the partitions they are in,
    the first and last cut (:meth:`~kseg.storage.listing.Listed.cut`) to the segments of this task when
    it shares them with another -- after the first ``skip`` (bands of the first segment that the task
    before reads)."""

    parts: list[Listed]
    skip: int
    take: int
    bytes: int

    def units(self, ranges, split_bytes: int, since=None) -> Iterator[SegmentUnit]:
        """The task's units, made from its share (``ranges`` and ``split_bytes`` those it was dealt with;
        ``since``: ``export --since``'s starts, which do not change the units' count)."""
        return islice(units(self.parts, ranges, split_bytes, since), self.skip, self.skip + self.take)


def deal(listing: list[Listed], ranges, split_bytes: int, tasks: Callable[[int, int], int]) -> list[Deal]:
    """Export's rule: the units of ``listing`` (:func:`~kseg.ops.export.export.unit_places`: the pruning of
    ``ranges``, a big segment's bands) dealt in order to at most ``tasks(total bytes, units)`` tasks of
    about equal bytes: a unit goes to the task its first byte falls in, so small partitions share a task and
    a big segment's bands are spread.  Two passes over the listing, a partition's ``Segment`` objects at a
    time."""
    total = count = 0
    for part in listing:
        for _, _, bands, size in unit_places(part.segments, ranges, split_bytes):
            total, count = total + unit_bytes(size, bands), count + 1
    if not count:
        return []
    n, before, current = tasks(total, count), 0, -1

    def starts(share: int) -> bool:
        nonlocal before, current
        number = before * n // total
        before += share
        new, current = number != current, number
        return new

    return deal_in_order(listing, ranges, split_bytes, starts)


def packing(target: int, most: int) -> Callable[[int], bool]:
    """The data source's rule, for :func:`deal_in_order`: consecutive units packed into tasks of at most
    ``target`` bytes (by listed size) and ``most`` units, across partitions (a thousand small partitions
    are a few tasks; a large segment's bands are a task each).  The function says, for each unit's bytes
    in turn, whether it starts a task."""
    size = count = 0

    def starts(share: int) -> bool:
        nonlocal size, count
        if count and size + share <= target and count < most:
            size, count = size + share, count + 1
            return False
        size, count = share, 1
        return True

    return starts


def deal_in_order(listing: list[Listed], ranges, split_bytes: int, starts: Callable[[int], bool]) -> list[Deal]:
    """The units of ``listing`` (:func:`~kseg.ops.export.export.unit_places`) dealt in order to tasks, a new
    task where ``starts(unit bytes)`` says (asked once a unit, in order; the first unit starts one whatever
    it says).  What this holds besides the listing is a reference a partition and a :class:`Deal` a task
    (two cut partitions at most); one pass, a partition's ``Segment`` objects at a time."""
    deals: list[Deal] = []
    task: _Open | None = None
    for p, part in enumerate(listing):
        for k, band, bands, size in unit_places(part.segments, ranges, split_bytes):
            share = unit_bytes(size, bands)
            if starts(share) or task is None:
                if task is not None:
                    deals.append(task.closed(listing))
                task = _Open((p, k, band))
            if not task.parts or task.last[0] != p:
                task.parts.append(part)
            task.last, task.take, task.bytes = (p, k), task.take + 1, task.bytes + share
    if task is not None:
        deals.append(task.closed(listing))
    return deals


class _Open:
    """The task :func:`deal_in_order` is filling: the partitions of its units so far, where its first unit
    is (partition, segment, band) and its last (partition, segment), how many, their bytes."""

    def __init__(self, first: tuple[int, int, int]) -> None:
        self.first, self.last = first, first[:2]
        self.parts: list[Listed] = []
        self.take = self.bytes = 0

    def closed(self, listing: list[Listed]) -> Deal:
        """Its :class:`Deal`: the first partition cut to start at the first unit's segment, the last to end
        after the last unit's (the units of a cut are those of the whole: :func:`unit_places`)."""
        (p0, k0, band), (p1, k1) = self.first, self.last
        parts = self.parts
        hi = _through_txn_indexes(listing[p1], k1 + 1) if p0 == p1 else len(listing[p0])
        if (k0, hi) != (0, len(listing[p0])):
            parts[0] = listing[p0].cut(k0, hi)
        if p1 != p0:
            end = _through_txn_indexes(listing[p1], k1 + 1)
            if end != len(listing[p1]):
                parts[-1] = listing[p1].cut(0, end)
        return Deal(parts, band, self.take, self.bytes)


def _through_txn_indexes(part: Listed, hi: int) -> int:
    """Where a task's cut of ``part`` ends: after segment ``hi`` - 1, or after the last later segment with a
    ``.txnindex`` (an ABORT's entry is in the segment of its marker, which may follow the transaction's
    records: :mod:`kseg.storage.aborted`); the units past ``hi`` are not the task's (:meth:`Deal.units`)."""
    last = _last_txn_index(part)
    return last + 1 if last >= hi else hi


@lru_cache(maxsize=4)  # tasks are closed in the listing's order: a partition's answer is asked again in a row
def _last_txn_index(part: Listed) -> int:
    """The last segment of ``part`` with a ``.txnindex``, else -1 (a search in C, not a loop a segment)."""
    return max(part.flags.rfind(bits) for bits in _WITH_TXN_INDEX)
