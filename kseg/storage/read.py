"""The one bounded reader of auxiliary files: checkpoints, properties, manifests, key files, snapshots.

Segments have their streaming reader (:mod:`kseg.storage.records`); every other file kseg reads goes
through here, whatever holds its bytes: an :class:`AuxFile` is an *opener* (a callable giving a binary
file: a local file opened by :func:`open_local`, an object of a store), the name shown in messages and
the size known before reading (``fstat``, the store's listing), and the :class:`Kind` of file it is.

* Only a regular file is read: :func:`open_local` refuses a directory, a FIFO, a socket or a device
  with one line, and never blocks doing so (it opens with ``O_NONBLOCK`` and looks with ``fstat`` at
  what it opened: a FIFO swapped in after a ``stat`` cannot hang the run either).
* The size is bounded *before* a byte is read: each kind states its bound (``Kind.max_bytes``) and what
  it rests on, and the refusal names both -- an :class:`InputError` (exit 2), as for a segment.
* Text is read line by line (:meth:`AuxFile.lines`: ``BufferedReader.readLine``'s line ends, 64 KiB read
  at a time, each line decoded as UTF-8 on its own, a line longer than ``Kind.max_line`` refused), so
  what a caller holds is what it keeps of the lines, never the file; bytes are read whole only for the
  kinds that are parsed whole (JSON, PEM), up to their bound (:meth:`AuxFile.data`).
"""

from __future__ import annotations

import errno
import io
import os
import stat
from contextlib import closing
from typing import Any, Callable, Iterator

from kseg.errors import CheckpointError, InputError
from kseg.valueclass import FrozenValue, Protocol

PIECE = 64 << 10  # bytes read at a time
NOT_REGULAR = "not a regular file (a FIFO, socket or device)"


class Readable(Protocol):
    """What the reader needs of an opened file: a local one, an object of a store, bytes of a tiered segment."""

    def read(self, size: int = -1, /) -> Any: ...

    def close(self) -> None: ...


class Kind(FrozenValue):
    """A kind of auxiliary file and its bounds: ``max_bytes`` (refused before reading when larger),
    ``max_line`` (a longer line is refused), ``why``: what the bound rests on, said in the refusal."""

    _fields = ("name", "max_bytes", "why", "max_line")
    name: str
    max_bytes: int
    why: str
    max_line: int

    def __init__(self, name: str, max_bytes: int, why: str, max_line: int = 1 << 16) -> None:
        self._set(name=name, max_bytes=max_bytes, why=why, max_line=max_line)

    def refusal(self, path: str, what: str, bound: str) -> InputError:
        """The one line refusing a file of this kind: ``what`` passes the ``bound``, and what it rests on."""
        return InputError(f"{what}: kseg reads {self.name} files of at most {bound} ({self.why})", path=path)


def _open_error(exc: OSError, path: str) -> InputError:
    """The OS's reason, in its words ("No such file or directory", "Permission denied")."""
    return InputError(str(exc.strerror or exc), path=path)


def open_local(path: str) -> tuple[io.FileIO, int]:
    """A local regular file opened read-only, and its size; anything else one :class:`InputError`."""
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(os.strerror(errno.EISDIR), path=path)  # as open(2) says it
        if not stat.S_ISREG(mode):
            raise InputError(NOT_REGULAR, path=path)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _open_error(exc, path) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between the stat and the open
            raise InputError(NOT_REGULAR, path=path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return io.FileIO(fd, "rb", closefd=True), st.st_size
    except BaseException:
        os.close(fd)
        raise


def check_local(path: str, kind: Kind) -> None:
    """What :meth:`AuxFile.data` would refuse of a local file (not there, not regular, not readable, over
    the bound), found without reading a byte of it."""
    AuxFile.local(path, kind).check()


class AuxFile:
    """One auxiliary file to read: ``opener()`` gives a binary file (closed by the reader), ``name`` is
    shown in messages, ``size`` is its size as known before reading (the bound is checked against it)."""

    __slots__ = ("opener", "name", "size", "kind")

    def __init__(self, opener: Callable[[], Readable], name: str, size: int, kind: Kind) -> None:
        self.opener, self.name, self.size, self.kind = opener, name, size, kind

    @classmethod
    def local(cls, path: str, kind: Kind, name: str | None = None) -> AuxFile:
        """A local file: refused now if it is no regular file or cannot be opened, opened again by each read."""
        f, size = open_local(path)
        f.close()
        return cls(lambda: open_local(path)[0], name or path, size, kind)

    def refusal(self, what: str, bound: str) -> InputError:
        return self.kind.refusal(self.name, what, bound)

    def check(self) -> None:
        """Refuse the file when its size passes the kind's bound (before any read)."""
        if self.size > self.kind.max_bytes:
            raise self.refusal(f"{self.size} bytes", f"{self.kind.max_bytes} bytes")

    def pieces(self, size: int = PIECE) -> Iterator[bytes]:
        """The file's bytes as a stream, at most ``size`` bytes a piece, up to the kind's bound (a file that
        grew past it while read is refused); memory is one piece."""
        self.check()
        bound, total = self.kind.max_bytes, 0
        with closing(self.opener()) as f:
            while True:
                try:
                    piece = f.read(min(size, bound + 1 - total))
                except OSError as exc:
                    raise InputError(f"cannot read: {exc.strerror or exc}", path=self.name, position=total) from None
                if not piece:
                    return
                total += len(piece)
                if total > bound:
                    raise self.refusal("grew while read", f"{bound} bytes")
                yield piece

    def data(self) -> bytes:
        """The whole file, at most the kind's bound (a file that grew past it while read is refused)."""
        return b"".join(self.pieces())

    def lines(self) -> Iterator[str]:
        """The lines as ``BufferedReader.readLine`` gives them (ends ``\\n``, ``\\r`` or ``\\r\\n``; a last
        line without an end is a line), each decoded as UTF-8 (a :class:`CheckpointError` at its byte
        otherwise), read a piece at a time: memory is one piece and one line."""
        max_line = self.kind.max_line
        pending, at = b"", 0  # bytes of an unfinished line, where it starts
        cr = False  # the last piece ended in '\r': a '\n' starting the next one belongs to it
        for piece in self.pieces():
            if cr and piece[:1] == b"\n":
                piece, at = piece[1:], at + 1
            cr = piece[-1:] == b"\r"
            data = pending + piece
            start = 0
            for end, width in _ends(data):
                yield self._decode(data[start:end], at + start)
                start = end + width
            pending, at = data[start:], at + start
            if len(pending) > max_line:
                raise self.refusal(f"a line longer than {max_line} bytes at byte {at}", f"{max_line} bytes a line")
        if pending:
            yield self._decode(pending, at)

    def _decode(self, raw: bytes, at: int) -> str:
        if len(raw) > self.kind.max_line:
            raise self.refusal(f"a line of {len(raw)} bytes at byte {at}", f"{self.kind.max_line} bytes a line")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CheckpointError("not UTF-8 text", path=self.name, position=at + exc.start) from None


def _ends(data: bytes) -> Iterator[tuple[int, int]]:
    """(where, width) of each line end in ``data``: ``\\r\\n`` is one end; a ``\\r`` last in ``data`` is
    an end too (the next piece's ``\\n``, if any, is then skipped by the caller)."""
    i, n = 0, len(data)
    cr = data.find(b"\r")  # the next '\r' at or after i (-1: none left): found again only once passed
    while i < n:
        lf = data.find(b"\n", i)
        if 0 <= cr < i:
            cr = data.find(b"\r", i)
        if lf < 0 and cr < 0:
            return
        if cr < 0 or 0 <= lf < cr:
            yield lf, 1
            i = lf + 1
        elif cr + 1 < n and data[cr + 1] == 10:
            yield cr, 2
            i = cr + 2
        else:
            yield cr, 1
            i = cr + 1


def lines_of_text(text: str) -> Iterator[str]:
    """The lines of text already in memory, by the same rule as :meth:`AuxFile.lines`."""
    data = text.replace("\r\n", "\n").replace("\r", "\n")
    parts = data.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return iter(parts)
