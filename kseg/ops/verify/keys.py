"""The keys a segment's indexes ask its log about, read a chunk at a time into int64 arrays.

:func:`index_keys` gives, lazily and each ascending in a healthy index, the ``.log`` positions the
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

from kseg import engine
from kseg.errors import InputError
from kseg.format.indexes import OFFSET_ENTRY, TIME_ENTRY, OffsetIndexView, TimeIndexView
from kseg.limits import INT64_MAX, INT64_MIN
from kseg.ops.verify.result import IndexFiles, IndexKeys

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


def index_keys(indexes: IndexFiles) -> IndexKeys:
    """The ``.log`` positions a segment's ``.index`` names and the offsets its ``.index`` and
    ``.timeindex`` name, read lazily from the views (a file that could not be read names none: its
    check reports it).  The log pass checks that each ascends as it reads it
    (:class:`~kseg.ops.verify.keys.KeyStream`): where one does not (a damaged or garbage index), the
    batches are recorded every one, so memory follows the log, never the index (sorting a random 1 GiB
    index's 134 M keys would cost gigabytes).  With the compiled engine the keys are read a window of the
    file at a time into int64 arrays (``index_keys``)."""
    positions: Iterable[int] = ()
    offsets: list[Iterable[int]] = []
    for view in indexes:
        if view is None or isinstance(view, InputError):
            continue
        stop = view.entries - view.zero_tail()  # a preallocated tail asks nothing the checks look at
        if engine.C is not None:
            kind = 0 if isinstance(view, OffsetIndexView) else 1
            offsets.append(KeyChunks(_key_windows(view, stop, kind, 0)))
            if kind == 0:
                positions = KeyChunks(_key_windows(view, stop, 0, 1))
            continue
        offsets.append(view.iter_offsets(stop))
        if isinstance(view, OffsetIndexView):
            positions = view.iter_positions(stop)
    return IndexKeys(positions, tuple(offsets), indexes)


def _key_windows(view: OffsetIndexView | TimeIndexView, stop: int, kind: int, column: int) -> Iterator[Keys]:
    """The keys of entries ``0 .. stop - 1`` a window at a time (``index_keys``: kind 0 ``.index``, 1
    ``.timeindex``; column 0 the absolute offsets, 1 the positions), a window whose offsets pass int64 as
    Python ints."""
    assert engine.C is not None
    decode, base = engine.C.index_keys, view.base_offset
    for _, chunk in view.windows(0, stop):
        raw = decode(chunk, kind, column, base)
        if raw is not None:
            keys = array("q")
            keys.frombytes(raw)
            yield keys
        elif kind == 1:
            yield [base + rel for _, rel in TIME_ENTRY.iter_unpack(chunk)]
        else:
            yield [pos if column else base + rel for rel, pos in OFFSET_ENTRY.iter_unpack(chunk)]
