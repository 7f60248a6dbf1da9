"""Index rebuild exactly as Kafka's recovery does it (``LogSegment.recover``).

For each batch of the ``.log``, in file order (``FileRecords.batches``):

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

Producer state is carried across the segments of a partition directory from
an empty state at its first segment, as recovery does when the log start is
the first segment's base offset.  For one segment given alone, the earlier
segments of its directory are replayed first (``UnifiedLog.rebuildProducerState``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Iterator

from kseg.errors import CorruptRecordError, InputError, KsegError, RecoveryFailure
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
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT, INT32_MAX, INT64_MAX, INT64_MIN, NO_TIMESTAMP
from kseg.ops.rebuild.recovered import Recovered
from kseg.storage import files, location
from kseg.storage.batch import LegacyBatch, V2Batch
from kseg.storage.partition import Partition, Segment, scan_partition
from kseg.storage.producer_state import ProducerState
from kseg.storage.records import FileRecords, SecondReader
from kseg.storage.stores.find import discover

DEFAULT_INDEX_INTERVAL = 4096  # index.interval.bytes
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024  # segment.index.bytes: bounds the entry count (isFull)


def ensure_valid(batch: V2Batch | LegacyBatch) -> None:
    """``RecordBatch.ensureValid`` with Kafka's messages: a v2 batch below its 61-byte header, then the
    CRC (CRC-32C of a v2 batch, CRC-32 of a v0/v1 message)."""
    if batch.magic >= 2 and batch.size < v2.HEADER_SIZE:
        raise CorruptRecordError(
            f"Record batch is corrupt (the size {batch.size} is smaller than the minimum "
            f"allowed overhead {v2.HEADER_SIZE})",
            path=batch.file.path,
            position=batch.position,
        )
    if not batch.is_valid():
        computed = batch.computed_crc()
        raise CorruptRecordError(
            f"Record is corrupt (stored crc = {batch.checksum}, computed crc = {computed})",
            path=batch.file.path,
            position=batch.position,
        )


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


def _invalid(aux: SecondReader, position: int) -> CorruptRecordError:
    """The error ``ensureValid`` throws for the batch at ``position`` (found invalid by scan)."""
    try:
        batch = aux.batch(position)
        assert isinstance(batch, (V2Batch, LegacyBatch))  # a FileBatch is one of the two
        ensure_valid(batch)
    except CorruptRecordError as exc:
        return exc
    return CorruptRecordError("Record is corrupt (CRC mismatch)", path=aux.path, position=position)


def recover_segment(
    seg: Segment,
    state: ProducerState,
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
    max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
    limit: int = DEFAULT_DECOMPRESSION_LIMIT,
    progress: Callable[[int], None] | None = None,
) -> Recovered:
    """``LogSegment.recover`` on ``seg`` (module docstring); the log is only read.

    Batches come from ``FileRecords.scan`` (header tuples and CRC verdicts, no
    object per batch); control batches of producers are read through a second
    reader for their marker.
    """
    log = _log_of(seg)
    rec = Recovered(seg, log=log)
    base = seg.base_offset
    path = files.display(log)
    indexes = _Indexes(rec, max_index_size)
    max_ts, max_offset = NO_TIMESTAMP, base  # maxTimestampAndOffsetSoFar from the empty time index
    last_index_entry = valid_bytes = count = 0
    aux = SecondReader(log)
    try:
        with FileRecords(log) as records:
            rec.log_size = records.size
            try:
                for items in records.scan():
                    for position, size, h, valid in items:
                        if h is None:  # a FileBatch: legacy, too small for a v2 header, or not in the window
                            batch = valid
                            ensure_valid(batch)
                            last, batch_max_ts, magic = batch.last_offset, batch.max_timestamp, batch.magic
                            pid = batch.h[v2.PRODUCER_ID] if magic >= 2 else -1
                        else:
                            if not valid:
                                raise _invalid(aux, position)
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
                        if valid_bytes - last_index_entry > index_interval_bytes:
                            indexes.append_offset(last, valid_bytes, path, position)
                            indexes.maybe_append_time(max_ts, max_offset)
                            last_index_entry = valid_bytes
                        valid_bytes += size
                        count += 1
                        rec.valid_bytes, rec.batches, rec.last_position = valid_bytes, count, position
                        if pid >= 0:
                            if batch is None and not h[ATTRIBUTES] & CONTROL_FLAG:  # a data batch: the header is enough
                                state.apply_data(
                                    pid, h[BASE_OFFSET], bool(h[ATTRIBUTES] & TRANSACTIONAL_FLAG), path, position
                                )
                                continue
                            aborted = state.apply(batch if batch is not None else aux.batch(position), limit)
                            if aborted is not None:
                                _add_aborted(rec, aborted, path, position)
                    if progress is not None:
                        progress(valid_bytes)
                indexes.maybe_append_time(max_ts, max_offset, skip_full_check=True)
            except RecoveryFailure as exc:
                rec.failure = exc.at(path)
            except CorruptRecordError as exc:  # recovery's catch: stop here, the rest is truncated
                rec.stop = exc.at(path)
                try:
                    indexes.maybe_append_time(max_ts, max_offset, skip_full_check=True)
                except RecoveryFailure as failure:
                    rec.failure = failure.at(path)
    finally:
        aux.close()
    return rec


def _log_of(seg: Segment) -> str:
    """The segment's ``.log``, which recovery reads (a segment listed without one is never recovered)."""
    if seg.log is None:
        raise InputError("no .log file: recovery reads the log", path=seg.index or seg.name)
    return seg.log


def _add_aborted(rec: Recovered, aborted: tuple, path: str, position: int) -> None:
    """``TransactionIndex.append``: last offsets must increase."""
    if rec.txn_entries and aborted[2] <= rec.txn_entries[-1][2]:
        raise RecoveryFailure(
            "IllegalArgumentException: the last offset of appended transactions must increase "
            f"({aborted[2]} after {rec.txn_entries[-1][2]})",
            path=path,
            position=position,
        )
    rec.txn_entries.append(aborted)


def replay(log: str, state: ProducerState, limit: int) -> None:
    """Producer state of an earlier segment's ``log`` (``loadProducersFromRecords``): no checks, no indexes."""
    aux = SecondReader(log)
    try:
        with FileRecords(log) as records:
            for items in records.scan():
                for position, _, h, batch in items:
                    if h is None:
                        if batch.magic >= 2 and batch.h[v2.PRODUCER_ID] >= 0:
                            state.apply(batch, limit)
                    elif h[PRODUCER_ID] >= 0:
                        if h[ATTRIBUTES] & CONTROL_FLAG:
                            state.apply(aux.batch(position), limit)
                        else:
                            state.apply_data(
                                h[PRODUCER_ID],
                                h[BASE_OFFSET],
                                bool(h[ATTRIBUTES] & TRANSACTIONAL_FLAG),
                                log,
                                position,
                            )
    except KsegError:
        pass  # the segment's own recovery reports its damage; its state stops there
    finally:
        aux.close()


@dataclass
class Target:
    """One partition to rebuild: its segments (all, or those named), and where outputs go."""

    partition: Partition
    selected: set[int] | None  # base offsets given as files; None: every segment
    output_subdir: str  # "" or the partition's name (a log root written to --output-dir)


def resolve(paths: list[str], notes: list[str]) -> list[Target]:
    """Command-line paths (``.log`` files, partition directories, log roots) to targets."""
    targets: list[Target] = []
    by_dir: dict[str, set[int]] = {}  # a partition directory -> the base offsets of its .log files given
    for path in paths:
        if not files.exists(path):
            raise InputError("no such file or directory", path=path)
        if files.isdir(path):
            parts = discover([path], notes)
            root = len(parts) > 1 or (parts and _same_dir(parts[0].path) != _same_dir(path))
            targets.extend(Target(p, None, p.name if root else "") for p in parts)
            continue
        if files.suffix(path) != files.LOG:
            raise InputError("not a .log file: rebuild-index takes segment .log files and directories", path=path)
        base = files.base_offset_from_name(path)
        if base is None:
            raise InputError("not a segment file: the name carries no base offset", path=path)
        directory = files.parent(path)
        selected = by_dir.get(directory)
        if selected is None:
            local = not files.store_of(path).remote
            part = scan_partition(os.path.dirname(location.local_path(path)) or "." if local else directory, notes)
            selected = by_dir[directory] = set()
            targets.append(Target(part, selected, ""))
        selected.add(base)
    for target in targets:
        for seg in target.partition.segments:
            if seg.log is None and (target.selected is None or seg.base_offset in target.selected):
                names = ", ".join(location.basename(p) for p in (seg.index, seg.timeindex, seg.txnindex) if p)
                notes.append(
                    f"{target.partition.path}: {names} without {seg.stem}.log: ignored "
                    "(Kafka deletes such orphaned index files when it loads the log)"
                )
    return targets


def _same_dir(path: str) -> str:
    return files.store_of(path).names.canonical(path)


def recover_partition(
    target: Target,
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
    max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
    limit: int = DEFAULT_DECOMPRESSION_LIMIT,
    progress=None,
) -> Iterator[Recovered]:
    """Recover every selected segment of ``target`` in offset order, producer state carried."""
    state = ProducerState()
    selected = target.selected
    last_selected = max(selected, default=INT64_MIN) if selected is not None else INT64_MAX
    truncated_at: Segment | None = None
    for seg in target.partition.segments:
        if seg.log is None:
            continue
        if selected is not None and seg.base_offset not in selected:
            if seg.base_offset < last_selected:
                replay(seg.log, state, limit)
            continue
        if progress is not None:
            progress.start(f"{target.partition.name}/{seg.stem}.log", seg.log_size())
        rec = recover_segment(
            seg,
            state,
            index_interval_bytes=index_interval_bytes,
            max_index_size=max_index_size,
            limit=limit,
            progress=None if progress is None else progress.advance_to,
        )
        rec.log_dir, rec.partition = target.partition.log_dir, target.partition.name
        if truncated_at is not None:
            rec.notes.append(
                f"Kafka's recovery would delete this segment (when above the recovery point): "
                f"segment {truncated_at.name} before it was truncated"
            )
        elif rec.truncated > 0 or (rec.failure is not None and rec.failure.truncates_segment):
            truncated_at = seg
        yield rec
