"""The batches the index checks need from a log whose offsets go back, kept in one pass with memory that
follows the index entries, not the batches.

Where a log's last offsets strictly increase and its index keys ascend, the log pass keeps the batches the
keys reach as it walks them (:mod:`kseg.ops.verify.keys`).  Where they do not, the index checks
(:mod:`kseg.ops.verify.offset_index`, :mod:`kseg.ops.verify.time_index`) search the batches in file order,
and each answer is the *first* batch of some kind, so the batches they can answer with are, for the entries
read here:

* the batch starting at an ``.index`` entry's position;
* for an ``.index`` entry (``X``, ``P``): the first batch at or after ``P`` holding ``X``;
* for a ``.timeindex`` entry's offset ``O``: the first batch ending at ``O`` and the first batch holding it;
* for any entry's offset ``O``: the first batch whose last offset passes the largest before it and reaches
  ``O`` (on a log in order, the first batch whose last offset is >= ``O``: the checks' binary searches).

Any search in file order among a subset of the batches that holds its answer finds that answer (an earlier
batch of the subset that matched would be an earlier batch of the log), so the checks run unchanged on the
batches kept here; batches kept for another question only cost memory.  :meth:`Sieve.sift` takes the
batches in file order a few thousand at a time (the log pass records every batch, then the sieve drops
those that answer nothing): one C-level filter drops the batches whose offsets and position no entry names,
and the few left are judged by the rules above, each question answered once (a tree of flags over the
entries' distinct offsets: :class:`Marks`).

Memory: the entries as int64 arrays, sorted and without repeats (about 40 bytes an ``.index`` entry and
20 a ``.timeindex`` entry, a list of them while sorting an index whose keys do not ascend), and at most a
few kept batches an entry (32 bytes each).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from heapq import merge
from itertools import accumulate, chain, compress, groupby, islice, repeat
from operator import eq, le, ne, or_
from typing import Iterable, Iterator

from kseg.errors import InputError
from kseg.format.indexes import TimeIndexView
from kseg.limits import INT64_MAX, INT64_MIN
from kseg.ops.verify.result import IndexFiles, LogScan

#: Entries read from an index at a time.
BLOCK = 8192


class Marks:
    """Flags over ``n`` slots, in a tree of bytes (a node is set when a slot under it is): :meth:`take`
    clears every set slot of a range in O(log n) a slot."""

    __slots__ = ("size", "tree")

    def __init__(self, n: int, on: bool) -> None:
        size = 1
        while size < n:
            size *= 2
        tree = bytearray(2 * size)
        if on and n:
            tree[size : size + n] = b"\x01" * n
            width = size
            while width > 1:  # each level from the one below, in C
                level = tree[width : 2 * width]
                tree[width // 2 : width] = bytes(map(or_, level[0::2], level[1::2]))
                width //= 2
        self.size, self.tree = size, tree

    def set(self, slot: int) -> None:
        tree = self.tree
        i = self.size + slot
        while i and not tree[i]:
            tree[i] = 1
            i >>= 1

    def take(self, lo: int, hi: int) -> bool:
        """Clear the set slots of ``lo .. hi - 1``; whether there was one."""
        tree, size = self.tree, self.size
        if hi - lo == 1:  # one slot (a batch of one offset)
            i = lo + size
            if not tree[i]:
                return False
            tree[i] = 0
            i >>= 1
            while i and not (tree[2 * i] or tree[2 * i + 1]):
                tree[i] = 0
                i >>= 1
            return True
        left, right = lo + size, hi + size
        found = False
        while left < right:  # the nodes covering the range, bottom up
            if left & 1:
                found = self._clear(left) or found
                left += 1
            if right & 1:
                right -= 1
                found = self._clear(right) or found
            left >>= 1
            right >>= 1
        return found

    def _clear(self, node: int) -> bool:
        """Clear the set slots under ``node``, then its ancestors' flags; whether there was one."""
        tree, size = self.tree, self.size
        if not tree[node]:
            return False
        stack = [node]
        while stack:
            i = stack.pop()
            tree[i] = 0
            if i < size:
                stack.extend(c for c in (2 * i, 2 * i + 1) if tree[c])
        i = node >> 1
        while i and tree[i] and not (tree[2 * i] or tree[2 * i + 1]):
            tree[i] = 0
            i >>= 1
        return True


def _ascending(keys: array) -> bool:
    return all(map(le, keys, islice(keys, 1, None)))


def _distinct(keys: array) -> array:
    """``keys`` sorted, without repeats (sorted through a list only when they do not ascend already)."""
    if not _ascending(keys):
        keys = array("q", sorted(keys))
    return array("q", (k for k, _ in groupby(keys)))


def _int64s(values: Iterable[int]) -> array:
    """``values`` as an int64 array, dropping those past int64 (no batch holds such an offset) and raising
    those below it to its lowest value (each is passed by the first batch either way)."""
    out = array("q")
    try:
        out.extend(values)
    except OverflowError:
        out = array("q", (max(v, INT64_MIN) for v in values if v <= INT64_MAX))
    return out


class Sieve:
    """The questions a segment's index entries ask of its log (module docstring), and the batches that
    answer them so far: :meth:`sift` after the log pass recorded more batches."""

    __slots__ = (
        "positions",
        "xs",
        "times",
        "offsets",
        "query_at",
        "query_x",
        "queried",
        "active",
        "unheld",
        "ended",
        "max_last",
        "kept",
    )

    def __init__(self, positions: array, query_at: array, query_x: array, times: array) -> None:
        """The ``.index`` entries' positions (file order); their questions (``X``, ``P``) as two columns
        (``P`` in ``query_at``, ``X`` in ``query_x``; none whose offset is past int64: no batch holds it); the
        ``.timeindex`` entries' offsets."""
        if not _ascending(query_at):  # an .index whose positions do not ascend: its questions in position order
            order = sorted(range(len(query_at)), key=query_at.__getitem__)
            query_at, query_x = (
                array("q", map(query_at.__getitem__, order)),
                array("q", map(query_x.__getitem__, order)),
            )
            del order
        self.query_at, self.query_x = query_at, query_x
        self.xs = _distinct(query_x)  # the .index offsets (the first batch from a position holding one)
        self.times = _distinct(times)  # the .timeindex offsets
        # every offset named, and the .index positions (a batch starting at one), each ending with a key no
        # batch's last offset passes and no position reaches
        self.offsets = array("q", (k for k, _ in groupby(merge(self.xs, self.times))))
        self.offsets.append(INT64_MAX)
        self.positions = _distinct(positions)
        self.positions.append(INT64_MAX)
        self.queried = 0  # the .index questions taken so far (those at positions the log has reached)
        self.active = Marks(len(self.xs), on=False)  # offsets of .index questions taken and not answered
        self.unheld = Marks(len(self.times), on=True)  # .timeindex offsets no batch has held yet
        self.ended = bytearray(len(self.times))  # .timeindex offsets a batch has ended at
        self.max_last = INT64_MIN - 1  # the largest last offset of the batches sifted
        self.kept = 0  # rows of the scan already sifted

    @classmethod
    def read(cls, indexes: IndexFiles) -> Sieve:
        """The questions of the entries of ``indexes`` (before a zero tail; an index that could not be read
        asks none: its check reports it), read ``BLOCK`` entries at a time into int64 arrays."""
        positions, query_at, query_x, times = array("q"), array("q"), array("q"), array("q")
        for view in indexes:
            if view is None or isinstance(view, InputError):
                continue
            stop = view.entries - view.zero_tail()
            for first in range(0, stop, BLOCK):
                keys, values = view.columns(first, min(stop, first + BLOCK))
                if isinstance(view, TimeIndexView):
                    times.extend(_int64s(values))
                    continue
                positions.extend(values)
                if keys and max(keys) > INT64_MAX:
                    values = [p for p, x in zip(values, keys, strict=True) if x <= INT64_MAX]
                query_at.extend(values)
                query_x.extend(_int64s(keys))
        return cls(positions, query_at, query_x, times)

    def sift(self, scan: LogScan) -> None:
        """Drop the batches recorded in ``scan`` since the last call that answer no question."""
        start = self.kept
        positions, bases, lasts = scan.positions[start:], scan.base_offsets[start:], scan.last_offsets[start:]
        if not positions:
            return
        before = list(accumulate(chain((self.max_last,), lasts), max))  # the largest last offset before each
        self.max_last = before.pop()
        answers = self._answers
        keep = [
            i
            for i in self._asked(positions, bases, lasts, before)
            if answers(positions[i], bases[i], lasts[i], before[i])
        ]
        for column in (scan.positions, scan.base_offsets, scan.last_offsets, scan.running_max):
            tail = column[start:]
            del column[start:]
            column.extend(map(tail.__getitem__, keep))
        self.kept = len(scan.positions)

    def _asked(self, positions: array, bases: array, lasts: array, before: list[int]) -> Iterator[int]:
        """The rows that may answer a question (a superset, found in C loops): a batch none of whose offsets
        an entry names, nor its position, answers none.  The entries' keys inside the rows' span are taken
        as a set when they are few (the rows of a log in order, or going back now and then), else every
        row's offsets are searched for in the whole sorted keys."""
        rows = len(positions)
        low = list(map(min, bases, map((1).__add__, before), lasts))  # the offsets a row may answer: low .. last
        offsets, at = self.offsets, self.positions
        lo, hi = bisect_left(offsets, min(low)), bisect_right(offsets, max(lasts))
        if hi - lo <= 2 * rows:  # a row of one offset: whether an entry names it; one of more: judged
            named = set(offsets[lo:hi])
            offered = map(or_, map(named.__contains__, lasts), map(ne, low, lasts))
        else:
            offered = map(le, map(offsets.__getitem__, map(bisect_left, repeat(offsets), low)), lasts)
        lo, hi = bisect_left(at, positions[0]), bisect_right(at, positions[-1])
        if hi - lo <= 2 * rows:
            starts = set(at[lo:hi])
            starting = map(starts.__contains__, positions)
        else:
            starting = map(eq, map(at.__getitem__, map(bisect_left, repeat(at), positions)), positions)
        return compress(range(rows), map(or_, offered, starting))

    def _answers(self, pos: int, base: int, last: int, before: int) -> bool:
        """Whether the batch at ``pos`` (offsets ``base .. last``, the largest last offset before it
        ``before``) answers a question not answered yet (module docstring)."""
        self._take_questions(pos)
        at, offsets = self.positions, self.offsets
        answers = at[bisect_left(at, pos)] == pos
        k = bisect_right(offsets, before)
        if last > before and k < len(offsets) - 1 and offsets[k] <= last:  # (the last key: no entry's)
            answers = True  # the first batch reaching the offsets above every earlier last offset
        times, xs = self.times, self.xs
        k = bisect_left(times, last)
        if k < len(times) and times[k] == last:  # (a batch's last offset may be below its base: it still ends there)
            if not self.ended[k]:
                self.ended[k] = 1
                answers = True
            lo, hi = (k, k + 1) if base == last else (bisect_left(times, base), k + 1)
        else:
            lo, hi = (k, k) if base == last else (bisect_left(times, base), k)
        if lo < hi and self.unheld.take(lo, hi):
            answers = True
        hi = bisect_right(xs, last)
        lo = hi - 1 if base == last else bisect_left(xs, base)
        if 0 <= lo < hi and xs[lo] >= base and self.active.take(lo, hi):
            answers = True
        return answers

    def _take_questions(self, pos: int) -> None:
        """Mark the offsets of the ``.index`` questions from positions up to ``pos`` as asked."""
        q, at, xs, n = self.queried, self.query_at, self.query_x, len(self.query_at)
        while q < n and at[q] <= pos:
            self.active.set(bisect_left(self.xs, xs[q]))
            q += 1
        self.queried = q
