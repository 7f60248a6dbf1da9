"""Kafka's recovery of one segment (``LogSegment.recover``), written once: its valid batches, fed in file
order, make its ``.index``, ``.timeindex`` and ``.txnindex`` entries (:class:`Recovery`).

For each batch, in file order (``FileRecords.batches``):

1. ``batch.ensureValid()``: a v2 batch smaller than 61 bytes, or whose
   CRC-32C does not match, and a v0/v1 message whose CRC-32 does not match,
   is invalid (``CorruptRecordException``); so is a length field below 14
   met while iterating.  Recovery stops at the first invalid batch: the
   bytes from there on are what Kafka truncates (kseg only reports them).
2. The batch's last offset must fit the index (0 <= last - base <= 2^31-1,
   else ``LogSegmentOffsetOverflowException``).
3. If ``batch.maxTimestamp`` is larger than the largest so far, it becomes
   the largest, paired with the batch's last offset.
4. If ``validBytes - lastIndexEntry > indexIntervalBytes``, the offset index
   gets (batch last offset, validBytes) and the time index gets (largest
   timestamp so far, its offset) unless that timestamp is not above the
   last entry's (``TimeIndex.maybeAppend``); lastIndexEntry = validBytes.
   An offset not above the last entry's is ``InvalidOffsetException``.
5. validBytes += batch size; for magic >= 2, producer state is updated and
   aborted transactions go to the ``.txnindex``
   (:mod:`kseg.storage.producer_state`).

At the end one more time-index entry (the largest timestamp, if above the
last entry's), and both indexes are trimmed to their entries.

Two feeders: ``rebuild-index`` reads a segment's own log as recovery reads it
(:func:`kseg.ops.rebuild.rebuild.recover_segment`); ``salvage`` feeds the
batches it keeps as it copies them to a new log, whose positions are the valid
bytes before each (step 4's ``validBytes``): the new log's indexes without
reading it back.
"""

from __future__ import annotations

from array import array
from typing import Callable, Iterable

from kseg import engine
from kseg.errors import CorruptRecordError, RecoveryFailure
from kseg.format import v2
from kseg.format.indexes import OFFSET_ENTRY, TIME_ENTRY
from kseg.format.v2 import (
    ATTRIBUTES,
    BASE_OFFSET,
    CONTROL_FLAG,
    LAST_OFFSET_DELTA,
    MAGIC,
    MAX_TIMESTAMP,
    PRODUCER_ID,
    TRANSACTIONAL_FLAG,
)
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT, INT32_MAX, NO_TIMESTAMP
from kseg.ops.rebuild.recovered import Recovered
from kseg.storage.batch import FileBatch, LegacyBatch, V2Batch
from kseg.storage.partition import Segment
from kseg.storage.producer_state import ProducerState
from kseg.storage.records import ScanItem

DEFAULT_INDEX_INTERVAL = 4096  # index.interval.bytes
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024  # segment.index.bytes: bounds the entry count (isFull)

#: The slots of the engine's ``recover_items`` int64 state (the C source says what each holds), by name.
STATE = (
    *("R_BASE_OFFSET", "R_INTERVAL", "R_NO_TXN", "R_INDEX_MAX", "R_TIME_MAX", "R_MAX_TS", "R_MAX_OFFSET"),
    *("R_LAST_INDEX_ENTRY", "R_VALID_BYTES", "R_BATCHES", "R_LAST_POSITION", "R_INDEX_N", "R_INDEX_LAST"),
    *("R_TIME_N", "R_TIME_LAST_TS", "R_TIME_LAST_OFFSET", "R_INDEX_ROWS", "R_TIME_ROWS", "R_FIELDS"),
)
R_BASE_OFFSET, R_INTERVAL, R_NO_TXN, R_INDEX_MAX, R_TIME_MAX, R_MAX_TS, R_MAX_OFFSET = range(7)
R_LAST_INDEX_ENTRY, R_VALID_BYTES, R_BATCHES, R_LAST_POSITION, R_INDEX_N, R_INDEX_LAST = range(7, 13)
R_TIME_N, R_TIME_LAST_TS, R_TIME_LAST_OFFSET, R_INDEX_ROWS, R_TIME_ROWS, R_FIELDS = range(13, 19)
#: Index rows of each kind ``recover_items`` writes per call at most.
OUT_ROWS = 4096
#: The most items the Python rule takes between two engine calls that stop where they start.
MAX_RUN = 256

engine.check({name: i for i, name in enumerate(STATE)})


class _Indexes:
    """The offset and time index as recovery appends to them (``OffsetIndex``, ``TimeIndex``)."""

    def __init__(self, rec: Recovered, max_index_size: int) -> None:
        self.rec = rec
        self.max_offset_entries = max_index_size // OFFSET_ENTRY.size
        self.max_time_entries = max_index_size // TIME_ENTRY.size
        self.last_time = (NO_TIMESTAMP, rec.segment.base_offset)  # TimeIndex.lastEntry of an empty index

    def append_offset(self, offset: int, valid_bytes: int, path: str, position: int) -> None:
        offsets = self.rec.index_offsets
        if len(offsets) >= self.max_offset_entries:
            raise RecoveryFailure(
                f"IllegalArgumentException: attempt to append to a full index (size = "
                f"{len(offsets)}); raise --max-index-bytes",
                path=path,
                position=position,
            )
        if offsets and offset <= offsets[-1]:
            raise RecoveryFailure(
                f"InvalidOffsetException: attempt to append an offset {offset} to position "
                f"{len(offsets)} no larger than the last offset appended ({offsets[-1]})",
                path=path,
                position=position,
                truncates_segment=True,
            )
        offsets.append(offset)
        self.rec.index_positions.append(valid_bytes)

    def maybe_append_time(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        offsets = self.rec.time_offsets
        if not skip_full_check and len(offsets) >= self.max_time_entries - 1:
            raise RecoveryFailure(
                f"IllegalArgumentException: attempt to append to a full time index (size = "
                f"{len(offsets)}); raise --max-index-bytes"
            )
        last_ts, last_offset = self.last_time
        if offsets and offset < last_offset:
            raise RecoveryFailure(
                f"InvalidOffsetException: attempt to append an offset ({offset}) to slot "
                f"{len(offsets)} no larger than the last offset appended ({last_offset}) "
                "to the time index",
                truncates_segment=True,
            )
        if timestamp > last_ts:
            self.rec.time_timestamps.append(timestamp)
            offsets.append(offset)
            self.last_time = (timestamp, offset)


class Recovery:
    """``LogSegment.recover`` of ``segment``, fed its batches in file order (:meth:`feed`), then ended
    (:meth:`end`); what it makes is :attr:`rec`.  ``batch_at``: the batch object at a position the items
    name (an end marker's records are read from it, an invalid batch's error made); ``path``: the file
    the positions are in, for errors; ``state``: producer state, carried from the segment before."""

    def __init__(
        self,
        segment: Segment,
        state: ProducerState,
        batch_at: Callable[[int], FileBatch],
        *,
        path: str,
        index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
        max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
        limit: int = DEFAULT_DECOMPRESSION_LIMIT,
    ) -> None:
        self.rec = Recovered(segment, log=segment.log or "")
        self.state, self.batch_at, self.path = state, batch_at, path
        self.interval, self.limit = index_interval_bytes, limit
        self.indexes = _Indexes(self.rec, max_index_size)
        self.max_ts, self.max_offset = NO_TIMESTAMP, segment.base_offset  # maxTimestampAndOffsetSoFar
        self.last_index_entry = 0
        if engine.C is not None:
            self._engine_state = array("q", bytes(8 * R_FIELDS))
            self._engine_out = array("q", bytes(8 * 4 * OUT_ROWS))
            s = self._engine_state
            s[R_BASE_OFFSET], s[R_INTERVAL] = segment.base_offset, index_interval_bytes
            s[R_INDEX_MAX], s[R_TIME_MAX] = self.indexes.max_offset_entries, self.indexes.max_time_entries

    def feed(self, items: Iterable[ScanItem]) -> None:
        """Steps 1-5 for each batch of ``items``, ``FileRecords.scan``'s tuples: ``(position, size, header,
        valid)`` of a v2 batch whose header was read, ``(position, size, None, batch)`` of any other.  A
        batch's index position is the valid bytes before it, whatever its ``position``.  Raises
        :class:`CorruptRecordError` at an invalid batch (recovery stops there) and :class:`RecoveryFailure`
        where recovery fails; the batches before it are counted.

        With the compiled engine a list of items is fed by ``recover_items`` up to the first batch it hands
        back (an item without a header, an invalid batch, an index entry refused, a producer's batch that
        changes producer state), which :meth:`feed_python` takes, the reference; when calls stop where they
        start, the Python rule takes more items between them, doubling up to :data:`MAX_RUN`."""
        if engine.C is None or not isinstance(items, list):
            self.feed_python(items)
            return
        i, n, run = 0, len(items), 1
        while i < n:
            j = self._feed_engine(items, i)
            if j >= n:
                return
            run = 1 if j > i else min(2 * run, MAX_RUN)
            self.feed_python(items[j : j + run])
            i = j + run

    def _feed_engine(self, items: list[ScanItem], i: int) -> int:
        """``recover_items`` from ``items[i]``, its index rows taken; returns where it stopped."""
        assert engine.C is not None
        s, out, rec, indexes = self._engine_state, self._engine_out, self.rec, self.indexes
        s[R_NO_TXN] = not self.state.current_txn
        s[R_MAX_TS], s[R_MAX_OFFSET], s[R_LAST_INDEX_ENTRY] = self.max_ts, self.max_offset, self.last_index_entry
        s[R_VALID_BYTES], s[R_BATCHES], s[R_LAST_POSITION] = rec.valid_bytes, rec.batches, rec.last_position
        s[R_INDEX_N], s[R_INDEX_LAST] = len(rec.index_offsets), rec.index_offsets[-1] if rec.index_offsets else 0
        s[R_TIME_N], (s[R_TIME_LAST_TS], s[R_TIME_LAST_OFFSET]) = len(rec.time_offsets), indexes.last_time
        full = True
        while full:
            s[R_INDEX_ROWS] = s[R_TIME_ROWS] = 0
            i, full = engine.C.recover_items(items, i, s, out)
            k, t = s[R_INDEX_ROWS], s[R_TIME_ROWS]
            rec.index_offsets.extend(out[:k])
            rec.index_positions.extend(out[OUT_ROWS : OUT_ROWS + k])
            rec.time_timestamps.extend(out[2 * OUT_ROWS : 2 * OUT_ROWS + t])
            rec.time_offsets.extend(out[3 * OUT_ROWS : 3 * OUT_ROWS + t])
        self.max_ts, self.max_offset, self.last_index_entry = s[R_MAX_TS], s[R_MAX_OFFSET], s[R_LAST_INDEX_ENTRY]
        rec.valid_bytes, rec.batches, rec.last_position = s[R_VALID_BYTES], s[R_BATCHES], s[R_LAST_POSITION]
        indexes.last_time = (s[R_TIME_LAST_TS], s[R_TIME_LAST_OFFSET])
        return i

    def feed_python(self, items: Iterable[ScanItem]) -> None:
        """:meth:`feed` by the Python rule, every batch: the reference."""
        rec, path, state, indexes, interval = self.rec, self.path, self.state, self.indexes, self.interval
        base = rec.segment.base_offset
        max_ts, max_offset, last_index_entry = self.max_ts, self.max_offset, self.last_index_entry
        valid_bytes, count, last_position = rec.valid_bytes, rec.batches, rec.last_position
        try:
            for position, size, h, valid in items:
                if h is None:  # a FileBatch: legacy, too small for a v2 header, or not in the window
                    batch = valid
                    batch.ensure_valid()
                    last, batch_max_ts, magic = batch.last_offset, batch.max_timestamp, batch.magic
                    pid = batch.h[PRODUCER_ID] if magic >= 2 else -1
                else:
                    if not valid:
                        raise self._invalid(position)
                    batch = None
                    last, batch_max_ts = v2.last_offset(h[BASE_OFFSET], h[LAST_OFFSET_DELTA]), h[MAX_TIMESTAMP]
                    magic, pid = h[MAGIC], h[PRODUCER_ID]
                if not 0 <= last - base <= INT32_MAX:
                    raise RecoveryFailure(
                        f"LogSegmentOffsetOverflowException: offset {last} does not fit "
                        f"the index of base offset {base}",
                        path=path,
                        position=position,
                    )
                if batch_max_ts > max_ts:
                    max_ts, max_offset = batch_max_ts, last
                if valid_bytes - last_index_entry > interval:
                    indexes.append_offset(last, valid_bytes, path, position)
                    indexes.maybe_append_time(max_ts, max_offset)
                    last_index_entry = valid_bytes
                valid_bytes += size
                count += 1
                last_position = position
                if pid >= 0:
                    if batch is None and not h[ATTRIBUTES] & CONTROL_FLAG:  # a data batch: the header is enough
                        state.apply_data(pid, h[BASE_OFFSET], bool(h[ATTRIBUTES] & TRANSACTIONAL_FLAG), path, position)
                        continue
                    aborted = state.apply(batch if batch is not None else self.batch_at(position), self.limit)
                    if aborted is not None:
                        self._add_aborted(aborted, position)
        finally:
            self.max_ts, self.max_offset, self.last_index_entry = max_ts, max_offset, last_index_entry
            rec.valid_bytes, rec.batches, rec.last_position = valid_bytes, count, last_position

    def end(self) -> None:
        """After the last batch (or the one recovery stopped at): the time index's last entry."""
        self.indexes.maybe_append_time(self.max_ts, self.max_offset, skip_full_check=True)

    def _invalid(self, position: int) -> CorruptRecordError:
        """The error ``ensureValid`` throws for the batch at ``position`` (found invalid by scan)."""
        try:
            batch = self.batch_at(position)
            assert isinstance(batch, (V2Batch, LegacyBatch))  # a FileBatch is one of the two
            batch.ensure_valid()
        except CorruptRecordError as exc:
            return exc
        return CorruptRecordError("Record is corrupt (CRC mismatch)", path=self.path, position=position)

    def _add_aborted(self, aborted: tuple, position: int) -> None:
        """``TransactionIndex.append``: last offsets must increase."""
        entries = self.rec.txn_entries
        if entries and aborted[2] <= entries[-1][2]:
            raise RecoveryFailure(
                "IllegalArgumentException: the last offset of appended transactions must increase "
                f"({aborted[2]} after {entries[-1][2]})",
                path=self.path,
                position=position,
            )
        entries.append(aborted)
