"""Searching partitions for the records a :class:`~kseg.ops.grep.query.Query` matches, reading only what
it must, and handing each match to a sink as it is read.

Per partition, in offset order: a segment wholly outside an offset range is not opened (its name and
the next one's, :mod:`kseg.storage.ranges`); in the others reading starts where the offset and time
indexes say (:mod:`kseg.storage.starts`).  Batches come from the reader's scan (``FileRecords.scan``,
the compiled engine's frame reader: header tuples and CRC verdicts, no object a batch); a batch whose
header rules it out (offsets, largest timestamp, producer id, transactional and control attributes) is
skipped without decompressing, and an uncompressed one not holding the query's literal bytes (the key,
header names) without decoding.  The others' records are decoded by the record decoder (the engine's
``decode_records``) and tested one by one.  Reading a partition stops at the first batch past an
offset range, and the whole search at ``limit`` matches.

What cannot be read is never "no match": a broken length stops the segment (a :class:`Unread`, the
rest of it not read), a partial batch at its end is one, a batch failing its CRC is one too (its
records are searched as read), a batch whose records do not decode is one and the next batch is read.
An I/O error (permission, EIO, a file that vanished or shrank) raises
:class:`~kseg.errors.InputError`: the partition is not searched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import repeat
from operator import add, and_, itemgetter
from typing import Any, Iterator, NamedTuple

from kseg.errors import InputError, KsegError
from kseg.format import v2
from kseg.format.v2_records import SPANS, span_slice
from kseg.limits import INT64_MIN
from kseg.ops.grep.bytesearch import finder, holds, stream_holds
from kseg.ops.grep.query import Query
from kseg.storage import files, starts
from kseg.storage.checkpoints import topic_partition
from kseg.storage.partition import Partition, Segment
from kseg.storage.ranges import BEFORE, LAST, PAST, Ranges, past_by_name, place, segment_may_hold
from kseg.storage.records import FileRecords
from kseg.valueclass import Protocol

_VALID, _HEAD = itemgetter(3), itemgetter(2)  # a scan item's CRC verdict and header tuple
_ATTRIBUTES, _BASE, _DELTA = (itemgetter(v2.ATTRIBUTES), itemgetter(v2.BASE_OFFSET), itemgetter(v2.LAST_OFFSET_DELTA))


class Where(NamedTuple):
    """The place of a match: its partition and segment, and the position of its batch in the ``.log``."""

    partition: Partition
    segment: Segment
    position: int


class Unread(NamedTuple):
    """Bytes not searched, or searched as read though damaged: ``kind`` ``corrupt-batch`` (the rest of the
    segment from ``position`` not read), ``partial-batch`` (the bytes after the last whole batch),
    ``records`` (a batch whose records do not decode: the rest of it not read), ``crc`` (a batch failing
    its CRC, its records searched as they are)."""

    log: str
    position: int
    kind: str
    message: str

    @property
    def read_past(self) -> bool:
        """Whether the records were searched anyway (a CRC mismatch): not data left unread."""
        return self.kind == "crc"


class Step(NamedTuple):
    """A step of a partition's search: a segment to read, or (``segment`` None) ``skipped`` segments not
    opened, ruled out by their names."""

    skipped: int
    segment: Segment | None


def plan(part: Partition, ranges: Ranges) -> list[Step]:
    """The steps of searching ``part`` in offset order: a segment wholly outside the offset range is not
    opened (its name and the next one's), and none after one whose name is past the range's end."""
    logs = [seg for seg in part.segments if seg.log]
    steps = []
    for i, seg in enumerate(logs):
        later = logs[i + 1].base_offset if i + 1 < len(logs) else None
        if not segment_may_hold(seg.base_offset, later, ranges):
            steps.append(Step(1, None))
        elif past_by_name(logs[i - 1].base_offset if i else None, ranges):
            steps.append(Step(len(logs) - i, None))
            break
        else:
            steps.append(Step(0, seg))
    return steps


class MatchSink(Protocol):
    """Where matches go as they are read (``kseg.render.grep``).  ``rec``: a v2 record as the record
    decoder hands it out (offset, timestamp, sequence, key, value, headers; key and value slices of the
    batch's bytes, valid only during the call), or a v0/v1 :class:`~kseg.format.legacy.LegacyRecord`."""

    def match(self, where: Where, batch: Any, rec: Any) -> None: ...

    def unread(self, where: Where, problem: Unread) -> None: ...


@dataclass
class Searched:
    """What the search of one partition read and found."""

    partition: Partition
    matches: int = 0
    segments: int = 0  # segments opened
    skipped: int = 0  # segments not opened (outside the offset range) or left at their indexes (time range)
    batches: int = 0  # batches whose records were decoded
    unread: list[Unread] = field(default_factory=list)


class Budget:
    """``--limit N``: the matches left to print, across partitions (None: no limit)."""

    def __init__(self, limit: int | None) -> None:
        self.left = limit

    def take(self, n: int = 1) -> None:
        if self.left is not None:
            self.left -= n

    @property
    def spent(self) -> bool:
        return self.left is not None and self.left <= 0


class Searcher:
    """Search partitions for ``query``'s matches, each handed to ``sink`` as read; ``limit``: the most
    bytes one batch may decompress to; ``budget``: the matches left to find."""

    def __init__(self, query: Query, sink: MatchSink, limit: int, budget: Budget) -> None:
        self.query = query
        self.sink = sink
        self.limit = limit
        self.budget = budget
        self.literals = query.literals
        self._hits: list[int] = []  # each literal's next occurrence in the scan's list of batches (_lacks)
        self._list_end = 0

    def partition(self, part: Partition) -> Searched:
        """Search one partition; :class:`InputError` (placed at its file) when a file cannot be read."""
        result = Searched(part)
        for step in plan(part, self.query.ranges):
            if self.budget.spent:
                break
            if step.segment is None:
                result.skipped += step.skipped
            elif not self.segments(part, [step.segment], result):
                break
        return result

    def segments(self, part: Partition, segments: list[Segment], result: Searched) -> bool:
        """Search ``segments`` of ``part`` in order (steps of its :func:`plan` to read), adding to ``result``;
        False when no later segment of the partition can hold a match (an offset range's end was read, or
        the budget is spent)."""
        for seg in segments:
            if self.budget.spent or not self._segment(Where(part, seg, 0), result):
                return False
        return True

    def _segment(self, where: Where, result: Searched) -> bool:
        """Search one segment from where its indexes say; False when no later segment can hold a match."""
        seg, query = where.segment, self.query
        log = seg.log
        assert log is not None
        ranges = query.ranges
        offsets = starts.offset_index(seg) if ranges.from_offset > seg.base_offset or ranges.by_time else None
        start = starts.start_position(seg, log, offsets, ranges, self.limit)
        if start is None:
            result.skipped += 1
            return True
        result.segments += 1
        with FileRecords(log, store=seg.store) as records:  # InputError: the partition is not searched
            pos = start
            try:
                for items in records.scan(start):
                    self._hits = [-1] * len(self.literals)  # a list's batches lie in one window
                    self._list_end = items[-1][0] + items[-1][1]
                    if self.literals and self._list_lacks(records, items):
                        pos = self._list_end
                        continue
                    for position, size, h, valid in items:
                        pos = position + size
                        go_on = self._item(records, where, result, position, size, h, valid)
                        if go_on is not None:
                            return go_on
            except InputError as exc:
                raise exc.at(files.display(log, store=seg.store)) from None
            except KsegError as exc:
                at = exc.position if exc.position is not None else pos
                self._unread(where, result, Unread(log, at, "corrupt-batch", f"{exc.message}; the rest not read"))
                return True
            if pos < records.size:
                self._unread(
                    where,
                    result,
                    Unread(log, pos, "partial-batch", f"{records.size - pos} bytes after the last whole batch"),
                )
        return True

    def _item(
        self, records: FileRecords, where: Where, result: Searched, position: int, size: int, h: Any, valid: Any
    ) -> bool | None:
        """One item of the scan; None: read on; else stop this segment (True: the next one may match).
        A batch failing its CRC is said whether or not its header rules it out (the header may be what
        is damaged)."""
        query = self.query
        if h is None:  # a batch object: legacy, or larger than the window
            batch = valid
            where = where._replace(position=position)
            if not batch.is_valid():
                self._unread(where, result, _crc(where.segment.log, batch))
            verdict = place(batch, query.ranges)
            if verdict == PAST:
                return False
            may = query.legacy_may_match() if batch.magic < 2 else query.batch_may_match(batch.h)
            if verdict == BEFORE or not may or not self._holds_literals(batch):
                return None
        else:
            if not valid:
                where = where._replace(position=position)
                self._unread(where, result, _crc(where.segment.log, records.frame_at(position, records.end)))
            last = v2.last_offset(h[v2.BASE_OFFSET], h[v2.LAST_OFFSET_DELTA])
            if last < query.ranges.from_offset:
                return None
            if h[v2.BASE_OFFSET] > query.ranges.to_offset:
                return False
            if not query.batch_may_match(h):
                return None
            if self.literals and not h[v2.ATTRIBUTES] & v2.CODEC_MASK and self._lacks(records, position, size):
                return None if last < query.ranges.to_offset else False
            batch = records.frame_at(position, records.end)
            where = where._replace(position=position)
            verdict = LAST if last >= query.ranges.to_offset else 0
        self._records(where, batch, result)
        if self.budget.spent:
            return False
        return False if verdict == LAST else None

    def _list_lacks(self, records: FileRecords, items: list) -> bool:
        """Whether every batch of the scan's list ``items`` is one :meth:`_item` would skip for lacking a
        literal, decided for the list at once (no Python work a batch): all whole v2 batches in the window,
        uncompressed, passing their CRC, none at or past ``--to-offset``'s end (where reading stops), and
        one of the query's literals in none of their bytes.  Otherwise each literal's first occurrence in
        the list is kept for :meth:`_lacks` (the list's end when there is none) and False returned."""
        if items[-1][2] is None or not all(map(_VALID, items)):
            return False
        heads = list(map(_HEAD, items))
        if any(map(and_, map(_ATTRIBUTES, heads), repeat(v2.CODEC_MASK))):
            return False
        to_offset = self.query.ranges.to_offset
        bases = list(map(_BASE, heads))
        lasts = list(map(add, bases, map(_DELTA, heads)))  # lastOffset, when it does not overflow
        if max(bases) > to_offset or max(lasts) >= to_offset or min(lasts) < INT64_MIN:
            return False
        first = items[0][0]
        view, i = records.window(first, self._list_end - first)
        find = finder(view)
        if find is None:
            return False
        base = first - i  # the file position of the buffer's first byte
        end = self._list_end - base
        hits = self._hits
        for n, literal in enumerate(self.literals):
            j = find(literal, i, end)
            if j < 0:
                return True
            hits[n] = base + j
        return False

    def _lacks(self, records: FileRecords, position: int, size: int) -> bool:
        """Whether the uncompressed batch at ``position`` lacks one of the query's literal bytes, searched in
        place in the reader's window: each literal's next occurrence is found once for the scan's list of
        batches (``_hits``, file positions; the list's end when there is none), not once a batch."""
        view, i = records.window(position, size)  # in the window already: the scan's list lies in it
        find = finder(view)
        if find is None:
            return False
        base = position - i  # the file position of the buffer's first byte
        end = position + size
        for n, literal in enumerate(self.literals):
            hit = self._hits[n]
            if hit < position:  # not searched yet, or last seen before this batch: search on from here
                j = find(literal, i, self._list_end - base)
                hit = self._hits[n] = self._list_end if j < 0 else base + j
            if hit + len(literal) > end:
                return True
        return False

    def _holds_literals(self, batch: Any) -> bool:
        """False when ``batch`` (a batch object) is uncompressed, in the reader's window, and lacks one of the
        query's literal bytes (then no record of it matches); True otherwise (its records are read)."""
        if not self.literals or batch.buf is None or batch.codec != 0:
            return True
        return holds(batch.buf, batch.i, batch.i + batch.size, self.literals)

    def _records(self, where: Where, batch: Any, result: Searched) -> None:
        matches, budget = self.query.record_matches, self.budget
        result.batches += 1
        try:
            if batch.magic >= 2 and not batch.is_control:
                for rec in self._candidates(batch):
                    if matches(rec[0], rec[1], rec[3], rec[4], rec[5]):
                        self._found(where, batch, rec, result)
                        if budget.spent:
                            return
                return
            legacy = batch.magic < 2
            for rec in batch.records(self.limit):
                key, value = rec.key, rec.value
                if matches(rec.offset, rec.timestamp, key, value, () if legacy else rec.headers):
                    self._found(where, batch, rec, result)
                    if budget.spent:
                        return
        except InputError:
            raise
        except KsegError as exc:
            at = exc.position if exc.position is not None else batch.position
            message = f"batch at offset {batch.base_offset}: {exc.message}; its other records not read"
            self._unread(where, result, Unread(where.segment.log or "", at, "records", message))

    def _candidates(self, batch: Any) -> Iterator[tuple]:
        """The records of a v2 data batch that may match (offset, timestamp, sequence, key, value, headers;
        key and value slices).  A compressed batch is first decompressed, a piece at a time, and searched for
        the query's literal bytes (:func:`~kseg.ops.grep.bytesearch.stream_holds`): lacking one, none of its
        records is decoded (as an uncompressed batch lacking one is passed over, :meth:`_lacks`).  Else its
        records come a decompressed piece at a time with their key and value as spans in it (the record
        decoder's ``SPANS``): a piece lacking a literal is left without a slice made or a record tested."""
        literals = self.literals
        if not literals or not batch.codec:
            for chunk in batch.record_chunks(self.limit):
                yield from chunk
            return
        if not stream_holds(batch.decompressed_pieces(self.limit), literals):
            return
        for buf, chunk, _ in batch.form_chunks(self.limit, SPANS):
            data = buf if isinstance(buf, (bytes, bytearray)) else bytes(buf)
            if any(data.find(literal) < 0 for literal in literals):
                continue
            mv = memoryview(data)
            for o, ts, seq, k, v, hs in chunk:
                yield o, ts, seq, span_slice(mv, k), span_slice(mv, v), hs

    def _found(self, where: Where, batch: Any, rec: Any, result: Searched) -> None:
        result.matches += 1
        self.budget.take()
        self.sink.match(where, batch, rec)

    def _unread(self, where: Where, result: Searched, problem: Unread) -> None:
        result.unread.append(problem)
        self.sink.unread(where, problem)


def of_topics(partitions: list[Partition], topics: tuple[str, ...]) -> list[Partition]:
    """The partitions of ``topics`` by their directory's name (all when none is given); one that could
    not be listed is kept (its error is the run's)."""
    if not topics:
        return partitions
    wanted = set(topics)
    kept = []
    for part in partitions:
        tp = topic_partition(part.name)
        if part.error is not None or (tp is not None and tp[0] in wanted):
            kept.append(part)
    return kept


def _crc(log: str | None, batch: Any) -> Unread:
    return Unread(
        log or "",
        batch.position,
        "crc",
        f"{batch.crc_mismatch()}; its records searched as read",
    )
