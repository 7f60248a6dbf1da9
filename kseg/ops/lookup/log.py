"""A partition directory opened read-only for lookups (``kseg lookup-offset``, ``lookup-time``): its
segments with a ``.log`` in base-offset order, each log opened on first use, index files read whole
and checked as Kafka checks them before use; step 2 of Kafka's read path, ``OffsetIndex.lookup``
(the largest entry with offset <= T, else the base offset at position 0), and where a read goes when
the entry it gives does not start a batch."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kseg.errors import ChunkError, CorruptIndexError, CorruptRecordError, InputError, KsegError
from kseg.format.indexes import OffsetIndexView, TimeIndexView
from kseg.format.v2 import java_long
from kseg.storage import files
from kseg.storage import offset_checkpoints as cp
from kseg.storage.partition import Segment, is_partition_dir, scan_partition
from kseg.storage.records import FileRecords
from kseg.valueclass import FrozenValue

if TYPE_CHECKING:
    from kseg.storage.context import Store

LOOKUP_WINDOW = 1 << 20  # a lookup reads one index interval and one batch; no need for the 8 MiB dump window


class IndexStep(FrozenValue):
    """Step 2: the ``.index`` entry Kafka's ``OffsetIndex.lookup`` returns."""

    _fields = ("path", "entries", "slot", "offset", "position", "base_offset", "target")
    path: str | None  # None: no usable .index, the scan starts at position 0
    entries: int  # entries searched
    slot: int  # -1: no entry <= target, Kafka returns (base offset, 0)
    offset: int
    position: int
    base_offset: int
    target: int  # the offset looked up

    def __init__(
        self, path: str | None, entries: int, slot: int, offset: int, position: int, base_offset: int, target: int = 0
    ) -> None:
        self._set(
            path=path,
            entries=entries,
            slot=slot,
            offset=offset,
            position=position,
            base_offset=base_offset,
            target=target,
        )

    @property
    def relative_offset(self) -> int:
        return self.offset - self.base_offset


class PartitionLog:
    """A partition directory opened read-only for lookups.

    Segments are those with a ``.log`` file, in base-offset order; each log
    is opened on first use and kept open; index files are read whole (they
    are small) and checked as Kafka would before use.
    """

    def __init__(self, path: str, limit: int, window: int = LOOKUP_WINDOW, *, store: Store) -> None:
        """``path``: the partition directory given (or a file in it), of ``store`` (chosen once, where it was given)."""
        if not files.exists(path, store):
            raise InputError("no such file or directory", path=path)
        if files.isfile(path, store):
            path = files.parent(path, store)
        if not store.remote and os.path.isdir(path):
            try:  # a directory that cannot be listed says so (the OS's reason), as in every command
                os.listdir(path)
            except OSError as exc:
                raise InputError(f"cannot list the directory: {exc.strerror or exc}", path=path) from None
        if not is_partition_dir(path, store):
            raise InputError(
                "not a partition directory: no segment files in it",
                path=path,
                hint="give one partition directory such as orders-3/",
            )
        self.path = path
        self.limit = limit
        self.window = window
        self.notes: list[str] = []
        part = scan_partition(path, self.notes, store=store)
        for seg in part.segments:
            if seg.log is None:
                names = ", ".join(os.path.basename(p) for p in (seg.index, seg.timeindex, seg.txnindex) if p)
                self.notes.append(f"{names}: no {seg.stem}.log beside it; ignored")
        self.segments = [s for s in part.segments if s.log is not None]
        self.start = cp.log_start_offset(path, self.segments[0].base_offset, store) if self.segments else None
        if self.start is not None and self.start.note is not None:
            self.notes.append(self.start.note)
        self._records: dict[int, FileRecords] = {}
        self._offset_index: dict[int, OffsetIndexView | None] = {}
        self._time_index: dict[int, TimeIndexView | None] = {}
        self._log_end: int | None = None
        self._end_unread: dict[int, str] = {}  # base offset -> why its end could not be read (next_offset)
        self.preallocated: set[str] = set()  # index files with a zero tail (never closed: no final entry)

    # -- files ----------------------------------------------------------------------
    def __enter__(self) -> "PartitionLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for records in self._records.values():
            records.close()
        self._records.clear()

    def records(self, seg: Segment) -> FileRecords:
        r = self._records.get(seg.base_offset)
        if r is None:
            r = self._records[seg.base_offset] = FileRecords(log_path(seg), window=self.window, store=seg.store)
        return r

    def offset_index(self, seg: Segment) -> OffsetIndexView | None:
        """The segment's ``.index`` without a preallocated zero tail; ``None`` (with a
        note) when it is missing or fails Kafka's sanity check."""
        if seg.base_offset not in self._offset_index:
            self._offset_index[seg.base_offset] = self._load(seg, seg.index, files.INDEX, OffsetIndexView, 8)
        return self._offset_index[seg.base_offset]

    def time_index(self, seg: Segment) -> TimeIndexView | None:
        if seg.base_offset not in self._time_index:
            self._time_index[seg.base_offset] = self._load(seg, seg.timeindex, files.TIME_INDEX, TimeIndexView, 12)
        return self._time_index[seg.base_offset]

    def _load(self, seg: Segment, path: str | None, sfx: str, view, size: int):
        name = seg.stem + sfx
        if path is None:
            self.notes.append(f"{name}: missing; reading the log from position 0 instead")
            return None
        try:
            data = files.open_index(path, store=seg.store)
            whole = view(data, seg.base_offset, files.display(path, store=seg.store))
            used = whole.used_entries()
        except InputError as exc:
            self.notes.append(f"{exc.describe()}; reading the log from position 0 instead")
            return None
        index = whole
        if used < whole.entries:
            self.notes.append(
                f"{name}: {whole.entries} slots of which {used} used, the rest zero "
                "(a preallocated index, as left by a crash); using the used entries"
            )
            index = whole.limited(used)
            self.preallocated.add(path)
        try:
            index.sanity_check()
        except CorruptIndexError as exc:
            self.notes.append(f"{exc.describe()}; reading the log from position 0 instead")
            return None
        return index

    # -- offsets of the log -------------------------------------------------------------
    @property
    def log_start(self) -> int:
        """Kafka's log start offset (:func:`kseg.storage.checkpoints.log_start_offset`): ListOffsets'
        ``earliest``; a fetch below it is OFFSET_OUT_OF_RANGE."""
        return self.start.offset if self.start is not None else 0

    @property
    def log_start_file(self) -> str | None:
        """The ``log-start-offset-checkpoint`` the log start offset came from (None: the first segment's base)."""
        return self.start.file if self.start is not None else None

    def log_end(self) -> int:
        """``UnifiedLog.logEndOffset``: the active (last) segment's ``readNextOffset``."""
        if self._log_end is None:
            self._log_end = self.next_offset(self.segments[-1]) if self.segments else 0
        return self._log_end

    def log_end_unread(self) -> str | None:
        """Why :meth:`log_end` stopped before the last segment's end because its bytes could not be read (a
        tiered chunk: :class:`~kseg.storage.tiered.ChunkError`), else ``None``: then offsets from the log end on
        are not known, not absent.  (Invalid bytes that *were* read end the log where Kafka's recovery ends it.)"""
        end = self.log_end()
        why = self._end_unread.get(self.segments[-1].base_offset) if self.segments else None
        return None if why is None else f"{why}; offsets from {end} on were not read"

    def next_offset(self, seg: Segment) -> int:
        """``LogSegment.readNextOffset``: from the last index entry, the last batch's
        next offset, else the base offset.  Invalid bytes at the end are noted."""
        records = self.records(seg)
        index = self.offset_index(seg)
        start = index.last_entry().position if index is not None else 0
        if not 0 <= start <= records.size:
            start = 0
        if index is not None and start != 0 and not starts_batch(records, start):
            start = self.recover_start(seg, index.entries - 1, start, "the log end is read")
        nxt, end = seg.base_offset, start
        try:
            for batch in records.batches(start):
                nxt, end = java_long(batch.last_offset + 1), batch.position + batch.size
                if nxt <= batch.base_offset:  # baseOffset + lastOffsetDelta wrapped past 2^63-1, as a long does
                    self.notes.append(
                        f"{seg.stem}.log: the batch at position {batch.position} has its last offset "
                        f"past 2^63-1 (base offset {batch.base_offset}); Kafka's long arithmetic "
                        f"wraps the log end offset to {nxt}"
                    )
        except CorruptRecordError as exc:
            self.notes.append(f"{exc.describe()}; the log end is taken before it")
            if isinstance(exc, ChunkError):  # bytes kseg could not read, not bytes Kafka's recovery truncates
                self._end_unread[seg.base_offset] = exc.describe()
            return nxt
        if end < records.size:
            self.notes.append(
                f"{seg.stem}.log: {records.size - end} invalid bytes at the end "
                f"(from position {end}); Kafka's recovery would truncate them"
            )
        return nxt

    def recover_start(self, seg: Segment, slot: int, position: int, what: str) -> int:
        """The position of the last ``.index`` entry before ``slot`` at which a whole valid batch starts
        (at most :data:`RECOVER_ENTRIES` entries back), else 0: where a read goes when the entry at
        ``slot`` points into a batch's middle.  A note says so."""
        index, records = self.offset_index(seg), self.records(seg)
        if index is None:  # no usable .index gave the position: the segment's start
            return 0
        found, at = 0, "the segment start"
        for s in range(slot - 1, max(-1, slot - 1 - RECOVER_ENTRIES), -1):
            p = index.entry(s).position
            if 0 <= p < position and starts_batch(records, p):
                found, at = p, f"entry #{s}"
                break
        unreadable = unreadable_at(records, position)
        if unreadable is not None:  # the bytes are not there to read (a tiered chunk), not a damaged index
            self.notes.append(f"{unreadable}; {what} from position {found} ({at}) instead")
            return found
        self.notes.append(
            f"{index.path}: entry #{slot} points at position {position}, where no whole valid batch "
            f"starts (the index is damaged, see kseg verify-index); {what} from position {found} "
            f"({at}) instead"
        )
        return found

    def floor_segment(self, offset: int) -> int:
        """Index in :attr:`segments` of the largest base offset <= ``offset``; -1 if none."""
        lo, hi = 0, len(self.segments) - 1
        found = -1
        while lo <= hi:
            mid = (lo + hi) // 2
            if self.segments[mid].base_offset <= offset:
                found, lo = mid, mid + 1
            else:
                hi = mid - 1
        return found

    def index_step(self, seg: Segment, target: int) -> IndexStep:
        """``OffsetIndex.lookup(target)`` on the segment's index, as a step."""
        index = self.offset_index(seg)
        if index is None:
            return IndexStep(None, 0, -1, seg.base_offset, 0, seg.base_offset, target)
        slot = index.lookup_slot(target)
        offset, position = index.lookup(target)
        return IndexStep(index.path, index.entries, slot, offset, position, seg.base_offset, target)


def log_path(seg: Segment) -> str:
    """The segment's ``.log`` (a :class:`PartitionLog` holds only segments with one)."""
    if seg.log is None:
        raise InputError("no .log file beside this index", path=seg.index or seg.name)
    return seg.log


RECOVER_ENTRIES = 64  # index entries tried backwards before reading a segment from its start


def starts_batch(records: FileRecords, position: int) -> bool:
    """Whether a whole batch with a valid CRC starts at ``position`` (what a genuine index entry names)."""
    try:
        batch = records.batch_at(position)
    except KsegError:
        return False
    return batch is not None and batch.is_valid()


def unreadable_at(records: FileRecords, position: int) -> str | None:
    """Why the bytes at ``position`` cannot be read at all (a tiered segment's chunk that does not decrypt or
    decompress, an object cut short: :class:`~kseg.storage.tiered.ChunkError`), else ``None``."""
    try:
        records.batch_at(position)
    except ChunkError as exc:
        return exc.describe()
    except KsegError:
        return None
    return None
