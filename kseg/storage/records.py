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

import struct
from typing import Iterator

from kseg.errors import CorruptRecordError, InputError
from kseg.storage import files
from kseg.format import v2
from kseg.storage.batch import FileBatch, LegacyBatch, V2Batch, crc32c_function

_FRAME = struct.Struct(">qiib")  # offset, length, (epoch or crc), magic
HEADER_SIZE_UP_TO_MAGIC = 17
LOG_OVERHEAD = 12
MIN_RECORD_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0
DEFAULT_WINDOW = 8 << 20
SCAN_LIST = 512  # most batches in one list from FileRecords.scan (bounds memory for tiny batches)


def open_for_read(path: str):
    """Open ``path`` read-only and unbuffered (the reader keeps its own window)."""
    return files.open_readonly(path, buffering=0)


class FileRecords:
    """A log segment file opened read-only, read through a reused window.

    ``end`` (``--max-bytes``) limits how far batches are read, like
    ``FileRecords.slice(0, maxBytes)``.
    """

    __slots__ = ("path", "size", "end", "_f", "_buf", "_view", "_win_start", "_win_len")

    def __init__(self, path: str, end: int | None = None, window: int = DEFAULT_WINDOW) -> None:
        self.path = path
        self._f = open_for_read(path)
        try:
            self.size = files.size_of(self._f)
        except OSError as exc:  # pragma: no cover - fstat on an open fd
            self._f.close()
            raise InputError(f"cannot stat: {exc}", path=path) from None
        self.end = self.size if end is None else max(0, min(end, self.size))
        self._buf = bytearray(max(window, 1 << 16))
        self._view = memoryview(self._buf)
        self._win_start = 0
        self._win_len = 0

    # -- context management -------------------------------------------------
    def close(self) -> None:
        self._view.release()
        self._f.close()

    def __enter__(self) -> "FileRecords":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- raw reads ----------------------------------------------------------
    def read_at(self, position: int, n: int) -> bytes:
        """Read exactly ``n`` bytes at ``position`` into a new object."""
        out = bytearray(n)
        self._read_into(position, memoryview(out))
        return bytes(out)

    def _read_into(self, position: int, view: memoryview) -> None:
        want = len(view)
        got = 0
        try:
            self._f.seek(position)
            while got < want:
                n = self._f.readinto(view[got:])
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

    def window(self, position: int, n: int) -> tuple[memoryview, int]:
        """Return ``(buffer, index)`` such that ``buffer[index:index+n]`` is the
        file's bytes at ``position``; ``n`` must not exceed the window size."""
        start = self._win_start
        if position >= start and position + n <= start + self._win_len:
            return self._view, position - start
        length = min(len(self._buf), self.size - position)
        if length < n:
            raise InputError(
                f"file shrank while being read: expected {n} bytes", path=self.path, position=position
            )
        self._win_start = position
        self._win_len = 0
        self._read_into(position, self._view[:length])
        self._win_len = length
        return self._view, 0

    @property
    def window_size(self) -> int:
        return len(self._buf)

    # -- batches ------------------------------------------------------------
    def batches(self, start: int = 0, end: int | None = None) -> Iterator[FileBatch]:
        """Yield every whole batch from ``start`` to ``end`` (default: the file's end
        or ``--max-bytes``), like ``FileRecords.slice(start, end - start).batches()``.

        Raises :class:`CorruptRecordError` for a length field below 14, as
        Kafka's shallow iteration does.  Use :meth:`valid_bytes_after` to learn
        where iteration stopped.
        """
        end = self.end if end is None else min(end, self.end)
        pos = start
        unpack = _FRAME.unpack_from
        winsize = len(self._buf)
        while pos < end - HEADER_SIZE_UP_TO_MAGIC:
            buf, i = self.window(pos, HEADER_SIZE_UP_TO_MAGIC)
            offset, length, _, magic = unpack(buf, i)
            if length < MIN_RECORD_SIZE:
                raise CorruptRecordError(
                    f"found record size {length} smaller than minimum record overhead ({MIN_RECORD_SIZE})",
                    path=self.path,
                    position=pos,
                )
            total = LOG_OVERHEAD + length
            if pos > end - total:
                return
            if total <= winsize:
                buf, i = self.window(pos, total)
            else:
                buf, i = None, 0
            if magic >= 2:
                yield V2Batch(self, pos, total, buf, i)
            else:
                yield LegacyBatch(self, pos, total, buf, i, offset, magic)
            pos += total

    def scan(self, start: int = 0, end: int | None = None) -> Iterator[list]:
        """:meth:`batches` for shallow iteration at speed: no object per v2 batch.

        Yields lists of ``(position, size, header, valid)`` -- ``header`` the
        v2 header tuple (``kseg.format.v2`` indexes), ``valid`` the result of
        ``is_valid()`` -- at most ``SCAN_LIST`` per list, and a list never spans two windows.  A batch that is
        not a whole v2 batch in the window (magic 0/1, shorter than a v2
        header, larger than the window) comes as ``(position, size, None,
        batch)`` with its :class:`FileBatch`, ending its list: such a batch
        may move the window when its CRC is computed.  Framing, stopping and
        errors are those of :meth:`batches`; batches before a corrupt length
        are yielded before the error is raised.
        """
        end = self.end if end is None else min(end, self.end)
        pos = start
        header = v2.HEADER.unpack_from
        frame = _FRAME.unpack_from
        crc = crc32c_function()
        view = self._view
        winsize = len(self._buf)
        items: list = []
        append = items.append
        ws, wl = self._win_start, self._win_len
        while pos < end - HEADER_SIZE_UP_TO_MAGIC:
            i = pos - ws
            if i < 0 or i + v2.HEADER_SIZE > wl:
                if i < 0 or i + HEADER_SIZE_UP_TO_MAGIC > wl or ws + wl < self.size:
                    if items:
                        yield items
                        items = []
                        append = items.append
                    self.window(pos, HEADER_SIZE_UP_TO_MAGIC)
                    ws, wl = self._win_start, self._win_len
                    i = 0
            if i + v2.HEADER_SIZE <= wl:
                h = header(view, i)
                offset, length, magic = h[0], h[1], h[3]
            else:  # the file's last bytes
                h = None
                offset, length, _, magic = frame(view, i)
            if length < MIN_RECORD_SIZE:
                if items:
                    yield items
                raise CorruptRecordError(
                    f"found record size {length} smaller than minimum record overhead ({MIN_RECORD_SIZE})",
                    path=self.path,
                    position=pos,
                )
            total = LOG_OVERHEAD + length
            if pos > end - total:
                break
            if i + total > wl:
                if items:
                    yield items
                    items = []
                    append = items.append
                if total <= winsize:
                    self.window(pos, total)
                    ws, wl = self._win_start, self._win_len
                    i = 0
                    if h is None and total >= v2.HEADER_SIZE:
                        h = header(view, 0)
                else:
                    i = -1
            if i >= 0 and h is not None and magic >= 2 and total >= v2.HEADER_SIZE:
                append((pos, total, h, crc(view[i + v2.ATTRIBUTES_OFFSET : i + total]) == h[4]))
                if len(items) >= SCAN_LIST:
                    yield items
                    items = []
                    append = items.append
            else:
                buf = view if i >= 0 else None
                i = max(i, 0)
                if magic >= 2:
                    batch = V2Batch(self, pos, total, buf, i)
                else:
                    batch = LegacyBatch(self, pos, total, buf, i, offset, magic)
                append((pos, total, None, batch))
                yield items
                items = []
                append = items.append
                ws, wl = self._win_start, self._win_len
            pos += total
        if items:
            yield items

    def batch_at(self, position: int, max_size: int | None = None) -> FileBatch | None:
        """The batch starting at ``position`` if it fits in ``max_size`` bytes, else ``None``.

        The first step of :meth:`batches` (same framing rules and errors),
        without a generator: index checks call this once per entry.
        """
        end = self.end if max_size is None else min(position + max_size, self.end)
        if position >= end - HEADER_SIZE_UP_TO_MAGIC:
            return None
        buf, i = self.window(position, HEADER_SIZE_UP_TO_MAGIC)
        offset, length, _, magic = _FRAME.unpack_from(buf, i)
        if length < MIN_RECORD_SIZE:
            raise CorruptRecordError(
                f"found record size {length} smaller than minimum record overhead ({MIN_RECORD_SIZE})",
                path=self.path,
                position=position,
            )
        total = LOG_OVERHEAD + length
        if position > end - total:
            return None
        if total <= len(self._buf):
            buf, i = self.window(position, total)
        else:
            buf, i = None, 0
        if magic >= 2:
            return V2Batch(self, position, total, buf, i)
        return LegacyBatch(self, position, total, buf, i, offset, magic)
