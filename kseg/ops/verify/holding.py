"""Which batch holds an offset, for every index entry of a log whose last offsets do not increase, in one
sweep: :func:`kseg.ops.verify.index.batch_holding` asked once an entry scans the batches (entries times
batches: hours on a large damaged log); here each answer costs O(log batches) after sorting.

A query (``offset``, ``start``) asks for the first batch ``k >= start`` with ``base[k] <= offset <=
last[k]``.  The queries are taken in ascending ``offset`` while the batches are added in ascending base
offset, so when a query is answered exactly the batches with ``base <= offset`` are in a max tree over
batch numbers (each leaf its batch's last offset); the answer is the first leaf from ``start`` holding a
last offset ``>= offset``.  Memory: three 8-byte words a batch (the tree's leaves, stored as
``array("q")``, start at the smallest int64, which no other offset query can reach) and two a query (its
answer, and its number while the queries are sorted by offset when they do not ascend).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from heapq import merge
from itertools import islice
from operator import le
from typing import Iterable, Sequence

from kseg.limits import INT64_MIN
from kseg.ops.verify.result import LogScan

#: Values sorted at a time (then merged) by :func:`ascending_order`.
RUN = 65536


def holding_all(scan: LogScan, offsets: Sequence[int], starts: Sequence[int]) -> array:
    """For each query (``offsets[q]``, ``starts[q]``), the first batch from ``starts[q]`` whose offsets hold
    ``offsets[q]``, or -1: ``batch_holding(scan, offset, start, False)`` for all of them."""
    base, last = scan.base_offsets, scan.last_offsets
    n = len(last)
    size = 1
    while size < n:
        size *= 2
    tree = array("q", [INT64_MIN]) * (2 * size)  # tree[1] the root, tree[size + k] batch k (INT64_MIN: not added)
    by_base = array("q", ascending_order(base))
    lowest = array("q", (k for k in by_base if base[k] == INT64_MIN))  # the batches holding INT64_MIN, in order
    answers = array("q", [-1]) * len(offsets)
    added = 0
    for q in ascending_order(offsets):
        offset, start = offsets[q], starts[q]
        while added < n and base[by_base[added]] <= offset:
            k = by_base[added]
            added += 1
            value, i = last[k], size + k
            while i and tree[i] < value:  # a max only grows: stop where it already holds
                tree[i] = value
                i >>= 1
        if offset == INT64_MIN:  # every leaf reaches it: the batches whose base offset is INT64_MIN hold it
            p = bisect_left(lowest, max(start, 0))
            answers[q] = lowest[p] if p < len(lowest) else -1
        elif 0 <= start < n:
            answers[q] = _first_reaching(tree, size, start, offset)
    return answers


def ascending_order(values: Sequence[int]) -> Iterable[int]:
    """The numbers of ``values`` in ascending order of value (stable): each run of :data:`RUN` sorted (a list
    of Python ints only that long), then the runs merged, 8 bytes a value."""
    n = len(values)
    if all(map(le, values, islice(values, 1, None))):
        return range(n)
    key = values.__getitem__
    if n <= RUN:
        return sorted(range(n), key=key)
    runs = [array("q", sorted(range(at, min(n, at + RUN)), key=key)) for at in range(0, n, RUN)]
    return merge(*runs, key=key)


def _first_reaching(tree: array, size: int, start: int, offset: int) -> int:
    """The first leaf from ``start`` whose value is ``>= offset`` (its batch number), or -1."""
    i = size + start
    while tree[i] < offset:
        while i & 1:  # a right child: its parent's leaves before it are passed
            i >>= 1
        if i == 0:  # passed the root: no leaf reaches
            return -1
        i += 1  # the next subtree to the right
    while i < size:
        i = 2 * i if tree[2 * i] >= offset else 2 * i + 1
    return i - size
