"""One log segment on disk -- ``.log``, ``.index``, ``.timeindex``, ``.txnindex`` -- as Kafka writes it.

File schemas (big-endian; ``AbstractIndex`` subclasses, ``AbortedTxn``)::

    <base:020d>.log        record batches back to back (``FileRecords``)
    <base:020d>.index      entries of: relativeOffset int32 | position int32        (8 B)
    <base:020d>.timeindex  entries of: timestamp int64 | relativeOffset int32       (12 B)
    <base:020d>.txnindex   entries of: version int16 (0) | producerId int64 |
                           firstOffset int64 | lastOffset int64 | lastStableOffset int64  (34 B)

Index entry selection mirrors ``LogSegment`` at Kafka commit 1eb7644 (the
corpus commit):

* ``per_batch_index=False`` -- ``LogSegment.append`` before KAFKA-806: one
  decision per append.  The max timestamp so far is updated from the
  append's (largest timestamp, last offset of the earliest batch holding
  it); then, if ``bytesSinceLastIndexEntry > indexIntervalBytes``, the
  offset index gets (last offset of the whole append, position where the
  append starts) and the time index gets (max timestamp so far, its offset)
  when that timestamp is strictly larger than the last entry's; the counter
  is reset, then the append's size is added.
* ``per_batch_index=True`` -- the same rule applied to every batch on its
  own (``LogSegment.recover``, and ``append`` after KAFKA-806): entry =
  (batch last offset, batch position).
* ``close()`` (``LogSegment.close`` / ``onBecomeInactiveSegment``): one more
  time-index entry if the max timestamp grew, then both files trimmed to
  their entries.  The time index starts from (-1, baseOffset)
  (``TimeIndex.lastEntry`` of an empty index), so v0 data never gets one.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from kseg.errors import KsegError
from kseg.testing.framing import BatchInfo, batch_info

if TYPE_CHECKING:  # pragma: no cover
    from kseg.testing.appendinfo import AppendInfo

OFFSET_ENTRY = struct.Struct(">ii")  # i relativeOffset | i position
TIME_ENTRY = struct.Struct(">qi")  # q timestamp | i relativeOffset
# h version (0) | q producerId | q firstOffset | q lastOffset | q lastStableOffset
TXN_ENTRY = struct.Struct(">hqqqq")
INT32_MAX = 2**31 - 1
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024  # segment.index.bytes default


def segment_file_name(base_offset: int, suffix: str) -> str:
    """``LogFileUtils.filenamePrefixFromOffset``: 20-digit zero-padded offset + suffix."""
    return f"{base_offset:020d}{suffix}"


class SegmentWriter:
    """Write one segment exactly as ``LogSegment.append`` + ``close()`` would.

    ``append(batches)`` is one ``LogSegment.append`` call (a produce request
    or a follower fetch); every element is one batch's (or one legacy
    entry's) raw bytes.  ``magic`` (None: any) is checked against every batch.
    ``max_index_size`` is ``segment.index.bytes``: it bounds the entry count
    (``isFull``) and is the size of the index files left by ``abandon()``.
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        base_offset: int = 0,
        *,
        index_interval_bytes: int = 4096,
        magic: int | None = 2,
        per_batch_index: bool = True,
        max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.base_offset = base_offset
        self.index_interval_bytes = index_interval_bytes
        self.magic = magic
        self.per_batch_index = per_batch_index
        self.max_index_size = max_index_size
        self.log_path = self.directory / segment_file_name(base_offset, ".log")
        self.index_path = self.directory / segment_file_name(base_offset, ".index")
        self.timeindex_path = self.directory / segment_file_name(base_offset, ".timeindex")
        self.txnindex_path = self.directory / segment_file_name(base_offset, ".txnindex")
        self._log = open(self.log_path, "wb")
        self.size = 0
        self.offset_entries: list[tuple[int, int]] = []  # (absolute offset, position)
        self.time_entries: list[tuple[int, int]] = []  # (timestamp, absolute offset)
        self.txn_entries: list[tuple[int, int, int, int]] = []
        self._last_time_entry = (-1, base_offset)  # TimeIndex.lastEntry when empty
        self.max_timestamp = -1  # maxTimestampAndOffsetSoFar, read from the empty time index
        self.max_timestamp_offset = base_offset
        self._bytes_since_last_index_entry = 0
        self.last_offset: int | None = None
        self.closed = False

    # -- capacity (LogSegment.shouldRoll helpers) ---------------------------------

    @property
    def max_offset_entries(self) -> int:
        return self.max_index_size // OFFSET_ENTRY.size

    @property
    def max_time_entries(self) -> int:
        return self.max_index_size // TIME_ENTRY.size

    def is_full(self) -> bool:
        """``offsetIndex().isFull() || timeIndex().isFull()``."""
        return len(self.offset_entries) >= self.max_offset_entries or len(self.time_entries) >= self.max_time_entries

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        """``AbstractIndex.canAppendOffset``: offset - base fits an int32 (and is >= 0)."""
        return 0 <= offset - self.base_offset <= INT32_MAX

    # -- appending ---------------------------------------------------------------------

    def append(self, batches: Sequence[bytes], append_info: "AppendInfo | None" = None) -> None:
        """One ``LogSegment.append`` of the given batches (see the module docstring).

        ``append_info`` (``per_batch_index=False`` only) gives the values the caller
        of ``LogSegment.append`` passed, as an older broker computed them
        (:mod:`kseg.testing.appendinfo`: a leader before Kafka 3.7, the log
        cleaner); by default those of ``analyzeAndValidateRecords`` (the
        append's last offset; the last offset of the earliest batch holding
        its largest timestamp).
        """
        if append_info is not None and self.per_batch_index:
            raise KsegError("append info applies to per-append indexing (per_batch_index=False)")
        if self.closed:
            raise KsegError("segment writer is closed")
        infos: list[BatchInfo] = []
        for raw in batches:
            info = batch_info(raw)
            if info.size != len(raw):
                raise KsegError(f"batch length field says {info.size} bytes, got {len(raw)}")
            if self.magic is not None and info.magic != self.magic:
                raise KsegError(f"batch has magic {info.magic}, segment writer expects {self.magic}")
            infos.append(info)
        if not infos:
            return
        position = self.size
        for raw in batches:
            self._log.write(raw)
        total = sum(i.size for i in infos)
        if self.per_batch_index:
            for info in infos:
                self._ensure_offset_in_range(info.last_offset)
                self._observe(info.max_timestamp, info.last_offset)
                self._maybe_index(info.last_offset, position)
                position += info.size
                self._bytes_since_last_index_entry += info.size
        else:
            largest_offset = infos[-1].last_offset
            largest_ts, shallow = -1, -1
            for batch in infos:  # UnifiedLog.analyzeAndValidateRecords
                if batch.max_timestamp > largest_ts:
                    largest_ts, shallow = batch.max_timestamp, batch.last_offset
            if append_info is not None:
                largest_offset, largest_ts, shallow = append_info
            self._ensure_offset_in_range(largest_offset)
            self._observe(largest_ts, shallow)
            self._maybe_index(largest_offset, position)
            self._bytes_since_last_index_entry += total
        self.size += total
        self.last_offset = infos[-1].last_offset

    def _ensure_offset_in_range(self, offset: int) -> None:
        if not self.can_convert_to_relative_offset(offset):
            raise KsegError(
                f"offset {offset} cannot be stored relative to base offset {self.base_offset} "
                "(LogSegmentOffsetOverflowException)"
            )

    def _observe(self, timestamp: int, offset: int) -> None:
        if timestamp > self.max_timestamp:
            self.max_timestamp, self.max_timestamp_offset = timestamp, offset

    def _maybe_index(self, offset: int, position: int) -> None:
        if self._bytes_since_last_index_entry > self.index_interval_bytes:
            self._offset_index_append(offset, position)
            self._time_index_maybe_append(self.max_timestamp, self.max_timestamp_offset)
            self._bytes_since_last_index_entry = 0

    def _offset_index_append(self, offset: int, position: int) -> None:
        """``OffsetIndex.append``: offsets must strictly increase."""
        if len(self.offset_entries) >= self.max_offset_entries:
            raise KsegError(f"Attempt to append to a full index (size = {len(self.offset_entries)})")
        if self.offset_entries and offset <= self.offset_entries[-1][0]:
            raise KsegError(
                f"Attempt to append an offset {offset} no larger than the last offset appended "
                f"({self.offset_entries[-1][0]}) (InvalidOffsetException)"
            )
        self.offset_entries.append((offset, position))

    def _time_index_maybe_append(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """``TimeIndex.maybeAppend``: only a strictly larger timestamp is stored."""
        if not skip_full_check and len(self.time_entries) >= self.max_time_entries:
            raise KsegError(f"Attempt to append to a full time index (size = {len(self.time_entries)})")
        last_ts, last_off = self._last_time_entry
        if self.time_entries and offset < last_off:
            raise KsegError(
                f"Attempt to append an offset ({offset}) no larger than the last offset appended ({last_off})"
            )
        if self.time_entries and timestamp < last_ts:
            raise KsegError(f"Attempt to append a timestamp ({timestamp}) no larger than the last ({last_ts})")
        if timestamp > last_ts:
            self.time_entries.append((timestamp, offset))
            self._last_time_entry = (timestamp, offset)

    def add_aborted_txn(self, producer_id: int, first_offset: int, last_offset: int, last_stable_offset: int) -> None:
        """``LogSegment.updateTxnIndex`` for an aborted transaction (``AbortedTxn``, version 0)."""
        self.txn_entries.append((producer_id, first_offset, last_offset, last_stable_offset))

    # -- finishing ----------------------------------------------------------------------

    def offset_index_bytes(self) -> bytes:
        base = self.base_offset
        return b"".join(OFFSET_ENTRY.pack(off - base, pos) for off, pos in self.offset_entries)

    def time_index_bytes(self) -> bytes:
        base = self.base_offset
        return b"".join(TIME_ENTRY.pack(ts, off - base) for ts, off in self.time_entries)

    def txn_index_bytes(self) -> bytes:
        return b"".join(TXN_ENTRY.pack(0, *entry) for entry in self.txn_entries)

    def close(self) -> None:
        """``LogSegment.close`` (same files as ``onBecomeInactiveSegment``).

        Adds the final time-index entry if the max timestamp grew, writes both
        indexes trimmed to their entries, and the ``.txnindex`` only when it
        has entries (Kafka creates that file on first append).
        """
        if self.closed:
            return
        self._time_index_maybe_append(self.max_timestamp, self.max_timestamp_offset, skip_full_check=True)
        self._finish(self.offset_index_bytes(), self.time_index_bytes())

    def abandon(self) -> None:
        """Leave the files as an open, never-closed active segment would be after a crash.

        Both index files keep their preallocated size (``max_index_size``
        rounded down to whole entries) with a zero tail, and no final
        time-index entry is added (like the corpus' ``prealloc-index-0``).
        """
        if self.closed:
            return
        off = self.offset_index_bytes()
        tim = self.time_index_bytes()
        off_size = self.max_offset_entries * OFFSET_ENTRY.size
        tim_size = self.max_time_entries * TIME_ENTRY.size
        self._finish(off + bytes(off_size - len(off)), tim + bytes(tim_size - len(tim)))

    def _finish(self, offset_index: bytes, time_index: bytes) -> None:
        self._log.close()
        self.index_path.write_bytes(offset_index)
        self.timeindex_path.write_bytes(time_index)
        if self.txn_entries:
            self.txnindex_path.write_bytes(self.txn_index_bytes())
        self.closed = True

    def __enter__(self) -> "SegmentWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def write_segment(
    directory: str | os.PathLike,
    appends: Iterable[Sequence[bytes]],
    base_offset: int = 0,
    **kwargs,
) -> SegmentWriter:
    """Convenience: one :class:`SegmentWriter`, every append, closed; returns the writer."""
    writer = SegmentWriter(directory, base_offset, **kwargs)
    for batches in appends:
        writer.append(batches)
    writer.close()
    return writer
