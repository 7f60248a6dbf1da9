"""The keys a segment's indexes ask its log about, read a chunk at a time into int64 arrays.

:func:`kseg.ops.verify.log.index_keys` gives, lazily and each ascending in a healthy index, the ``.log`` positions the
``.index`` names and the offsets the ``.index`` and the ``.timeindex`` name.  The log pass walks them
beside the batches (:meth:`KeyStream.skip`), a stream at a time; the compiled engine's window loop
(``verify_window``) walks the same arrays from the same cursors, so the two paths share one place in
each stream and either may take the next batch.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from itertools import islice
from operator import le
from typing import Iterable, Iterator, Union

from kseg.limits import INT64_MAX, INT64_MIN

#: Keys read from a stream at a time: the window loop returns to Python once per chunk of keys.
CHUNK = 8192

PAST_ALL = INT64_MAX + 1  # a key beyond every position and offset

#: Keys read a window of an index at a time: an int64 array, or a list of ints (numbers past int64).
Keys = Union["array[int]", list[int]]


class KeyChunks:
    """A stream's keys a window at a time (:class:`KeyStream` takes them by the chunk, no Python object a key);
    iterated, the keys one by one."""

    __slots__ = ("chunks",)

    def __init__(self, chunks: Iterator[Keys]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[int]:
        for chunk in self.chunks:
            yield from chunk


class KeyStream:
    """One stream of keys, ascending as brokers write indexes: :attr:`keys` from :attr:`at` on are those
    not yet passed, and :attr:`more` says whether the source has keys past them (:meth:`refill` reads
    them).  :attr:`ascending` turns False at the first key below one before it (a damaged or garbage
    index); the stream then ends: what the pass recorded with it answers nothing (:meth:`ascends`)."""

    __slots__ = ("keys", "at", "more", "ascending", "_source", "_chunks", "_pending", "_pending_at", "_unread", "_last")

    def __init__(self, source: Iterable[int]) -> None:
        self._chunks = source.chunks if isinstance(source, KeyChunks) else None
        self._source = iter(()) if isinstance(source, KeyChunks) else iter(source)
        self._pending: Keys = array("q")  # the window of keys being taken (with chunks)
        self._pending_at = 0
        self.keys = array("q")
        self.at = 0
        self.more = self._unread = self.ascending = True
        self._last = INT64_MIN
        self.refill()

    def _read(self) -> Keys:
        """Up to :data:`CHUNK` keys more from the source, checked to ascend from the last one read."""
        chunk = list(islice(self._source, CHUNK)) if self._chunks is None else self._take()
        self._unread = len(chunk) == CHUNK
        if chunk:
            if chunk[0] < self._last or not all(map(le, chunk, islice(chunk, 1, None))):
                self.ascending = self._unread = False
            self._last = chunk[-1]
        return chunk

    def _take(self) -> Keys:
        """Up to :data:`CHUNK` keys more from the windows of keys."""
        assert self._chunks is not None
        out: Keys = array("q")
        while len(out) < CHUNK:
            pending, at = self._pending, self._pending_at
            if at >= len(pending):
                nxt = next(self._chunks, None)
                if nxt is None:
                    break
                self._pending, self._pending_at = nxt, 0
                continue
            piece = pending[at : at + CHUNK - len(out)]
            self._pending_at = at + len(piece)
            if isinstance(out, array) and isinstance(piece, list):
                out = out.tolist()
            out += piece  # type: ignore[operator]  # (an array with an array, a list with either)
        return out

    def refill(self) -> None:
        """Drop the keys passed and read up to :data:`CHUNK` more.  A key past int64 ends the keys read
        (no batch's position or last offset reaches it, nor any after it when they ascend); one below
        int64 counts as its lowest value (it is passed by the first batch either way)."""
        chunk = self._read()
        self.more = self._unread
        try:
            fresh = array("q", chunk)
        except OverflowError:
            kept = [max(k, INT64_MIN) for k in chunk if k <= INT64_MAX]
            self.more = self.more and len(kept) == len(chunk)
            fresh = array("q", kept)
        self.keys = self.keys[self.at :] + fresh
        self.at = 0

    def ascends(self) -> bool:
        """Whether every key of the source ascends, reading those not read yet (once the pass is over)."""
        while self._unread:
            self._read()
        self.more = False
        return self.ascending

    def skip(self, limit: int) -> bool:
        """Pass the keys below ``limit``; whether any was passed.  Afterwards :meth:`head` is the first
        key at or past ``limit`` (reading more of the source when the array runs out)."""
        passed = False
        while True:
            keys, at = self.keys, self.at
            i = bisect_left(keys, limit, at)
            if i > at:
                passed = True
                self.at = i
            if i < len(keys) or not self.more:
                return passed
            self.refill()

    def head(self) -> int:
        """The first key not passed, or :data:`PAST_ALL`."""
        return self.keys[self.at] if self.at < len(self.keys) else PAST_ALL
