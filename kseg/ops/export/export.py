"""Records out of segments, for export and Spark: splits, ranges, and the records in them.

A *split* is a byte range of one segment's ``.log`` that one task reads: a
small segment is one split; a large one is cut at batch boundaries taken
from its offset index (each entry's position is the start of a batch, the
``OffsetIndex`` invariant), each cut checked by reading the batch header
there, so a damaged index can only make splits larger, never start a task
in the middle of a batch.  Planning is two steps: :func:`units` from a
listing alone (names and sizes: what a Spark driver does), and
:func:`unit_splits` per unit (index reads, range seeks and the band's cut:
what a task does); each ``split_bytes`` band's cut is found on its own, so
tasks need not agree on anything but the listing.

Offset and time ranges skip what is not asked for along the read paths of
the lookups (:mod:`kseg.ops.lookup.offset`): a segment wholly outside an offset
range is not opened; inside one, reading starts at the offset index's floor
entry (``OffsetIndex.lookup``); for a start time, at the last time-index
entry whose timestamp is below it (every record before that entry's offset
is older: ``TimeIndex`` entries hold the largest timestamp so far), and a
segment is skipped when its last entry and the batch headers after that
entry are all below it (read, not assumed: before the final entry written
at roll, a broker left its newest batches unindexed).  Records are then
filtered exactly: offsets are ``from <= offset <= to`` and timestamps
``from <= timestamp < to`` (a time range is half-open, like ListOffsets).

Which batches, segments and records a range selects is :mod:`kseg.storage.ranges`' rule (records, not
batches: a v0/v1 wrapper carries its last offset); reading a split, corrupt batches included, is
:mod:`kseg.ops.export.read`.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Iterator, Mapping, NamedTuple, Sequence

from kseg.errors import InputError, KsegError
from kseg.format import indexes as fmt_indexes
from kseg.limits import INT64_MAX, INT64_MIN  # noqa: F401 - re-exported to the CLI and Spark
from kseg.ops.export.read import Corruption, RecordFacts, Split, read_split, starting  # noqa: F401 - re-exported
from kseg.storage import checkpoints as cp
from kseg.storage.listing import Listed
from kseg.storage.partition import Partition, Segment
from kseg.storage.ranges import EVERYTHING, Ranges, first_offset_known, past_by_name
from kseg.storage.records import FileRecords
from kseg.storage.starts import index as _index
from kseg.storage.starts import start_position as _start_position

if TYPE_CHECKING:
    from kseg.storage.context import Store

DEFAULT_SPLIT_BYTES = 128 << 20
#: ``export --spark --target-file-size``: about this many bytes of Parquet a file (Spark's own default
#: ``spark.sql.files.maxPartitionBytes``, so a reader's task is about one file).
DEFAULT_TARGET_FILE_BYTES = 128 << 20
# what to do with a corrupt batch: mark it with one row, stop, or mark it and keep its records if they decode
ON_CORRUPTION = ("skip", "fail", "keep")


def topic_partition(name: str) -> tuple[str, int | None]:
    """``orders-3`` -> (``orders``, 3), as ``UnifiedLog.parseTopicPartitionName``; else (name, None)."""
    tp = cp.topic_partition(name)
    return (name, None) if tp is None else tp


def select_topics(partitions: list, topics: Sequence[str]) -> list:
    """The partitions (or listed partitions) of ``topics`` (all when empty), by the topic their directory
    name gives (:func:`topic_partition`); one that could not be listed is kept (its error is the run's).
    Raises :class:`~kseg.errors.InputError` when topics are asked for and none of their partitions is there."""
    if not topics:
        return partitions
    wanted = set(topics)
    kept = [p for p in partitions if p.error is not None or topic_partition(p.name)[0] in wanted]
    if not any(p.error is None for p in kept):
        shown = ", ".join(sorted(wanted))
        raise InputError(f"no partition of {'topic' if len(wanted) == 1 else 'topics'} {shown} in the inputs")
    return kept


# -- planning ---------------------------------------------------------------------------------------------
class SegmentUnit(NamedTuple):
    """One task's share of one segment, planned from a listing alone (names and sizes: no request):
    the task reads the indexes, finds where ``ranges`` start, and reads the splits that start in band
    ``band`` of ``bands`` (``[band x split_bytes, (band + 1) x split_bytes)`` of the ``.log``)."""

    log_dir: str
    partition: str
    base_offset: int
    log: str
    offset_index: str | None
    time_index: str | None
    log_bytes: int
    band: int
    bands: int
    store: Store  # the segment's, as discovery chose it for its root (made in the task from its share)
    txn_indexes: tuple[str, ...] = ()  # the .txnindex files of this segment and the later ones (aborted)
    since: int = INT64_MIN  # export --since: the partition's first offset not exported before

    @property
    def bytes(self) -> int:
        """The planned size, for packing tasks (:func:`unit_bytes`)."""
        return unit_bytes(self.log_bytes, self.bands)

    def split(self, start: int, end: int | None, size: int) -> Split:
        """The split of this unit's segment reading ``[start, end)`` (``size``: its planned bytes)."""
        name = f"{self.base_offset:020d}"
        return Split(
            self.log_dir, self.partition, name, self.log, start, end, size, self.store, self.txn_indexes, self.since
        )


def unit_bytes(log_bytes: int, bands: int) -> int:
    """A unit's planned size, for packing tasks: its band's share of the listed ``.log``."""
    return max(1, log_bytes // bands)


def units(
    partitions: Sequence[Partition | Listed],
    ranges: Ranges = EVERYTHING,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    since: Mapping[str, int] | None = None,
):
    """The segment units covering ``ranges``, partition by partition, in offset order: segments wholly
    outside an offset range are pruned by their names (a segment's offsets end below the next base
    offset), and a segment is one unit per ``split_bytes`` of its listed size.  No file is opened.
    ``since`` (:func:`partition_key` -> offset): where each partition's reading starts (``--since``:
    applied by the reading, not the pruning, so every planner counts the same units)."""
    for part in partitions:
        segs = part.segments  # a Listed's made again at each call: once a partition
        log_dir, name = part.log_dir, part.name
        start = INT64_MIN if not since else since.get(partition_key(log_dir, name, part.store), INT64_MIN)
        txns = [(seg.base_offset, seg.txnindex) for seg in segs if seg.txnindex]
        for k, band, bands, size in unit_places(segs, ranges, split_bytes):
            seg = segs[k]
            assert seg.log is not None
            later = tuple(path for base, path in txns if base >= seg.base_offset)
            yield SegmentUnit(
                log_dir, name, seg.base_offset, seg.log, seg.index, seg.timeindex, size, band, bands, seg.store, later,
                start,
            )  # fmt: skip


def unit_places(
    segs: Sequence[Segment], ranges: Ranges = EVERYTHING, split_bytes: int = DEFAULT_SPLIT_BYTES
) -> Iterator[tuple[int, int, int, int]]:
    """Where the units of one partition's segments ``segs`` are, in order: ``(k, band, bands, size)`` --
    ``segs[k]``, the unit's band of the segment's ``bands``, the listed ``.log`` size (the pruning and
    bands of :func:`units`, without making a unit: what a Spark driver deals to tasks).  The segments
    kept are consecutive, so a run of them, cut out of the listing, has the same units."""
    logs = [k for k, seg in enumerate(segs) if seg.log]
    for i, k in enumerate(logs):
        seg = segs[k]
        if i + 1 < len(logs) and segs[logs[i + 1]].base_offset <= ranges.from_offset:
            continue  # every offset of this segment is below the range
        if past_by_name(segs[logs[i - 1]].base_offset if i else None, ranges):
            break
        size = seg.log_size()
        # the first segment named past the range is one unit: only a v0/v1 wrapper opening it is read
        bands = 1 if seg.base_offset > ranges.to_offset else max(1, -(-size // split_bytes))
        for band in range(bands):
            yield k, band, bands, size


def unit_splits(
    unit: SegmentUnit, ranges: Ranges = EVERYTHING, split_bytes: int = DEFAULT_SPLIT_BYTES, limit: int = 1 << 26
) -> list[Split]:
    """The splits of ``unit`` (run by the task that reads them): the segment's start for ``ranges``
    (index reads), then the split starting in the unit's band, ending at the next band's cut."""
    ranges = starting(ranges, unit.since)
    seg = Segment(
        unit.base_offset, unit.log, unit.offset_index, unit.time_index, log_bytes=unit.log_bytes, store=unit.store
    )
    if unit.base_offset > ranges.to_offset:  # named past the range: only a v0/v1 wrapper opening it may hold some
        first = _opening_wrapper_end(unit.log, limit, seg.store) if unit.band == 0 else None
        if first is None:
            return []
        return [unit.split(0, first, first)]
    offsets = _index(seg.index, fmt_indexes.OffsetIndexView, seg.base_offset, seg)
    start = _start_position(seg, unit.log, offsets, ranges, limit)
    if start is None:
        return []
    size = unit.log_bytes
    with _Cuts(unit.log, seg.store, offsets, size, split_bytes, limit) as cut:
        lo = cut.at(unit.band)
        if lo is None:
            return []  # no batch starts in this band: the previous band's split reads through it
        hi = next((c for c in map(cut.at, range(unit.band + 1, unit.bands)) if c is not None), None)
    if hi is not None and hi <= start:
        return []
    lo = max(lo, start)
    hi_bytes = size if hi is None else hi
    return [unit.split(lo, hi, hi_bytes - lo)]


def plan(
    partitions: list[Partition],
    ranges: Ranges = EVERYTHING,
    split_bytes: int = DEFAULT_SPLIT_BYTES,
    limit: int = 1 << 26,
    since: Mapping[str, int] | None = None,
) -> list[Split]:
    """The splits that cover what ``ranges`` asks for, partition by partition, in offset order
    (every unit of :func:`units` expanded here; ``--spark`` expands them in the tasks)."""
    planned = units(partitions, ranges, split_bytes, since)
    return [s for u in planned for s in unit_splits(u, ranges, split_bytes, limit)]


def partition_key(log_dir: str, name: str, store: Store) -> str:
    """A partition directory named once, whatever path led to it (an export report's key): an absolute
    local path, or the URI (in the grammar of ``store``, the one holding it)."""
    return store.names.canonical(store.names.join(log_dir, name))


class _Cuts:
    """Where band ``k`` of a segment begins: 0 for the first; else the first offset-index entry at or
    past ``k x split_bytes`` (and inside the band) where a valid batch header is read -- each band's cut
    found on its own, so every task computes the same cuts reading only its own two.  None: no cut."""

    TRIES = 8  # index entries tried in a band before it is read as part of the previous split

    def __init__(self, log: str, store: Store, offsets, size: int, split_bytes: int, limit: int) -> None:
        self.log, self.store, self.offsets, self.size, self.split_bytes = log, store, offsets, size, split_bytes
        self.limit = limit
        self.records: FileRecords | None = None

    def __enter__(self) -> _Cuts:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.records is not None:
            self.records.close()

    def at(self, band: int) -> int | None:
        if band == 0:
            return 0
        if self.offsets is None:
            return None
        low = band * self.split_bytes
        high = min(low + self.split_bytes, self.size)
        view = self.offsets
        first = bisect_left(range(view.entries), low, key=lambda n: view.entry(n).position)
        for n in range(first, min(first + self.TRIES, view.entries)):
            pos = view.entry(n).position
            if not low <= pos < high:
                return None
            if self.records is None:
                self.records = FileRecords(self.log, window=1 << 16, store=self.store)
            if _batch_starts_at(self.records, pos, self.limit):
                return pos
        return None


def _opening_wrapper_end(log: str, limit: int, store: Store) -> int | None:
    """The end of the segment's first batch when it is a compressed v0/v1 wrapper (its records may lie
    below the segment's name: :mod:`kseg.storage.ranges`), else None; a batch that cannot be framed is
    left to nobody (None): the segment is past the range by name."""
    try:
        with FileRecords(log, window=1 << 16, store=store) as records:
            batch = records.batch_at(0, max_size=limit)
            if batch is None or first_offset_known(batch):
                return None
            end: int = batch.size
            return end
    except KsegError:
        return None


def _batch_starts_at(records: FileRecords, position: int, limit: int) -> bool:
    try:
        batch = records.batch_at(position, max_size=limit)
        return batch is not None and batch.is_valid()
    except KsegError:
        return False
