"""The ``.index`` and ``.timeindex`` checks of ``verify-index``, against one pass over the log: what
the two share (reading the files, the zero tail, the records of one batch); each kind's entry rules are in
:mod:`kseg.ops.verify.offset_index` and :mod:`kseg.ops.verify.time_index`.

Two levels (``docs/verify-index.md``, "Which rule applies"):

* **Lookup rule** (default).  An entry is right when Kafka's lookups through
  it are right.  ``OffsetIndex.lookup(t)`` gives the position of the largest
  entry whose offset is <= ``t``; ``FileRecords.searchForOffsetWithSize``
  scans forward from it for the first batch whose last offset is >= ``t``.
  So an offset-index entry (``X``, ``P``) needs a batch starting at ``P``
  whose base offset is <= ``X``, with ``X`` an offset inside a batch at or
  after ``P``.  ``TimeIndex.lookup(ts)`` gives the largest entry whose
  timestamp is <= ``ts``; ``LogSegment.findOffsetByTimestamp`` scans from
  the offset-index position of that entry's offset for the first record
  whose timestamp is >= ``ts``.  So a time-index entry (``T``, ``O``) needs
  ``O`` inside a batch of the segment, ``T`` the largest timestamp up to and
  including that batch, and timestamps strictly increasing.
* **Kafka's ``--verify-index-only``** (``DumpLogSegments.dumpIndex`` /
  ``dumpTimeIndex``, ``--strict``): an offset-index entry names the last
  offset of the batch at its position; a time-index entry names the last
  offset of a batch whose largest *record* timestamp is the entry's.

Healthy files that pass the first and not the second, each a writer rule of
some Kafka version (noted by default, reported with ``--strict``):

* entries naming the last offset of a multi-batch append at its start
  position (``LogSegment.append`` before KAFKA-806: follower fetches,
  uncompressed v0/v1 produce requests, the log cleaner's appends);
* entries naming the largest retained offset of a batch the log cleaner
  rewrote (``MemoryRecords.filterTo``: ``FilterResult.maxOffset`` is the
  largest *kept* record's offset, while ``overrideLastOffset`` keeps the
  batch's original last offset);
* time-index entries naming the record that holds the largest timestamp
  (``LogValidator.assignOffsetsNonCompressed`` on branches 0.11.0-3.6, for
  uncompressed CreateTime appends; 3.7 names the batch's last offset, commit
  e905ef1 "Small LogValidator clean ups", kept by KAFKA-16310 in 3.8).

A preallocated zero tail (an active segment's index after a crash or copied
from a live broker; also a file that is all zeros) is noted, not checked.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from operator import lt
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple, Sequence, TypeVar

from kseg.errors import CorruptIndexError, InputError, KsegError
from kseg.format.indexes import IndexView, OffsetIndexView, TimeIndexView
from kseg.format.legacy import LegacyRecord
from kseg.format.v2_records import Record
from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE, INT64_MAX, decompression_limit
from kseg.ops.verify.holding import holding_all
from kseg.ops.verify.result import IndexFiles, LogScan, PastEnd, SegmentResult
from kseg.storage import files
from kseg.storage.batch import LegacyBatch, V2Batch
from kseg.storage.records import FileRecords

if TYPE_CHECKING:  # pragma: no cover
    from kseg.storage.context import Store
    from kseg.storage.files import ReadFile
    from kseg.storage.partition import OpenSegment, Segment

RECORD_LIMIT = decompression_limit(DEFAULT_MAX_MESSAGE_SIZE)  # the largest batch whose records --strict reads
BULK = 4096  # index entries checked together by the bulk checks (their memory: a few of these)
View = TypeVar("View", OffsetIndexView, TimeIndexView)


def read_indexes(seg: "Segment", opened: "OpenSegment | None" = None) -> IndexFiles:
    """Read ``seg``'s ``.index`` and ``.timeindex`` once (errors are kept for :func:`load_index` to report),
    from the files ``opened`` holds when given (:meth:`Segment.open <kseg.storage.partition.Segment.open>`)."""
    return IndexFiles(
        _open(seg.index, OffsetIndexView, seg, None if opened is None else opened.offset_index),
        _open(seg.timeindex, TimeIndexView, seg, None if opened is None else opened.time_index),
    )


def _open(
    path: str | None, view_cls: type[View], seg: "Segment", f: "ReadFile | KsegError | None"
) -> View | InputError | None:
    if not path:
        return None
    try:
        if isinstance(f, KsegError):
            raise f
        data = files.open_index(path, store=seg.store) if f is None else files.index_from(path, f)
        return view_cls(data, seg.base_offset, path)
    except InputError as exc:
        return exc


def load_index(res: SegmentResult, loaded: View | InputError | None) -> View | None:
    """The index file's view (from :func:`read_indexes`), after the broker's start-up sanity check;
    None if it could not be read (the segment is then failed, never clean) or there is none."""
    if loaded is None:
        return None
    if isinstance(loaded, InputError):
        res.fail(loaded.describe())
        return None
    view = loaded
    try:
        view.sanity_check()
    except CorruptIndexError as exc:
        if not zero_tail(view):
            res.problem("sanity", view.path, f"fails the broker's start-up sanity check: {exc.message}")
    return view


def zero_tail(view: IndexView, *, whole_file: bool = True) -> int:
    """Entries of a preallocated zero tail, or 0.

    The tail starts at the first entry after entry 0 whose bytes are all zero
    (its offset is then the base offset: Kafka's tool stops there).  A file
    of more than one entry that is all zeros is a tail from entry 0 when
    ``whole_file`` (an active segment's index with no entry yet: Kafka never
    writes an offset-index entry at position 0, as an entry needs more than
    ``index.interval.bytes`` before it); ``DumpLogSegments`` still checks its
    entry 0, so ``--strict`` passes ``whole_file=False``.
    """
    if whole_file and view.entries > 1 and view.all_zero():
        return view.entries
    return view.zero_tail()


def used_entries(res: SegmentResult, view: IndexView, path: str, strict: bool) -> int:
    """The entries to check (those before a zero tail), noting the tail."""
    tail = zero_tail(view)
    if tail:
        res.notes.append(
            f"{path}: preallocated zero tail of {tail} entries (an active segment's index, "
            "as after a crash, or a rolled segment's left untrimmed, KAFKA-10207); the broker "
            "rebuilds it on recovery"
        )
    if view.length % view.entry_size:
        res.problem(
            "index-length",
            path,
            "file length is not a multiple of the entry size",
            expected=f"a multiple of {view.entry_size}",
            found=str(view.length),
        )
    if strict and tail == view.entries:
        return view.entries - zero_tail(view, whole_file=False)
    return view.entries - tail


def increasing(values: Sequence[int]) -> bool:
    """Whether ``values`` strictly increase (a C loop)."""
    return all(map(lt, values, values[1:]))


def batch_holding(scan: LogScan, offset: int, start: int, ordered: bool) -> int:
    """The first batch from ``start`` whose offsets (base..last) hold ``offset``, or -1.  On a log out of
    order the entry checks ask :func:`kseg.ops.verify.holding.holding_all` for every entry at once instead
    (:meth:`EntryCheck.held_by`); the scan here is its definition (and the tests' oracle)."""
    if ordered:
        k = bisect_left(scan.last_offsets, offset, start)
        if k < len(scan.last_offsets) and scan.base_offsets[k] <= offset:
            return k
        return -1
    for k in range(start, len(scan.last_offsets)):
        if scan.base_offsets[k] <= offset <= scan.last_offsets[k]:
            return k
    return -1


class Records:
    """The log's records, opened when an entry's check first needs them (``--strict``, an entry inside a
    batch) and closed once by :meth:`close`."""

    def __init__(self, path: str, store: Store) -> None:
        self.path, self.store = path, store
        self.reader: FileRecords | None = None

    def batch_records(self, position: int) -> Iterator[Record | LegacyRecord]:
        """The records of the batch at ``position`` (read up to ``RECORD_LIMIT``); a batch whose records cannot
        be read ends them (its own problems are reported by the log scan)."""
        if self.reader is None:
            self.reader = FileRecords(self.path, store=self.store)
        batch = self.reader.batch_at(position)
        if not isinstance(batch, (V2Batch, LegacyBatch)):  # None: the log pass found a whole batch here
            raise InputError(
                "the batch is no longer whole: the file shrank while it was read", path=self.path, position=position
            )
        try:
            yield from batch.records(RECORD_LIMIT)
        except KsegError:
            return

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()

    def max_timestamp(self, position: int) -> int:
        """The largest record timestamp of the batch at ``position``, as Kafka's dumpTimeIndex computes it."""
        best = -1  # as Kafka's tool starts it: a batch of records older than -1 says -1
        for rec in self.batch_records(position):
            best = max(best, rec.timestamp)
        return best

    def stats(self, position: int, offset: int) -> RecordStats:
        """Read the batch at ``position`` up to ``offset`` and one record past it."""
        ts_at: int | None = None
        best, after = -1, False
        for rec in self.batch_records(position):
            if rec.offset > offset:
                after = True
                break
            if rec.offset == offset:
                ts_at = rec.timestamp
            elif ts_at is None:
                best = max(best, rec.timestamp)
        return RecordStats(ts_at is not None and not after, ts_at, ts_at is not None and best < ts_at)


class EntryCheck:
    """The entry-by-entry check of one index file (one its bulk check did not pass): :meth:`entry` for each
    used entry in file order, then :meth:`finish` (its rows past the log's end, its notes, returned)."""

    entry_size: int  # bytes an entry: entry n is at byte n * entry_size

    def __init__(self, res: SegmentResult, path: str, scan: LogScan, strict: bool, records: Records) -> None:
        self.res, self.path, self.scan, self.strict, self.records = res, path, scan, strict, records
        self.ordered = scan.ordered  # of the whole log: the scan may hold only the batches the indexes ask about
        self.past = PastEnd()
        self.held: array | None = None  # entry -> its batch_holding answer (-1: none), on a log out of order

    def query(self, key: int, value: int) -> tuple[int, int] | None:  # pragma: no cover - each kind defines it
        """The (offset, start) :meth:`held_by` may ask for the entry (``key``, ``value``), or None."""
        raise NotImplementedError

    def answer_all(self, view: Any, n: int) -> None:
        """On a log out of order, answer every entry's :meth:`held_by` question in one sweep
        (:mod:`kseg.ops.verify.holding`) before the entry loop: the questions and answers in int64 arrays
        (no Python object an entry)."""
        if self.ordered:
            return
        asked, offsets, starts = array("q"), array("q"), array("q")
        for i in range(n):
            q = self.query(*view.entry(i))
            if q is not None and q[0] <= INT64_MAX:  # (no batch holds an offset past int64: -1, as not asked)
                asked.append(i)
                offsets.append(q[0])
                starts.append(q[1])
        self.held = array("q", [-1]) * n
        for i, k in zip(asked, holding_all(self.scan, offsets, starts), strict=True):
            self.held[i] = k

    def held_by(self, i: int, offset: int, start: int) -> int:
        """The first batch from ``start`` whose offsets hold ``offset`` (entry ``i``'s :meth:`query`), or -1."""
        if self.held is None:
            return batch_holding(self.scan, offset, start, self.ordered)
        return self.held[i]

    def problem(self, kind: str, message: str, i: int, expected: str, found: object) -> None:
        self.res.entry_problem(kind, self.path, message, i, self.entry_size, expected, found)

    @staticmethod
    def all_right(view: Any, n: int, scan: LogScan, strict: bool) -> bool:  # pragma: no cover - each kind's
        """Whether the first ``n`` entries of ``view`` are all right, checked in bulk (a current broker's file)."""
        raise NotImplementedError

    def entry(self, i: int, key: int, value: int) -> None:  # pragma: no cover - each kind defines it
        raise NotImplementedError

    def finish(self) -> list[str]:  # pragma: no cover - each kind defines it
        raise NotImplementedError


def check_entries(
    res: SegmentResult,
    seg: "Segment",
    scan: LogScan,
    strict: bool,
    loaded: View | InputError | None,
    kind: type[EntryCheck],
) -> list[str]:
    """One index file (``loaded``, from :func:`read_indexes`): the start-up sanity check, the zero tail,
    then ``kind.all_right`` (every entry is right: nothing to report) or ``kind``'s entry loop; returns
    the older-writer-rule notes added."""
    view = load_index(res, loaded)
    if view is None:
        return []
    path = view.path or ""  # read_indexes names every view
    n = used_entries(res, view, path, strict)
    if kind.all_right(view, n, scan, strict):
        return []
    entries = kind(res, path, scan, strict, Records(seg.log or "", seg.store))
    entries.answer_all(view, n)
    try:
        for i in range(n):
            entries.entry(i, *view.entry(i))
    finally:
        entries.records.close()
    return entries.finish()


class RecordStats(NamedTuple):
    """What the records of one batch say about an offset inside it."""

    is_last_record: bool  # the offset is that of the batch's last record
    timestamp_at: int | None  # the timestamp of the record at the offset, None if no such record
    first_at_max: bool  # no earlier record of the batch has a timestamp >= that one
