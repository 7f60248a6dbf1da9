"""The clean segments' results of a ``verify-index --spark`` run, kept on the driver's disk, not in its memory.

The local run prints a line for every segment, clean ones too; the driver prints the same lines, in
discovery order, once the job is done.  It holds the results it shows anyway (problems, failures) and the
grouped notes; a clean segment's result is written here as its bin settles (one *chunk* per bin, in
index order) and read back at the end, the chunks merged by index one record at a time each -- so what
the driver holds does not grow with the clean segments (10^7 of them: a file of about 4 GB in ``$TMPDIR``,
never 10^7 objects).
"""

from __future__ import annotations

import heapq
import os
import pickle
import struct
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

_LENGTH = struct.Struct(">I")


class Spool:
    """Results written in chunks, each in index order; :meth:`merged` gives them all in index order."""

    def __init__(self) -> None:
        self._file: Any = None  # a temporary file, made on the first chunk (none for a run without clean segments)
        self._chunks: list[tuple[int, int]] = []  # (start, end) byte offsets of each chunk
        self.count = 0

    def add(self, results: Iterable[tuple[int, Any]]) -> None:
        """Write one chunk: ``(index, result)`` pairs in increasing index order."""
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="kseg-clean-")
        f = self._file
        f.seek(0, os.SEEK_END)
        start = f.tell()
        for pair in results:
            data = pickle.dumps(pair, protocol=pickle.HIGHEST_PROTOCOL)
            f.write(_LENGTH.pack(len(data)))
            f.write(data)
            self.count += 1
        end = f.tell()
        if end > start:
            self._chunks.append((start, end))

    def merged(self) -> Iterator[tuple[int, Any]]:
        """Every ``(index, result)`` written, in index order (a k-way merge of the chunks)."""
        if self._file is None:
            return iter(())
        return heapq.merge(*(_chunk(self._file, start, end) for start, end in self._chunks), key=lambda pair: pair[0])

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _chunk(f: Any, start: int, end: int) -> Iterator[tuple[int, Any]]:
    """One chunk's records, read one at a time at their own offsets (the chunks share the file)."""
    at = start
    while at < end:
        f.seek(at)
        (size,) = _LENGTH.unpack(f.read(_LENGTH.size))
        data = f.read(size)
        at += _LENGTH.size + size
        yield pickle.loads(data)  # noqa: S301 - written by this process a moment ago
