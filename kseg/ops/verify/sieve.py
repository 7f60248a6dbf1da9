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

Memory: the entries as int64 arrays (the ``.index`` questions in position order and each index's distinct
offsets: about 24 bytes an ``.index`` entry and 13 a ``.timeindex`` entry, twice that for a moment while
keys that do not ascend are sorted, in runs of :data:`RUN` merged), and at most a few kept batches a
question (32 bytes each).  Where the log is too small to hold as many batches as the indexes have entries,
or small enough that its every batch costs at most :data:`EVERY_BYTES`, recording every batch costs less:
:meth:`Sieve.read` says so (None).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from heapq import merge
from itertools import accumulate, chain, compress, groupby, islice, repeat
from operator import eq, le, ne, or_
from typing import Iterable

from kseg.errors import InputError
from kseg.format.indexes import TimeIndexView
from kseg.format.legacy import LOG_OVERHEAD, RECORD_OVERHEAD_V0
from kseg.limits import INT64_MAX, INT64_MIN
from kseg.ops.verify.result import IndexFiles, LogScan

#: Entries read from an index at a time.
BLOCK = 8192
#: Keys sorted at a time (then merged) where an index's keys do not ascend.
RUN = 65536
#: What the sieve holds an entry and what recording every batch holds a batch, at most (bytes), and the
#: fewest bytes a batch can take (a legacy entry of no key and no value): which costs less for a log.
ENTRY_BYTES, BATCH_BYTES, SMALLEST_BATCH = 48, 32, LOG_OVERHEAD + RECORD_OVERHEAD_V0
#: Every batch is recorded where that costs at most this much (bytes) however many entries there are: a small
#: log, checked faster so (the sieve judges a row in Python where an entry names it).
EVERY_BYTES = 8 << 20


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


def _runs(keys: array) -> list[array]:
    """``keys`` in sorted runs of :data:`RUN` (a list of Python ints only that long), taken from its end
    (``keys`` is emptied as they are made)."""
    runs = []
    while keys:
        runs.append(array("q", sorted(keys[-RUN:])))
        del keys[-RUN:]
    runs.reverse()
    return runs


def _sorted(keys: array) -> array:
    """``keys`` in ascending order, through :func:`_runs` merged (``keys`` is emptied where they do not)."""
    if _ascending(keys):
        return keys
    runs = _runs(keys)
    return runs[0] if len(runs) == 1 else array("q", merge(*runs))


def _distinct(keys: array) -> array:
    """``keys`` sorted, without repeats (``keys`` is emptied)."""
    ordered: Iterable[int] = keys if _ascending(keys) else merge(*_runs(keys))
    out = array("q", (k for k, _ in groupby(ordered)))
    del keys[:]
    return out


def _by_position(query_at: array, query_x: array) -> tuple[array, array]:
    """The ``.index`` questions in ascending position (positions are int32: each packed above its question's
    number into one int64 key, sorted by :func:`_sorted`; ``query_at`` is emptied)."""
    if _ascending(query_at):
        return query_at, query_x
    keys = array("q", (p << 32 | q for q, p in enumerate(query_at)))  # p * 2**32 + q
    del query_at[:]
    keys = _sorted(keys)
    query_x = array("q", (query_x[key & 0xFFFFFFFF] for key in keys))
    for i, key in enumerate(keys):
        keys[i] = key >> 32
    return keys, query_x


def _int64s(values: list[int]) -> array:
    """``values`` as an int64 array, each past int64 brought to its nearest end (no batch holds an offset past
    it: a question about the end only keeps a batch more)."""
    out = array("q")
    try:
        out.extend(values)
    except OverflowError:
        out = array("q", (min(max(v, INT64_MIN), INT64_MAX) for v in values))
    return out


class Sieve:
    """The questions a segment's index entries ask of its log (module docstring), and the batches that
    answer them so far: :meth:`sift` after the log pass recorded more batches."""

    __slots__ = (
        "xs",
        "times",
        "query_at",
        "query_x",
        "queried",
        "active",
        "unheld",
        "ended",
        "max_last",
        "kept",
    )

    def __init__(self, query_at: array, query_x: array, times: array) -> None:
        """The ``.index`` entries' questions (``X``, ``P``) as two columns in file order (``P`` in ``query_at``,
        ``X`` in ``query_x``), and the ``.timeindex`` entries' offsets."""
        query_at, query_x = _by_position(query_at, query_x)
        self.xs = _distinct(array("q", query_x))  # the .index offsets (the first batch from a position holding one)
        self.times = _distinct(times)  # the .timeindex offsets
        # each ending with a key no position reaches, no batch's last offset passes
        query_at.append(INT64_MAX)
        query_x.append(INT64_MAX)
        self.query_at, self.query_x = query_at, query_x  # (query_at: the positions a batch may start at)
        self.xs.append(INT64_MAX)
        self.times.append(INT64_MAX)
        self.queried = 0  # the .index questions taken so far (those at positions the log has reached)
        self.active = Marks(len(self.xs) - 1, on=False)  # offsets of .index questions taken and not answered
        self.unheld = Marks(len(self.times) - 1, on=True)  # .timeindex offsets no batch has held yet
        self.ended = bytearray(len(self.times) - 1)  # .timeindex offsets a batch has ended at
        self.max_last = INT64_MIN - 1  # the largest last offset of the batches sifted
        self.kept = 0  # rows of the scan already sifted

    @classmethod
    def read(cls, indexes: IndexFiles, log_size: int) -> Sieve | None:
        """The questions of the entries of ``indexes`` (before a zero tail; an index that could not be read
        asks none: its check reports it), read ``BLOCK`` entries at a time into int64 arrays; or None when
        recording every batch of a log of ``log_size`` bytes costs less (large indexes) or little (a log of at
        most a few MiB)."""
        views = [view for view in indexes if view is not None and not isinstance(view, InputError)]
        every = log_size // SMALLEST_BATCH * BATCH_BYTES  # what recording every batch may cost
        if every <= EVERY_BYTES or sum(view.entries for view in views) * ENTRY_BYTES >= every:
            return None
        query_at, query_x, times = array("q"), array("q"), array("q")
        for view in views:
            stop = view.entries - view.zero_tail()
            for first in range(0, stop, BLOCK):
                keys, values = view.columns(first, min(stop, first + BLOCK))
                if isinstance(view, TimeIndexView):
                    times.extend(_int64s(values))
                else:
                    query_at.extend(values)
                    query_x.extend(_int64s(keys))
        return cls(query_at, query_x, times)

    def sift(self, scan: LogScan) -> None:
        """Drop the batches recorded in ``scan`` since the last call that answer no question."""
        start = self.kept
        positions, bases, lasts = scan.positions[start:], scan.base_offsets[start:], scan.last_offsets[start:]
        if not positions:
            return
        before = list(accumulate(chain((self.max_last,), lasts), max))  # the largest last offset before each
        self.max_last = before.pop()
        answers = self._answers
        offered, starting = self._asked(positions, bases, lasts, before)
        keep = [
            i
            for i in compress(range(len(positions)), map(or_, offered, starting))
            if (offered[i] and answers(positions[i], bases[i], lasts[i], before[i])) or starting[i]
        ]
        for column in (scan.positions, scan.base_offsets, scan.last_offsets, scan.running_max):
            tail = column[start:]
            del column[start:]
            column.extend(map(tail.__getitem__, keep))
        self.kept = len(scan.positions)

    def _asked(self, positions: array, bases: array, lasts: array, before: list[int]) -> tuple[list[bool], list[bool]]:
        """For each row, whether an entry may name one of its offsets (a superset: :meth:`_answers` judges
        those), and whether one names its position (kept), found in C loops.  The entries' keys inside the
        rows' span are taken as a set when they are few (the rows of a log in order, or going back now and
        then), else every row's offsets are searched for in the whole sorted keys."""
        rows = len(positions)
        low = list(map(min, bases, map((1).__add__, before), lasts))  # the offsets a row may answer: low .. last
        spans = [(keys, bisect_left(keys, min(low)), bisect_right(keys, max(lasts))) for keys in (self.xs, self.times)]
        if sum(hi - lo for _, lo, hi in spans) <= 2 * rows:  # a row of one offset: whether an entry names it;
            named = set(chain.from_iterable(keys[lo:hi] for keys, lo, hi in spans))  # one of more: judged
            offered = map(or_, map(named.__contains__, lasts), map(ne, low, lasts))
        else:
            xs, times = self.xs, self.times
            offered = map(
                or_,
                map(le, map(xs.__getitem__, map(bisect_left, repeat(xs), low)), lasts),
                map(le, map(times.__getitem__, map(bisect_left, repeat(times), low)), lasts),
            )
        at = self.query_at
        lo, hi = bisect_left(at, positions[0]), bisect_right(at, positions[-1])
        if hi - lo <= 2 * rows:
            starts = set(at[lo:hi])
            starting = map(starts.__contains__, positions)
        else:
            starting = map(eq, map(at.__getitem__, map(bisect_left, repeat(at), positions)), positions)
        return list(offered), list(starting)

    def _answers(self, pos: int, base: int, last: int, before: int) -> bool:
        """Whether the batch at ``pos`` (offsets ``base .. last``, the largest last offset before it
        ``before``) answers an offset's question not answered yet (module docstring; the position's,
        :meth:`sift`)."""
        self._take_questions(pos)
        times, xs = self.times, self.xs
        answers = False
        if last > before:  # the first batch reaching the offsets above every earlier last offset
            for keys in (xs, times):
                k = bisect_right(keys, before)
                if k < len(keys) - 1 and keys[k] <= last:  # (not the key ending them)
                    answers = True
        k = bisect_left(times, last)
        if k < len(times) - 1 and times[k] == last:  # (a batch's last offset may be below its base: it ends there)
            if not self.ended[k]:
                self.ended[k] = 1
                answers = True
            lo, hi = (k, k + 1) if base == last else (bisect_left(times, base), k + 1)
        else:
            lo, hi = (k, k) if base == last else (bisect_left(times, base), k)
        if lo < hi and self.unheld.take(lo, hi):
            answers = True
        hi = min(bisect_right(xs, last), len(xs) - 1)
        lo = hi - 1 if base == last else bisect_left(xs, base)
        if 0 <= lo < hi and xs[lo] >= base and self.active.take(lo, hi):
            answers = True
        return answers

    def _take_questions(self, pos: int) -> None:
        """Mark the offsets of the ``.index`` questions from positions up to ``pos`` as asked (the last
        position, past every batch's, ends them)."""
        q, at, xs = self.queried, self.query_at, self.query_x
        while at[q] <= pos:
            self.active.set(bisect_left(self.xs, xs[q]))
            q += 1
        self.queried = q
