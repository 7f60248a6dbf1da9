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

import os
import struct
from typing import Iterator

from kseg.errors import CorruptRecordError, InputError
from kseg.storage.batch import FileBatch, LegacyBatch, V2Batch

_FRAME = struct.Struct(">qiib")  # offset, length, (epoch or crc), magic
HEADER_SIZE_UP_TO_MAGIC = 17
LOG_OVERHEAD = 12
MIN_RECORD_SIZE = 14  # LegacyRecord.RECORD_OVERHEAD_V0
DEFAULT_WINDOW = 8 << 20


def open_for_read(path: str):
    """Open ``path`` read-only, unbuffered, with an :class:`InputError` for the usual faults."""
    try:
        if os.path.isdir(path):
            raise InputError("is a directory, not a file", path=path)
        return open(path, "rb", buffering=0)
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except PermissionError:
        raise InputError("permission denied", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", path=path) from None


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
            self.size = os.fstat(self._f.fileno()).st_size
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

    def batch_at(self, position: int, max_size: int | None = None) -> FileBatch | None:
        """The batch starting at ``position`` if it fits in ``max_size`` bytes, else ``None``."""
        end = None if max_size is None else position + max_size
        for batch in self.batches(position, end):
            return batch
        return None
