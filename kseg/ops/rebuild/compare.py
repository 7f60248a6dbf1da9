"""How an existing index file compares with the one recovery rebuilds (``kseg rebuild-index``): the
first differing entry, a preallocated zero tail, the ``index.interval.bytes`` an existing ``.index`` was
written at; an existing file over ``files.WHOLE_INDEX`` bytes compared a window at a time.

One rule for "healthy", shared with ``verify-index``: an existing ``.index`` written at another
``index.interval.bytes`` is rebuilt again at the interval its entries show (:func:`inferred_interval`)
and is the same when that gives it byte for byte; a preallocated zero tail after the used entries (an
active segment's index, ``OffsetIndex``/``TimeIndex`` preallocate ``segment.index.bytes``) is healthy.
"""

from __future__ import annotations

from types import MappingProxyType

from kseg.errors import InputError
from kseg.format.indexes import OFFSET_ENTRY, TIME_ENTRY, TXN_ENTRY
from kseg.ops.rebuild.recovered import Recovered
from kseg.storage import files

ENTRY = MappingProxyType(
    {files.INDEX: OFFSET_ENTRY, files.TIME_INDEX: TIME_ENTRY, files.TXN_INDEX: TXN_ENTRY}
)  # per kind


class LargeIndex:
    """An existing index file over ``files.WHOLE_INDEX`` bytes (a preallocated or garbage one), compared
    with the rebuilt bytes a window at a time: the slices and comparisons :func:`difference` and the
    callers make, without holding the file (a sparse 1 GiB index would cost its size)."""

    def __init__(self, source: files.IndexFile) -> None:
        self.source = source

    def __len__(self) -> int:
        return self.source.length

    def __getitem__(self, part: slice) -> bytes:
        start, stop, _ = part.indices(self.source.length)
        return self.source.read(start, max(start, stop))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (bytes, bytearray)) or len(other) != len(self):
            return False
        step = 1 << 20
        return all(self[at : at + step] == other[at : at + step] for at in range(0, len(self), step))

    __hash__ = None  # type: ignore[assignment]

    def zero_from(self, start: int) -> bool:
        step = 1 << 20
        for at in range(start, len(self), step):
            chunk = self[at : at + step]
            if chunk.count(0) != len(chunk):
                return False
        return True


def zero_from(existing, start: int) -> bool:
    """Whether every byte of ``existing`` from ``start`` is zero."""
    if isinstance(existing, LargeIndex):
        return existing.zero_from(start)
    return not any(existing[start:])


def _entry_text(kind: str, data, n: int, base: int) -> str:
    size = ENTRY[kind].size
    chunk = data[n * size : (n + 1) * size]
    if len(chunk) < size:
        return f"{len(chunk)} trailing bytes"
    e = ENTRY[kind].unpack(chunk)
    if kind == files.INDEX:
        return f"(offset {base + e[0]}, position {e[1]})"
    if kind == files.TIME_INDEX:
        return f"(timestamp {e[0]}, offset {base + e[1]})"
    return f"(producerId {e[1]}, firstOffset {e[2]}, lastOffset {e[3]}, lastStableOffset {e[4]})"


def difference(kind: str, existing, rebuilt: bytes, base: int) -> str:
    """The first difference between two index files, entry by entry."""
    size = ENTRY[kind].size
    n_old, n_new = -(-len(existing) // size), len(rebuilt) // size
    for n in range(min(n_old, n_new)):
        if existing[n * size : (n + 1) * size] != rebuilt[n * size : (n + 1) * size]:
            return (
                f"entry #{n}: existing {_entry_text(kind, existing, n, base)}, "
                f"rebuilt {_entry_text(kind, rebuilt, n, base)}"
            )
    if n_old > n_new:
        extra = len(existing) - n_new * size
        if zero_from(existing, n_new * size):
            return (
                f"the existing file has {extra} more bytes, all zero from entry #{n_new} "
                "(a preallocated index of a segment that was not closed)"
            )
        return (
            f"the existing file has {n_old - n_new} more entries, from entry #{n_new} "
            f"{_entry_text(kind, existing, n_new, base)}"
        )
    return (
        f"the rebuilt file has {n_new - n_old} more entries, from entry #{n_old} "
        f"{_entry_text(kind, rebuilt, n_old, base)}"
    )


def inferred_interval(index: bytes) -> int | None:
    """The largest ``index.interval.bytes`` an existing ``.index`` can have been written at, or None.

    Recovery (``LogSegment.recover``) and a broker appending a batch at a time add an entry when more
    than ``index.interval.bytes`` were appended since the last one (from position 0), so every gap
    between consecutive entries' positions (the first: from 0) is larger than the interval: the
    smallest gap less one bounds it.  None for an index with no entries or whose positions do not
    increase (a zero tail, damage)."""
    size = OFFSET_ENTRY.size
    if not index or len(index) % size:
        return None
    prev, smallest = 0, None
    for _, pos in OFFSET_ENTRY.iter_unpack(index):
        gap = pos - prev
        if gap <= 0:
            return None
        smallest = gap if smallest is None or gap < smallest else smallest
        prev = pos
    return None if smallest is None else smallest - 1


def at_inferred_interval(
    rec: Recovered, existing_index, interval: int, max_index_size: int, limit: int
) -> tuple[int, dict[str, bytes | None]] | None:
    """``(N, rebuilt files)`` when recovery at the interval the existing ``.index`` shows (N, not
    ``interval``) rebuilds that ``.index`` byte for byte; else None.  An empty ``.index`` beside a log
    whose recovery makes entries shows an interval of at least the last batch's position (N: recovery
    at N makes none; the outcome then says "≥ N").  Reads the log once more (only for
    a segment whose ``.index`` differs); producer state is not involved in the ``.index``/``.timeindex``."""
    if not isinstance(existing_index, bytes) or rec.truncated or rec.stop is not None or rec.failure is not None:
        return None  # none, or over files.WHOLE_INDEX (LargeIndex: more entries than any segment.index.bytes)
    # an empty .index when an entry was due at the interval given: interval >= the last batch's start
    n = rec.last_position if existing_index == b"" and rec.last_position > 0 else inferred_interval(existing_index)
    if n is None or n == interval:
        return None
    from kseg.ops.rebuild.rebuild import recover_segment
    from kseg.storage.producer_state import ProducerState

    try:
        again = recover_segment(
            rec.segment, ProducerState(), index_interval_bytes=n, max_index_size=max_index_size, limit=limit
        )
    except InputError:
        return None
    if again.failure is not None or again.index_bytes() != existing_index:
        return None
    return n, {files.INDEX: again.index_bytes(), files.TIME_INDEX: again.time_index_bytes()}


def zero_tail(kind: str, existing: bytes | LargeIndex, rebuilt: bytes) -> int:
    """Bytes of a preallocated zero tail when ``existing`` is ``rebuilt`` followed by zeros (an active
    segment's ``.index``/``.timeindex``, preallocated to ``segment.index.bytes``, after a crash or copied
    from a live broker: ``verify-index`` notes it, the broker trims it when the segment rolls), else 0.
    A ``.timeindex`` may lack recovery's last entry: the one ``LogSegment.onBecomeInactiveSegment``
    (or a clean ``close``) adds for the largest timestamp, never written for a segment still active."""
    if kind == files.TXN_INDEX:
        return 0
    used = [rebuilt]
    if kind == files.TIME_INDEX and rebuilt:
        used.append(rebuilt[: -TIME_ENTRY.size])
    for head in used:
        if len(existing) > len(head) and existing[: len(head)] == head and zero_from(existing, len(head)):
            return len(existing) - len(head)
    return 0


def tail_rule(kind: str, existing: bytes | LargeIndex, rebuilt: bytes) -> str | None:
    """What a healthy zero-tailed existing file is (:func:`zero_tail`), for the outcome's ``rule``; None
    when ``existing`` is not one."""
    tail = zero_tail(kind, existing, rebuilt)
    if not tail:
        return None
    text = (
        f"the existing file's used entries; then a preallocated zero tail of {tail} bytes (an active "
        "segment's index, as after a crash or copied from a live broker; Kafka trims it when the segment "
        "rolls)"
    )
    if len(existing) - tail < len(rebuilt):
        text += "; recovery adds the last entry, which a segment gets when it rolls"
    return text
