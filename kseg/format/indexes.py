"""Index file layouts and searches (``OffsetIndex``, ``TimeIndex``, ``TransactionIndex``, ``AbstractIndex``).

``.index``     8-byte entries: relativeOffset int32, position int32
``.timeindex`` 12-byte entries: timestamp int64, relativeOffset int32
``.txnindex``  34-byte entries: version int16, producerId int64, firstOffset
               int64, lastOffset int64, lastStableOffset int64 (Kafka reads
               the version as the entry's first byte: ``AbortedTxn.version``)

All big-endian.  Opened read-only, Kafka counts ``length // entrySize``
entries, so a preallocated zero tail counts as entries (offset == base).
Searches mirror ``AbstractIndex.indexSlotRangeFor``: a binary search that
first tries the "warm" last 8192 bytes of entries; on a well-formed index it
is a plain largest-lower-bound search, and on a damaged one it gives Kafka's
answer.
"""

from __future__ import annotations

import struct
import sys
from array import array
from functools import partial
from itertools import chain, compress, count
from operator import itemgetter, le
from typing import TYPE_CHECKING, Callable, Generic, Iterable, Iterator, NamedTuple, TypeVar, Union

from kseg.errors import CorruptIndexError, TxnVersionError
from kseg.limits import NO_TIMESTAMP
from kseg.valueclass import Protocol

if TYPE_CHECKING:
    from typing_extensions import Buffer, Self

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
    "b"  # version: written as an int16 0, read as its first byte (AbortedTxn.version is buffer.get(0))
    "x"  # the int16's second byte: never read
    "q"  # producerId
    "q"  # firstOffset
    "q"  # lastOffset
    "q"  # lastStableOffset
)
_INT32 = struct.Struct(">i")
_named = tuple.__new__
_unpack_offset_entry = OFFSET_ENTRY.unpack
_INT64 = struct.Struct(">q")


def _int32s(chunk: Buffer) -> array[int]:
    """Big-endian int32s as a native array."""
    words = array("i")
    words.frombytes(chunk)
    if sys.byteorder == "little":
        words.byteswap()
    return words


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


class OffsetPosition(NamedTuple):
    """An ``.index`` entry (Kafka's ``OffsetPosition``): an absolute offset and its position in the ``.log``."""

    offset: int
    position: int


_offset_position = partial(tuple.__new__, OffsetPosition)  # OffsetPosition((offset, position)) in C


class OffsetColumns(NamedTuple):
    """Consecutive ``.index`` entries as two lists: absolute offsets and ``.log`` positions."""

    offsets: list[int]
    positions: list[int]


class TimeColumns(NamedTuple):
    """Consecutive ``.timeindex`` entries as two lists: timestamps and absolute offsets."""

    timestamps: list[int]
    offsets: list[int]


class TimestampOffset(NamedTuple):
    """A ``.timeindex`` entry (Kafka's ``TimestampOffset``): a timestamp and an absolute offset."""

    timestamp: int
    offset: int


class IndexSource(Protocol):
    """An index file's bytes read on demand (:class:`kseg.storage.files.IndexFile`): its ``length``
    (fixed when opened) and ``read(start, stop)``, the bytes ``[start, stop)`` (within the length)."""

    length: int

    def read(self, start: int, stop: int) -> bytes: ...  # pragma: no cover - protocol


#: An index file's bytes: all of them, or read on demand.
IndexData = Union[bytes, bytearray, memoryview, IndexSource]
#: The entry an index holds (:class:`OffsetPosition` or :class:`TimestampOffset`).
Entry = TypeVar("Entry", OffsetPosition, TimestampOffset)

WINDOW = 1 << 20  # bytes of an index file read at a time (a multiple of 8 and 12 entries' bytes: 3 * 2^18)
WINDOW -= WINDOW % 24
#: bytes read around an entry a read jumps to (a multiple of twice 24, so a window starting half of it before
#: an entry starts at an entry of either kind); reads that go on from there read twice as many each time, up
#: to a :data:`WINDOW`.  A binary search over a 256 MiB index that read a whole window at each of its probes
#: read ~8 MiB a lookup
PROBE = 4096 - 4096 % 48


class IndexView(Generic[Entry]):
    """An index file's bytes with its base offset (``AbstractIndex``): what both index kinds share.

    Opened read-only, Kafka counts ``length // entry_size`` entries, so a
    preallocated tail of zero bytes counts as entries whose offset is the
    base offset.  The rule for that tail is written here once:
    :meth:`used_entries` (where Kafka's tool stops) and :meth:`zero_tail`.

    ``data`` is the file's bytes, or an :class:`IndexSource` read a window of :data:`WINDOW` bytes at a
    time: scans (the zero tail, the entries of a dump, a check's columns) hold one window and make no
    object an entry, so a 1 GiB index costs a window, not its size; a read that jumps (a search's probe)
    reads the :data:`PROBE` bytes around it instead, and the reads going on from it twice as many each.
    ``stop`` limits the view to its first ``stop`` entries (the used ones).
    """

    __slots__ = ("data", "base_offset", "length", "entries", "path", "_win", "_win_at")

    entry_size: int
    _relative_offset_at: int  # byte of the int32 relative offset within an entry
    _kind: str  # what Kafka's sanity-check messages call it: "index", "time index"

    def __init__(self, data: IndexData, base_offset: int, path: str | None = None, stop: int | None = None) -> None:
        self.data = data
        self.base_offset = base_offset
        length = len(data) if isinstance(data, (bytes, bytearray, memoryview)) else data.length
        if stop is not None:
            length = min(length, stop * self.entry_size)
        self.length = length
        self.entries = length // self.entry_size
        self.path = path
        self._win: bytes | memoryview = b""
        self._win_at = 0

    def limited(self, stop: int) -> Self:
        """This index's first ``stop`` entries, as a view of the same kind on the same bytes."""
        return type(self)(self.data, self.base_offset, self.path, stop)

    def read(self, start: int, stop: int) -> bytes | memoryview:
        """The bytes ``[start, stop)`` of the file (within :attr:`length`): a slice of the window."""
        stop = min(stop, self.length)
        at = self._win_at
        if start >= at and stop <= at + len(self._win):
            return self._win[start - at : stop - at]
        data = self.data
        if isinstance(data, (bytes, bytearray, memoryview)):
            return memoryview(data)[start:stop]
        if stop - start >= WINDOW:
            return data.read(start, stop)
        if self._win and start == at + len(self._win):  # the next bytes: twice as many, up to a window (a scan)
            at, end = start, min(self.length, max(stop, start + min(WINDOW, 2 * len(self._win))))
        else:  # a jump (a search's probe, a scan's start): the bytes around it, a search's next probes nearby
            at = max(0, start - PROBE // 2)
            end = min(self.length, max(stop, at + PROBE))
        self._win_at, self._win = at, data.read(at, end)
        return self._win[start - at : stop - at]

    def windows(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, bytes | memoryview]]:
        """``(entry number, bytes)`` of whole entries ``start .. stop - 1``, a window at a time."""
        size = self.entry_size
        stop = self.entries if stop is None else min(stop, self.entries)
        step = max(1, WINDOW // size)
        for first in range(start, stop, step):
            yield first, self.read(first * size, min(stop, first + step) * size)

    def offset_of(self, n: int) -> int:
        """The absolute offset of entry ``n``."""
        at = n * self.entry_size + self._relative_offset_at
        relative: int = _INT32.unpack(self.read(at, at + 4))[0]
        return self.base_offset + relative

    def is_zero_tail_entry(self, n: int) -> bool:
        """Entry ``n`` (> 0) has the base offset: ``DumpLogSegments`` stops dumping there, the
        first entry of a preallocated zero tail (an index still being written, or recovered)."""
        return n > 0 and self.offset_of(n) == self.base_offset

    def _zero_relative(self, start: int) -> Iterator[int]:
        """Entries from ``start`` whose relative offset is 0, in order, read a window at a time in C:
        as 32-bit words, where zero reads as zero in any byte order."""
        word, stride = self._relative_offset_at // 4, self.entry_size // 4
        for first, chunk in self.windows(start):
            words = memoryview(chunk).cast("B").cast("I")[word::stride]
            if 0 in words:
                relative = words.tolist()
                n = -1
                while True:
                    try:
                        n = relative.index(0, n + 1)
                    except ValueError:
                        break
                    yield first + n

    def used_entries(self) -> int:
        """Entries before the first :meth:`is_zero_tail_entry` (all of them if there is none)."""
        if self.entries < 2:
            return self.entries
        return next(self._zero_relative(1), self.entries)

    def zero_tail(self) -> int:
        """Entries of a preallocated zero tail, or 0: from the first :meth:`is_zero_tail_entry`
        whose bytes are all zero (a non-zero entry with relative offset 0 is damage, not a tail)."""
        if self.entries < 2:
            return 0
        size = self.entry_size
        for n in self._zero_relative(1):
            if bytes(self.read(n * size, (n + 1) * size)).count(0) == size:
                return self.entries - n
        return 0

    def all_zero(self) -> bool:
        """Whether every whole entry's bytes are zero (read a window at a time, stopping at the first non-zero)."""
        return all(bytes(chunk).count(0) == len(chunk) for _, chunk in self.windows())

    def lookup_slot(self, target: int) -> int:
        """The largest entry whose key (offset, or timestamp) is <= target, or -1."""
        return _largest_lower_bound(self.entries, self.entry_size, self.key, target)

    def iter_entries(self, stop: int | None = None) -> Iterator[Entry]:
        """Entries ``0 .. stop - 1`` (default: all), as :meth:`entry` gives them."""
        return map(self.entry, range(self.entries if stop is None else min(stop, self.entries)))

    def last_entry(self) -> Entry:
        """``lastEntry``: the last entry, or :meth:`none` for an empty index."""
        return self.entry(self.entries - 1) if self.entries else self.none()

    def lookup(self, target: int) -> Entry:
        """``lookup``: the largest entry whose key is <= target, else :meth:`none`."""
        slot = self.lookup_slot(target)
        return self.none() if slot == -1 else self.entry(slot)

    def entry(self, n: int) -> Entry:  # pragma: no cover - each kind defines it
        """Entry ``n``, with its absolute offset."""
        raise NotImplementedError

    def none(self) -> Entry:  # pragma: no cover - each kind defines it
        """What ``lookup`` returns when no entry is <= the target."""
        raise NotImplementedError

    def key(self, n: int) -> int:  # pragma: no cover - each kind defines it
        """The search key of entry ``n``: its offset (``.index``) or timestamp (``.timeindex``)."""
        raise NotImplementedError

    def _check_last_offset(self, last_offset: int) -> None:
        """``sanityCheck``'s rule of a non-empty index: its last offset is not below the base offset."""
        if self.entries != 0 and last_offset < self.base_offset:
            raise CorruptIndexError(
                f"corrupt {self._kind}: non-zero size but the last offset is {last_offset}, "
                f"less than the base offset {self.base_offset}",
                path=self.path,
            )

    def _check_length(self) -> None:
        """``sanityCheck``'s rule of the file's length: whole entries."""
        if self.length % self.entry_size != 0:
            raise CorruptIndexError(
                f"{self._kind} is corrupt: found {self.length} bytes, which is not a multiple of {self.entry_size}",
                path=self.path,
            )


# The two index kinds below share their shape on purpose: each declares its layout, entry and "none".
class OffsetIndexView(IndexView[OffsetPosition]):
    """A ``.index`` file (``OffsetIndex``): entries ``relativeOffset int32, position int32``."""

    __slots__ = ()

    entry_size = OFFSET_ENTRY.size
    _relative_offset_at = 0
    _kind = "index"

    def entry(self, n: int) -> OffsetPosition:
        """Entry ``n`` with its absolute offset."""
        rel, pos = _unpack_offset_entry(self.read(n << 3, (n << 3) + 8))
        return _named(OffsetPosition, (self.base_offset + rel, pos))  # OffsetPosition(...) in one C call

    key = IndexView.offset_of

    def iter_entries(self, stop: int | None = None) -> Iterator[OffsetPosition]:
        """Entries ``0 .. stop - 1`` (default: all) in C, a window at a time: the entries as big-endian
        int32 pairs, no Python frame an entry (a third of the time of ``entry()`` in a loop)."""
        base = self.base_offset.__add__
        return chain.from_iterable(
            # whole 8-byte entries: as many offsets as positions
            map(_offset_position, zip(map(base, words[0::2]), words[1::2], strict=True))
            for words in self._word_windows(0, stop)
        )

    def iter_offsets(self, stop: int) -> Iterator[int]:
        """The absolute offsets of entries ``0 .. stop - 1``, in file order."""
        return chain.from_iterable(map(self.base_offset.__add__, words[0::2]) for words in self._word_windows(0, stop))

    def iter_positions(self, stop: int) -> Iterator[int]:
        """The ``.log`` positions of entries ``0 .. stop - 1``, in file order."""
        return chain.from_iterable(words[1::2] for words in self._word_windows(0, stop))

    def columns(self, start: int, stop: int) -> OffsetColumns:
        """Entries ``start .. stop - 1`` as :class:`OffsetColumns` (checked in bulk by ``kseg dump``)."""
        words = self._words(start, stop)
        return OffsetColumns(list(map(self.base_offset.__add__, words[0::2])), words[1::2].tolist())

    def _word_windows(self, start: int, stop: int | None) -> Iterator[array[int]]:
        """:meth:`_words` of entries ``start .. stop - 1``, a window at a time."""
        for _, chunk in self.windows(start, stop):
            yield _int32s(chunk)

    def _words(self, start: int, stop: int) -> array[int]:
        """Entries ``start .. stop - 1`` (within the file) as native int32s: offset, position, offset..."""
        return _int32s(self.read(start * 8, min(stop, self.entries) * 8))

    def none(self) -> OffsetPosition:
        """``OffsetIndex.lookup`` below every entry: the base offset at position 0."""
        return OffsetPosition(self.base_offset, 0)

    def sanity_check(self) -> None:
        """``OffsetIndex.sanityCheck``."""
        self._check_last_offset(self.last_entry().offset)
        self._check_length()


class TimeIndexView(IndexView[TimestampOffset]):
    """A ``.timeindex`` file (``TimeIndex``): entries ``timestamp int64, relativeOffset int32``."""

    __slots__ = ()

    entry_size = TIME_ENTRY.size
    _relative_offset_at = 8
    _kind = "time index"

    def entry(self, n: int) -> TimestampOffset:
        """Entry ``n`` with its absolute offset."""
        ts, rel = TIME_ENTRY.unpack(self.read(n * 12, n * 12 + 12))
        return _named(TimestampOffset, (ts, self.base_offset + rel))  # TimestampOffset(...) in one C call

    def key(self, n: int) -> int:
        """The search key of entry ``n``: its timestamp."""
        timestamp: int = _INT64.unpack(self.read(n * 12, n * 12 + 8))[0]
        return timestamp

    def iter_offsets(self, stop: int) -> Iterator[int]:
        """The absolute offsets of entries ``0 .. stop - 1``, in file order (a window at a time, no tuple kept)."""
        base = self.base_offset.__add__
        return chain.from_iterable(
            map(base, map(itemgetter(1), TIME_ENTRY.iter_unpack(chunk))) for _, chunk in self.windows(0, stop)
        )

    def order_problem(self) -> str | None:
        """The first entry whose timestamp is not above the one before it (``TimeIndex`` appends only larger
        ones), as text; None when they increase.  A window's timestamps are unpacked in one call and compared
        pairwise in C: no Python step an entry."""
        prev: int | None = None
        for first, chunk in self.windows(0, self.entries):
            timestamps = struct.unpack(">" + "q4x" * (len(chunk) // 12), chunk)
            if prev is not None and timestamps and timestamps[0] <= prev:
                return self._out_of_order(first)
            n = next(compress(count(first + 1), map(le, timestamps[1:], timestamps)), None)
            if n is not None:
                return self._out_of_order(n)
            prev = timestamps[-1] if timestamps else prev
        return None

    def _out_of_order(self, n: int) -> str:
        return f"entry #{n} ({self.key(n)}) is not above entry #{n - 1} ({self.key(n - 1)})"

    def columns(self, start: int, stop: int) -> TimeColumns:
        """Entries ``start .. stop - 1`` as :class:`TimeColumns` (checked in bulk by ``verify-index``)."""
        stop = min(stop, self.entries)
        if stop <= start:
            return TimeColumns([], [])
        fields = struct.unpack(">" + "qi" * (stop - start), self.read(start * 12, stop * 12))  # one C call
        return TimeColumns(list(fields[0::2]), list(map(self.base_offset.__add__, fields[1::2])))

    def none(self) -> TimestampOffset:
        """``TimeIndex.lookup`` below every entry: no timestamp, the base offset."""
        return TimestampOffset(NO_TIMESTAMP, self.base_offset)

    def sanity_check(self) -> None:
        """``TimeIndex.sanityCheck``."""
        last_ts, last_offset = self.last_entry()
        if self.entries != 0:
            first_ts = self.entry(0).timestamp
            if last_ts < first_ts:
                raise CorruptIndexError(
                    f"corrupt time index: non-zero size but the last timestamp is {last_ts}, "
                    f"less than the first timestamp {first_ts}",
                    path=self.path,
                )
        self._check_last_offset(last_offset)
        self._check_length()


TXN_VERSION = 0  # AbortedTxn.CURRENT_VERSION
TxnEntry = tuple[int, int, int, int, int]  # (version, producerId, firstOffset, lastOffset, lastStableOffset)


def iter_aborted_txns(data: bytes | bytearray | memoryview, path: str | None = None) -> Iterator[TxnEntry]:
    """Yield ``(version, producerId, firstOffset, lastOffset, lastStableOffset)`` of every whole 34-byte
    entry (``TransactionIndex.allAbortedTxns``); :func:`aborted_txns_of` read from bytes in memory."""
    return (entry for _, entry in aborted_txns_of((data,), path))


def aborted_txns_of(
    pieces: Iterable[bytes | bytearray | memoryview], path: str | None = None
) -> Iterator[tuple[int, TxnEntry]]:
    """``(position, entry)`` of every whole 34-byte entry of a ``.txnindex`` read as consecutive ``pieces``
    (a stream: one piece and one entry held), as ``TransactionIndex``'s iterator reads them: a trailing
    partial entry is not read; an entry whose version (its first byte, signed) is above 0 ends the reading
    with :class:`TxnVersionError` in Kafka's words (``path``: the file it names; else the entry's number)."""
    size, pending, at = TXN_ENTRY.size, b"", 0
    for piece in pieces:
        data = pending + bytes(piece) if pending else piece
        whole = len(data) - len(data) % size
        for n, entry in enumerate(TXN_ENTRY.iter_unpack(memoryview(data)[:whole])):
            if entry[0] > TXN_VERSION:
                where = path if path is not None else f"entry {(at + n * size) // size}"
                raise TxnVersionError(
                    f"Unexpected aborted transaction version {entry[0]} in transaction index {where}, "
                    f"current version is {TXN_VERSION}",
                    position=at + n * size,
                )
            yield at + n * size, entry
        pending, at = bytes(data[whole:]), at + whole


def txn_sanity_check(pieces: Iterable[bytes | bytearray | memoryview], base_offset: int, path: str) -> None:
    """``TransactionIndex.sanityCheck`` of a ``.txnindex`` read as ``pieces``: each entry in file order, its
    version first (:func:`aborted_txns_of`: :class:`TxnVersionError`, Kafka's ``KafkaException``), then its
    ``lastOffset``: below the segment's ``base_offset`` is :class:`CorruptIndexError` (Kafka's
    ``CorruptIndexException``), in Kafka's words; the first fault decides."""
    for position, (version, pid, first, last, lso) in aborted_txns_of(pieces, path):
        if last < base_offset:
            raise CorruptIndexError(
                f"Last offset of aborted transaction AbortedTxn(version={version}, producerId={pid}, "
                f"firstOffset={first}, lastOffset={last}, lastStableOffset={lso}) in index {path} is less than "
                f"start offset {base_offset}",
                position=position,
            )
