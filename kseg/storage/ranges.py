"""Offset and time ranges over a partition's records: which batches, segments and records they select.

The rule, written once for every reader that selects records by offset or time (``export``, the
Spark data source, the lookups): a range selects *records*, never batches.  A batch's header says
which offsets it may hold without opening it, with one exception that decides everything here:

* a v2 batch holds ``baseOffset..lastOffset`` (its header's fields);
* an uncompressed v0/v1 entry is one record, at its offset;
* a compressed v0/v1 *wrapper* carries the offset of its **last** inner record
  (``AbstractLegacyRecordBatch.lastOffset`` is the wrapper's offset; ``baseOffset`` needs the inner
  records, ``iterator().next().offset()``): its records lie anywhere below that offset down to the
  previous batch's last offset + 1.  So a wrapper whose offset is past the end of a range may still
  hold records inside it: it is opened and its inner records filtered, and only the batches after it
  are past the range.  For the same reason a segment a follower wrote for v0/v1 data may be named by
  its first wrapper's last offset (``LogAppendInfo.firstOrLastOffsetOfFirstBatch``), holding records
  below its name: the first segment named past the end of a range is read up to its first batch.

Offsets grow in file order (a partition's invariant), so reading in file order stops at the first
batch wholly past the range; timestamps do not, so a time range skips a batch only by its header's
largest timestamp (a v2 batch's ``maxTimestamp``; a v0/v1 entry is always opened) and filters each
record.  Offsets are inclusive at both ends; a time range is half-open, ``[from, to)``, like
ListOffsets.
"""

from __future__ import annotations

from dataclasses import dataclass

from kseg.limits import INT64_MAX, INT64_MIN
from kseg.storage.batch import FileBatch, LegacyBatch

#: :func:`place`'s answers for a batch read in file order.
BEFORE = 0  # holds no record in range: read on
INSIDE = 1  # may hold records in range: open it, keep those :meth:`Ranges.holds` says
LAST = 2  # may hold records in range, and no batch after it does: open it, then stop
PAST = 3  # neither it nor any batch after it holds a record in range: stop


@dataclass(frozen=True)
class Ranges:
    """What to select: offsets ``from_offset..to_offset`` (inclusive) and times ``[from_time, to_time)``."""

    from_offset: int = INT64_MIN
    to_offset: int = INT64_MAX
    from_time: int = INT64_MIN
    to_time: int = INT64_MAX

    @property
    def by_time(self) -> bool:
        return self.from_time != INT64_MIN or self.to_time != INT64_MAX

    @property
    def by_offset(self) -> bool:
        return self.from_offset != INT64_MIN or self.to_offset != INT64_MAX

    def holds(self, offset: int, timestamp: int) -> bool:
        """Whether a record at ``offset`` with ``timestamp`` is selected."""
        return self.from_offset <= offset <= self.to_offset and self.from_time <= timestamp < self.to_time


def first_offset_known(batch: FileBatch) -> bool:
    """Whether ``batch.base_offset`` is the offset of its first record without opening it: false only for
    a compressed v0/v1 wrapper, whose offset is its last inner record's (module docstring)."""
    return not isinstance(batch, LegacyBatch) or batch.codec == 0


def place(batch: FileBatch, ranges: Ranges) -> int:
    """Where ``batch`` (a :class:`~kseg.storage.batch.FileBatch`, read in file order) stands against
    ``ranges``, from its header: :data:`BEFORE`, :data:`INSIDE`, :data:`LAST` or :data:`PAST`."""
    if batch.last_offset < ranges.from_offset:
        return BEFORE
    if batch.base_offset > ranges.to_offset:
        return PAST if first_offset_known(batch) else LAST
    if batch.magic >= 2 and ranges.by_time and batch.max_timestamp < ranges.from_time:
        return BEFORE
    return INSIDE


def segment_may_hold(base_offset: int, next_base_offset: int | None, ranges: Ranges) -> bool:
    """Whether a segment named ``base_offset`` (the next one named ``next_base_offset``, None for the last)
    may hold offsets in ``ranges``, from names alone.  Records below a segment's name are only those of a
    v0/v1 wrapper opening it, all above the previous segment's: a segment is below the range when the
    next one is named at or below ``from_offset``; past it when the segment *before* it is already
    (:func:`past_by_name`)."""
    return next_base_offset is None or next_base_offset > ranges.from_offset


def past_by_name(previous_base_offset: int | None, ranges: Ranges) -> bool:
    """Whether a segment is wholly past ``ranges`` from names: the segment before it is named past the
    range's end (its own name may be its first v0/v1 wrapper's *last* offset, module docstring)."""
    return previous_base_offset is not None and previous_base_offset > ranges.to_offset


#: No bound: every record.
EVERYTHING = Ranges()
