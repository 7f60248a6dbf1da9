"""Index file layouts and searches (``OffsetIndex``, ``TimeIndex``, ``TransactionIndex``, ``AbstractIndex``).

``.index``     8-byte entries: relativeOffset int32, position int32
``.timeindex`` 12-byte entries: timestamp int64, relativeOffset int32
``.txnindex``  34-byte entries: version int16, producerId int64, firstOffset
               int64, lastOffset int64, lastStableOffset int64

All big-endian.  Opened read-only, Kafka counts ``length // entrySize``
entries, so a preallocated zero tail counts as entries (offset == base).
Searches mirror ``AbstractIndex.indexSlotRangeFor``: a binary search that
first tries the "warm" last 8192 bytes of entries; on a well-formed index it
is a plain largest-lower-bound search, and on a damaged one it gives Kafka's
answer.
"""

from __future__ import annotations

import struct
from typing import Callable

from kseg.errors import CorruptIndexError
from kseg.limits import NO_TIMESTAMP

OFFSET_ENTRY = struct.Struct(
    ">"
    "i"  # offset relative to the file's base offset
    "i"  # physical position in the .log
)
TIME_ENTRY = struct.Struct(
    ">"
    "q"  # timestamp
    "i"  # offset relative to the file's base offset
)
TXN_ENTRY = struct.Struct(
    ">"
    "h"  # version (0)
    "q"  # producerId
    "q"  # firstOffset
    "q"  # lastOffset
    "q"  # lastStableOffset
)


def _largest_lower_bound(entries: int, entry_size: int, key: Callable[[int], int], target: int) -> int:
    """``AbstractIndex.largestLowerBoundSlotFor``; -1 when every key is above ``target``."""
    if entries == 0:
        return -1
    first_hot = max(0, entries - 1 - 8192 // entry_size)
    if key(first_hot) < target:
        return _binary_search(key, target, first_hot, entries - 1)
    if key(0) > target:
        return -1
    return _binary_search(key, target, 0, first_hot)


def _binary_search(key: Callable[[int], int], target: int, lo: int, hi: int) -> int:
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        found = key(mid)
        if found > target:
            hi = mid - 1
        elif found < target:
            lo = mid
        else:
            return mid
    return lo


class OffsetIndexView:
    """A ``.index`` file's bytes with its base offset (``OffsetIndex``)."""

    __slots__ = ("data", "base_offset", "length", "entries", "path")

    entry_size = OFFSET_ENTRY.size

    def __init__(self, data: bytes, base_offset: int, path: str | None = None) -> None:
        self.data = data
        self.base_offset = base_offset
        self.length = len(data)
        self.entries = self.length // 8
        self.path = path

    def entry(self, n: int) -> tuple[int, int]:
        """``(absolute offset, position)`` of entry ``n``."""
        rel, pos = OFFSET_ENTRY.unpack_from(self.data, n * 8)
        return self.base_offset + rel, pos

    def last_entry(self) -> tuple[int, int]:
        if self.entries == 0:
            return self.base_offset, 0
        return self.entry(self.entries - 1)

    def lookup(self, target: int) -> tuple[int, int]:
        """``OffsetIndex.lookup``: the largest entry with offset <= target, else (base, 0)."""
        slot = _largest_lower_bound(self.entries, 8, lambda n: self.entry(n)[0], target)
        if slot == -1:
            return self.base_offset, 0
        return self.entry(slot)

    def lookup_slot(self, target: int) -> int:
        return _largest_lower_bound(self.entries, 8, lambda n: self.entry(n)[0], target)

    def sanity_check(self) -> None:
        """``OffsetIndex.sanityCheck``."""
        last_offset = self.last_entry()[0]
        if self.entries != 0 and last_offset < self.base_offset:
            raise CorruptIndexError(
                f"corrupt index: non-zero size but the last offset is {last_offset}, "
                f"less than the base offset {self.base_offset}",
                path=self.path,
            )
        if self.length % 8 != 0:
            raise CorruptIndexError(
                f"index is corrupt: found {self.length} bytes, which is not a multiple of 8",
                path=self.path,
            )


class TimeIndexView:
    """A ``.timeindex`` file's bytes with its base offset (``TimeIndex``)."""

    __slots__ = ("data", "base_offset", "length", "entries", "path")

    entry_size = TIME_ENTRY.size

    def __init__(self, data: bytes, base_offset: int, path: str | None = None) -> None:
        self.data = data
        self.base_offset = base_offset
        self.length = len(data)
        self.entries = self.length // 12
        self.path = path

    def entry(self, n: int) -> tuple[int, int]:
        """``(timestamp, absolute offset)`` of entry ``n``."""
        ts, rel = TIME_ENTRY.unpack_from(self.data, n * 12)
        return ts, self.base_offset + rel

    def last_entry(self) -> tuple[int, int]:
        if self.entries == 0:
            return NO_TIMESTAMP, self.base_offset
        return self.entry(self.entries - 1)

    def lookup_slot(self, target: int) -> int:
        """The slot ``TimeIndex.lookup`` uses: the largest entry with timestamp <= target, or -1."""
        return _largest_lower_bound(self.entries, 12, lambda n: self.entry(n)[0], target)

    def lookup(self, target: int) -> tuple[int, int]:
        """``TimeIndex.lookup``: the largest entry with timestamp <= target, else (-1, base)."""
        slot = _largest_lower_bound(self.entries, 12, lambda n: self.entry(n)[0], target)
        if slot == -1:
            return NO_TIMESTAMP, self.base_offset
        return self.entry(slot)

    def sanity_check(self) -> None:
        """``TimeIndex.sanityCheck``."""
        last_ts, last_offset = self.last_entry()
        if self.entries != 0:
            first_ts = self.entry(0)[0]
            if last_ts < first_ts:
                raise CorruptIndexError(
                    f"corrupt time index: non-zero size but the last timestamp is {last_ts}, "
                    f"less than the first timestamp {first_ts}",
                    path=self.path,
                )
            if last_offset < self.base_offset:
                raise CorruptIndexError(
                    f"corrupt time index: non-zero size but the last offset is {last_offset}, "
                    f"less than the base offset {self.base_offset}",
                    path=self.path,
                )
        if self.length % 12 != 0:
            raise CorruptIndexError(
                f"time index is corrupt: found {self.length} bytes, which is not a multiple of 12",
                path=self.path,
            )


def iter_aborted_txns(data: bytes):
    """Yield ``(version, producerId, firstOffset, lastOffset, lastStableOffset)``
    of every whole 34-byte entry (``TransactionIndex.allAbortedTxns``)."""
    for n in range(len(data) // TXN_ENTRY.size):
        entry = TXN_ENTRY.unpack_from(data, n * TXN_ENTRY.size)
        if entry[0] > 0:
            raise CorruptIndexError(
                f"unexpected aborted transaction version {entry[0]} in transaction index entry {n}, "
                "current version is 0",
                position=n * TXN_ENTRY.size,
            )
        yield entry
