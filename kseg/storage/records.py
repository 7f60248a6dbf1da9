"""The streaming segment reader (``FileRecords`` + ``FileLogInputStream``).

A ``.log`` file is read through one reused window buffer (``readinto``), so
memory stays constant whatever the file size; the file's size is fixed when
it is opened (a segment appended to while read is read up to that size; one
that shrinks under the reader ends with a clear error).

Batch framing (``FileLogInputStream.nextBatch``):

* iteration stops when at most 17 bytes remain (offset, length, epoch, magic);
* a length field below 14 is corrupt (Kafka throws ``CorruptRecordException``);
* a batch running past the end ends iteration: the rest are "invalid bytes".

Batches are handed out as :class:`kseg.storage.batch.FileBatch` objects
whose bytes live in the window: valid only until the iterator moves on.
"""

from __future__ import annotations

import io
import mmap
import os
import struct
from functools import lru_cache
from itertools import repeat
from operator import add
from typing import TYPE_CHECKING, Any, Iterator

from kseg import engine
from kseg.errors import CorruptRecordError, InputError
from kseg.format import legacy, v2
from kseg.format.crc import crc32c_function
from kseg.limits import INT64_MAX, INT64_MIN
from kseg.storage import files
from kseg.storage.batch import FileBatch, LegacyBatch, V2Batch, short_v2_header
from kseg.storage.context import ReadContext

if TYPE_CHECKING:
    from kseg.storage.context import Store
    from kseg.storage.read_policy import ReadPolicy

_FRAME = struct.Struct(">qiib")  # offset, length, (epoch or crc), magic
HEADER_SIZE_UP_TO_MAGIC = v2.HEADER_SIZE_UP_TO_MAGIC
LOG_OVERHEAD = legacy.LOG_OVERHEAD  # Records.LOG_OVERHEAD
MIN_RECORD_SIZE = legacy.RECORD_OVERHEAD_V0
DEFAULT_WINDOW = 8 << 20
SCAN_LIST = 512  # most batches in one list from FileRecords.scan (bounds memory for tiny batches)
_HEAD = v2.LAST_OFFSET_HEAD  # a batch's first 27 bytes: offset, length, magic, lastOffsetDelta
_INT32 = struct.Struct(">i")
_PREAD = getattr(os, "pread", None)  # POSIX


@lru_cache(maxsize=4)
def _heads(n: int) -> struct.Struct:
    """``n`` batch heads back to back: one ``unpack`` call, no tuple a batch."""
    return struct.Struct(">" + v2.LAST_OFFSET_FIELDS * n)


#: What :meth:`FileRecords.scan` hands out for a batch: ``(position, size, header, valid)`` -- the header
#: tuple in :class:`~kseg.format.v2.BatchHeader`'s order and whether its CRC holds -- or, for a batch that is
#: not a whole v2 batch in the window, ``(position, size, None, batch)``.  One tuple for both shapes, so the
#: per-batch loop builds nothing else; its last two fields are ``Any`` because callers tell the shapes apart
#: by the header being None after unpacking, which a type checker cannot follow.
ScanItem = tuple[int, int, Any, Any]


def read_policy_of(context: ReadContext) -> ReadPolicy | None:
    """The read policy of ``--max-rate`` and ``--drop-cache`` (:func:`kseg.storage.read_policy.policy_of`;
    the module is loaded only when one of them is given)."""
    if not context.paced:
        return None
    from kseg.storage.read_policy import policy_of

    return policy_of(context)


def _window_buffer(n: int) -> mmap.mmap | bytearray:
    """``n`` bytes of private anonymous memory where the platform has it, else a ``bytearray``: its pages
    are zeroed by the kernel when first written, so a reader that reads little (an index check, a
    lookup, a small segment) neither spends time zeroing the whole window nor counts it as resident."""
    if hasattr(mmap, "MAP_PRIVATE"):
        return mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE)
    return bytearray(n)  # pragma: no cover - Windows


def open_for_read(path: str, store: Store) -> files.ReadFile:
    """Open ``path`` read-only and unbuffered (the reader keeps its own window)."""
    return files.open_readonly(path, buffering=0, store=store)


class FileRecords:
    """A log segment file opened read-only, read through a reused window.

    ``end`` (``--max-bytes``) limits how far batches are read, like
    ``FileRecords.slice(0, maxBytes)``.  ``store``: where the file is (its segment's store,
    :mod:`kseg.storage.stores`); its read context paces the reads and meters them.  ``opened``: the file
    already opened by :func:`open_for_read` (with its segment's indexes, ``Segment.open``), owned from here.
    """

    __slots__ = ("path", "size", "end", "context", "_f", "_fd", "_buf", "_view", "_win_start", "_win_len")

    def __init__(
        self,
        path: str,
        end: int | None = None,
        window: int = DEFAULT_WINDOW,
        *,
        store: Store,
        opened: files.ReadFile | None = None,
    ) -> None:
        self.path = path
        self.context: ReadContext = store.context
        self._f = open_for_read(path, store) if opened is None else opened
        try:
            self.size = files.size_of(self._f)
        except OSError as exc:  # pragma: no cover - fstat on an open fd
            self._f.close()
            raise InputError(f"cannot stat: {exc}", path=path) from None
        self.end = self.size if end is None else max(0, min(end, self.size))
        self._fd = self._f.fileno() if isinstance(self._f, io.FileIO) else None  # None: a remote file
        chunk = getattr(self._f, "chunk_size", None)  # only a tiered segment's file has one (TieredLogFile)
        if chunk is not None:  # a window of about a chunk: a lookup fetches few
            window = min(window, max(chunk, 1 << 16))
        self._buf = _window_buffer(max(window, 1 << 16))
        self._view = memoryview(self._buf)
        self._win_start = 0
        self._win_len = 0

    # -- context management -------------------------------------------------
    def close(self) -> None:
        self._view.release()
        self._f.close()

    def __enter__(self) -> "FileRecords":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- raw reads ----------------------------------------------------------
    def read_at(self, position: int, n: int) -> bytearray:
        """Read exactly ``n`` bytes at ``position`` into a new buffer (not copied again: a batch larger
        than the window costs its size once)."""
        out = bytearray(n)
        self._read_into(position, memoryview(out))
        return out

    def _read_into(self, position: int, view: memoryview, partial_from: int | None = None) -> int:
        """Fill ``view`` from ``position``; returns the bytes read.  With ``partial_from``, a chunk of a tiered
        segment that cannot be read (kseg.storage.tiered) after at least that many bytes ends the read there:
        what precedes it is read, and the error comes when a read starts at it."""
        want = len(view)
        got = 0
        try:
            self._f.seek(position)
            while got < want:
                try:
                    n = self._f.readinto(view[got:])
                except CorruptRecordError:
                    if partial_from is None or got < partial_from:
                        raise
                    return got
                if not n:
                    break
                got += n
        except OSError as exc:
            raise InputError(f"read failed: {exc.strerror or exc}", path=self.path, position=position) from None
        if got < want:
            raise InputError(
                f"file shrank while being read: expected {want} bytes, found {got}",
                path=self.path,
                position=position + got,
            )
        return got

    def window(self, position: int, n: int) -> tuple[memoryview, int]:
        """Return ``(buffer, index)`` such that ``buffer[index:index+n]`` is the
        file's bytes at ``position``; ``n`` must not exceed the window size."""
        start = self._win_start
        if position >= start and position + n <= start + self._win_len:
            return self._view, position - start
        length = min(len(self._buf), self.size - position)
        if length < n:
            raise InputError(f"file shrank while being read: expected {n} bytes", path=self.path, position=position)
        self._win_start = position
        self._win_len = 0
        policy = read_policy_of(self.context)  # --max-rate, --drop-cache (kseg.storage.read_policy)
        meter = self.context.meter  # a progress bar's byte count
        if policy is None and meter is None:
            length = self._read_into(position, self._view[:length], partial_from=n)
        else:  # paced a piece at a time (a bar moves, a rate holds), else the whole window at once
            piece = policy.piece if policy is not None and policy.throttle is not None else length
            for off in range(0, length, piece):
                k = min(piece, length - off)
                token = None if policy is None else policy.before(self._f, position + off, k)
                self._read_into(position + off, self._view[off : off + k])
                if meter is not None:
                    meter(self.path, position + off, k)
                if policy is not None:
                    policy.after(token, k)
        self._win_len = length
        return self._view, 0

    def window_from(self, position: int) -> tuple[memoryview, int, int]:
        """``(buffer, index, n)``: the window's ``n`` bytes from ``position`` on, at ``buffer[index:]`` --
        the rest of the window read last when it holds ``position``, else a fresh window from there
        (a window loop reads each byte once: a batch crossing a window's end starts the next one)."""
        i = position - self._win_start
        if 0 <= i < self._win_len:
            return self._view, i, self._win_len - i
        n = min(len(self._buf), self.size - position)
        view, i = self.window(position, n)
        return view, i, n

    @property
    def window_size(self) -> int:
        return len(self._buf)

    def fileno(self) -> int:
        """The local file's descriptor (a kernel copy reads it); ``io.UnsupportedOperation`` for a file on
        an object store or a tiered segment's, as a file object without one."""
        if self._fd is None:
            raise io.UnsupportedOperation("not a local file")
        return self._fd

    # -- batches ------------------------------------------------------------
    def frame_at(self, position: int, end: int) -> FileBatch | None:
        """The batch framed at ``position``, or ``None`` where iteration stops.

        The framing rule of ``FileLogInputStream.nextBatch``, written once:
        ``None`` when at most 17 bytes remain before ``end`` or the batch runs
        past ``end``; :class:`CorruptRecordError` for a length field below 14.
        The batch's bytes are in the window when they fit in it.
        :meth:`batches`, :meth:`batch_at` and the general path of :meth:`scan`
        call it; scan's fast path (a whole v2 header in the window) applies
        the same two comparisons to the header it has already unpacked, and
        :meth:`last_offset_at` / :meth:`last_offsets` to a batch's head.
        """
        if position >= end - HEADER_SIZE_UP_TO_MAGIC:
            return None
        buf = self._view
        i = position - self._win_start
        if i < 0 or i + HEADER_SIZE_UP_TO_MAGIC > self._win_len:  # window(), inlined when in the window
            buf, i = self.window(position, HEADER_SIZE_UP_TO_MAGIC)
        offset, length, _, magic = _FRAME.unpack_from(buf, i)
        if length < MIN_RECORD_SIZE:
            raise self._too_small(length, position)
        total = LOG_OVERHEAD + length
        if position > end - total:
            return None
        if i + total > self._win_len:
            if total > len(self._buf):  # larger than the window: the batch keeps no bytes
                if magic >= 2:
                    return V2Batch(self, position, total, None, 0)
                return LegacyBatch(self, position, total, None, 0, offset, magic)
            buf, i = self.window(position, total)
        if magic >= 2:
            return V2Batch(self, position, total, buf, i)
        return LegacyBatch(self, position, total, buf, i, offset, magic)

    def _too_small(self, length: int, position: int) -> CorruptRecordError:
        return CorruptRecordError(
            f"found record size {length} smaller than minimum record overhead ({MIN_RECORD_SIZE})",
            path=self.path,
            position=position,
        )

    def batches(self, start: int = 0, end: int | None = None) -> Iterator[FileBatch]:
        """Yield every whole batch from ``start`` to ``end`` (default: the file's end
        or ``--max-bytes``), like ``FileRecords.slice(start, end - start).batches()``.

        Raises :class:`CorruptRecordError` for a length field below 14, as
        Kafka's shallow iteration does (:meth:`frame_at`).
        """
        end = self.end if end is None else min(end, self.end)
        pos = start
        frame_at = self.frame_at
        while (batch := frame_at(pos, end)) is not None:
            yield batch
            pos += batch.size

    def scan(self, start: int = 0, end: int | None = None) -> Iterator[list[ScanItem]]:
        """:meth:`batches` for shallow iteration at speed: no object per v2 batch.

        Yields lists of ``(position, size, header, valid)`` -- ``header`` the
        13 values of a :class:`kseg.format.v2.BatchHeader` in its order, as
        the plain tuple ``struct`` unpacks (see :class:`~kseg.format.v2.BatchHeader`
        for why; read it by unpacking or with the ``v2`` index constants, or
        name it with ``v2.BatchHeader._make(h)``), ``valid`` the result of
        ``is_valid()`` -- at most ``SCAN_LIST`` per list, and a list never
        spans two windows.  A batch that is not a whole v2 batch in the
        window (magic 0/1, shorter than a v2 header, larger than the window)
        comes as ``(position, size, None, batch)`` with its :class:`FileBatch`,
        ending its list: such a batch may move the window when its CRC is
        computed.  Framing, stopping and errors are those of :meth:`frame_at`;
        batches before a corrupt length are yielded before the error is raised.
        """
        end = self.end if end is None else min(end, self.end)
        stop = end - HEADER_SIZE_UP_TO_MAGIC
        pos = start
        unpack = v2.HEADER.unpack_from
        header_size, crc_start = v2.HEADER_SIZE, v2.ATTRIBUTES_OFFSET
        min_size, overhead = MIN_RECORD_SIZE, LOG_OVERHEAD
        crc = crc32c_function()
        view = self._view
        items: list[ScanItem] = []
        append = items.append
        ws, wl = self._win_start, self._win_len
        cscan = None if engine.C is None else engine.C.scan
        while pos < stop:
            if cscan is not None:
                # the compiled fast path (kseg.engine): every whole v2 batch in the window, into items;
                # it stops where the rules below have more to say (window, framing error, legacy batch)
                pos, done = cscan(view, ws, wl, pos, end, items, SCAN_LIST)
                if done or pos >= stop:  # (a full list is yielded after the loop)
                    break
                if len(items) >= SCAN_LIST:
                    yield items
                    items = []
                    append = items.append
                    continue
            i = pos - ws
            if i >= 0 and i + header_size <= wl:
                h = unpack(view, i)
                length = h[1]
                if length < min_size:  # frame_at's rule, on the unpacked header
                    if items:
                        yield items
                    raise self._too_small(length, pos)
                total = overhead + length
                if pos > end - total:  # frame_at's rule, on the unpacked header
                    break
                if i + total <= wl and h[3] >= 2 and total >= header_size:
                    append((pos, total, h, crc(view[i + crc_start : i + total]) == h[4]))
                    if len(items) >= SCAN_LIST:
                        yield items
                        items = []
                        append = items.append
                    pos += total
                    continue
            # the general path, one batch: the window moves, or the batch is not a plain v2 one
            if items:
                yield items
                items = []
                append = items.append
            item = self.scan_item(pos, end)
            if item is None:
                break
            append(item)
            if item[2] is None:  # a batch object ends its list: its CRC may move the window
                yield items
                items = []
                append = items.append
            ws, wl = self._win_start, self._win_len
            pos += item[1]
        if items:
            yield items

    def scan_item(self, pos: int, end: int) -> ScanItem | None:
        """:meth:`scan`'s item for the batch :meth:`frame_at` frames at ``pos`` (None: iteration ends)."""
        batch = self.frame_at(pos, end)
        if batch is None:
            return None
        if batch.buf is not None and type(batch) is V2Batch and batch.size >= v2.HEADER_SIZE:
            return (pos, batch.size, batch.h, batch.is_valid())
        return (pos, batch.size, None, batch)

    def batch_at(self, position: int, max_size: int | None = None) -> FileBatch | None:
        """The batch starting at ``position`` if it fits in ``max_size`` bytes, else ``None``.

        The first step of :meth:`batches` (same framing rules and errors),
        without a generator: index checks call this once per entry.
        """
        end = self.end if max_size is None else min(position + max_size, self.end)
        return self.frame_at(position, end)

    # -- last offsets from batch heads (DumpLogSegments.dumpIndex) ------------------------------------
    def last_offset_at(self, position: int, max_size: int | None = None) -> int | None:
        """``batch_at(position, max_size).last_offset``, read from the batch's first 27 bytes alone.

        Kafka's index check, ``slice(position, maxMessageSize).batches.iterator.next().lastOffset``:
        ``FileLogInputStream.nextBatch`` frames the batch as :meth:`frame_at` does (``None`` when
        no whole batch lies within ``max_size`` bytes and the file, :class:`CorruptRecordError` for
        a length below 14); ``FileChannelRecordBatch.lastOffset`` is then a v0/v1 entry's offset
        field, or a v2 batch's baseOffset + lastOffsetDelta from its 61-byte header, which must lie
        within the file (the error of :class:`~kseg.storage.batch.V2Batch`).  No CRC is checked and
        nothing past the head is read.  :meth:`last_offsets` is the same rule over many positions.
        """
        end = self.end if max_size is None else min(position + max_size, self.end)
        if position >= end - HEADER_SIZE_UP_TO_MAGIC:
            return None
        buf, i = self.window(position, min(_HEAD.size, self.size - position))
        offset, length, _, magic = _FRAME.unpack_from(buf, i)
        if length < MIN_RECORD_SIZE:
            raise self._too_small(length, position)
        if position > end - LOG_OVERHEAD - length:
            return None
        if magic < 2:
            entry_offset: int = offset
            return entry_offset
        if position + v2.HEADER_SIZE > self.size:
            raise short_v2_header(self.path, position, LOG_OVERHEAD + length)
        last_offset_delta: int = _INT32.unpack_from(buf, i + v2.LAST_OFFSET_DELTA_OFFSET)[0]
        return v2.last_offset(offset, last_offset_delta)

    def last_offsets(self, positions: list[int], max_size: int | None = None) -> list[int] | None:
        """:meth:`last_offset_at` of every position at once, or ``None``: then ask it one by one.

        The fast path of an index check (a batch every few KB: reading the log through the window
        would read all of it).  The 27-byte head of each batch is read alone (``pread``) and all
        are unpacked in one call; the list comes when every batch lies wholly within ``max_size``
        bytes and the file and either all are v2 batches of at least 61 bytes (baseOffset +
        lastOffsetDelta) or all are v0/v1 entries (their offset field): the cases where
        :meth:`last_offset_at` gives exactly that and raises nothing.  Anything else -- a position
        outside the file, a shorter or odd batch, a read error -- and a remote file or a read policy
        (``--max-rate``, ``--drop-cache`` pace and evict window reads) give ``None``.
        """
        n = len(positions)
        if n == 0:
            return []
        if self._fd is None or _PREAD is None or read_policy_of(self.context) is not None or min(positions) < 0:
            return None
        try:
            data = b"".join(map(_PREAD, repeat(self._fd, n), repeat(_HEAD.size, n), positions))
        except OSError:
            return None
        if len(data) != n * _HEAD.size:  # a head past the end of the file
            return None
        values = _heads(n).unpack(data)  # offset, length, magic, lastOffsetDelta; batch by batch
        lengths = values[1::4]
        if max_size is not None and max(lengths) > max_size - LOG_OVERHEAD:
            return None
        limit = self.end - LOG_OVERHEAD
        if max(positions) + max(lengths) > limit and max(map(add, positions, lengths)) > limit:
            return None  # (the first test decides for all but the chunk at the end of the log)
        magics = values[2::4]
        if min(magics) >= 2 and min(lengths) >= v2.HEADER_SIZE - LOG_OVERHEAD:
            lasts = list(map(add, values[0::4], values[3::4]))
            if max(lasts) > INT64_MAX or min(lasts) < INT64_MIN:  # Java's long wraps (one pass in C first)
                lasts = list(map(v2.java_long, lasts))
            return lasts
        if max(magics) < 2 and min(lengths) >= MIN_RECORD_SIZE:
            return list(values[0::4])
        return None


class SecondReader:
    """A second reader of the same log, opened on first use, for the few batches that need a
    batch object (control batches, invalid ones) while :meth:`FileRecords.scan` holds the
    first reader's window (its items are valid only until it moves on)."""

    __slots__ = ("path", "store", "window", "records")

    def __init__(self, path: str, store: Store, window: int = 1 << 16) -> None:
        self.path, self.store, self.window = path, store, window
        self.records: FileRecords | None = None

    def batch(self, position: int) -> FileBatch:
        """The batch at ``position`` (:meth:`FileRecords.batch_at`), read through this second reader: one the
        first pass framed there, so none framing there now means the file changed under the reader (an
        :class:`~kseg.errors.InputError`, as a file that shrinks)."""
        if self.records is None:
            self.records = FileRecords(self.path, window=self.window, store=self.store)
        batch = self.records.batch_at(position)
        if batch is None:
            raise InputError("file changed while being read: no batch where one was", path=self.path, position=position)
        return batch

    def close(self) -> None:
        if self.records is not None:
            self.records.close()
