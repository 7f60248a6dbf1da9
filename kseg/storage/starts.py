"""Where reading a segment may start for an offset or time range, from its indexes: the read path of
Kafka's fetch and ListOffsets, written once for every command that selects records by range (``export``,
``grep``).

A segment wholly outside an offset range is pruned by its name (:mod:`kseg.storage.ranges`); inside
one, reading starts at the offset index's floor entry (``OffsetIndex.lookup``); for a start time, at the
last time-index entry whose timestamp is below it (every record before that entry's offset is older:
``TimeIndex`` entries hold the largest timestamp so far), and a segment is skipped when its last entry
and the batch headers after that entry are all below it (read, not assumed: before the final entry
written at roll, a broker left its newest batches unindexed).  An index that is absent, cannot be read
or whose keys do not strictly increase is not used to skip anything: reading starts at byte 0.
"""

from __future__ import annotations

from itertools import islice
from operator import lt
from typing import Any, Iterator

from kseg.errors import KsegError
from kseg.format import indexes as fmt_indexes
from kseg.limits import INT64_MIN
from kseg.storage import files
from kseg.storage.partition import Segment
from kseg.storage.ranges import Ranges
from kseg.storage.records import FileRecords


def start_position(seg: Segment, log: str, offsets: Any, ranges: Ranges, limit: int) -> int | None:
    """Where reading ``seg`` (its ``.log`` at ``log``, its used offset-index entries ``offsets`` from
    :func:`index`) may start for ``ranges`` (0 without an index); None: nothing in this segment."""
    position = 0
    if ranges.from_offset > seg.base_offset:
        position = floor(offsets, ranges.from_offset)
    if ranges.from_time != INT64_MIN:
        times = index(seg.timeindex, fmt_indexes.TimeIndexView, seg.base_offset, seg)
        if times is not None and times.entries:
            last = times.last_entry()
            if last.timestamp < ranges.from_time:
                # every record up to the last entry is older; the batches after it are read to be sure
                tail = max_timestamp_from(log, floor(offsets, last.offset), limit, seg)
                if tail is not None and tail < ranges.from_time:
                    return None
            # TimeIndex.lookup of the last entry older than the start: every record up to its offset is older
            position = max(position, floor(offsets, times.lookup(ranges.from_time - 1).offset))
    return position


def max_timestamp_from(log: str, position: int, limit: int, seg: Segment) -> int | None:
    """The largest batch max timestamp from ``position`` to the end (headers only); None if unreadable."""
    best = INT64_MIN
    try:
        with FileRecords(log, window=1 << 16, store=seg.store) as records:
            for batch in records.batches(position):
                best = max(best, batch.max_timestamp)
    except KsegError:
        return None
    return best


def index(path: str | None, view_cls: Any, base_offset: int, seg: Segment) -> Any:
    """The used entries of an index (a preallocated zero tail cut off), or None when it is absent,
    cannot be read, or its keys do not strictly increase (then it is not used to skip anything)."""
    if not path:
        return None
    try:
        whole = view_cls(files.open_index(path, store=seg.store), base_offset)
        view = whole.limited(whole.used_entries())
        increasing = all(map(lt, _keys(view), islice(_keys(view), 1, None)))
    except KsegError:
        return None
    return view if increasing else None


def offset_index(seg: Segment) -> Any:
    """:func:`index` of ``seg``'s ``.index``."""
    return index(seg.index, fmt_indexes.OffsetIndexView, seg.base_offset, seg)


def _keys(view: Any) -> Iterator[int]:
    """An index's search keys in file order, a window at a time: offsets (``.index``) or timestamps."""
    if isinstance(view, fmt_indexes.OffsetIndexView):
        keys: Iterator[int] = view.iter_offsets(view.entries)
        return keys
    return map(view.key, range(view.entries))


def floor(offsets: Any, offset: int) -> int:
    """``OffsetIndex.lookup``'s position for ``offset`` (0 without a usable index)."""
    if offsets is None:
        return 0
    position: int = offsets.lookup(offset).position
    return position
