"""Searching bytes for ``kseg grep``'s literals: in the reader's window (the compiled engine's search, else
the buffer's own) and in a stream of decompressed pieces."""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Iterator

from kseg import engine


def finder(view: Any) -> Callable[[bytes, int, int], int] | None:
    """``bytes.find`` over the buffer of the reader's window ``view`` (indexes into the buffer): the
    compiled engine's (the C library's ``memmem``, some times faster than Python's search for the short
    literals of a query), else the window's buffer's own (an mmap or a bytearray); None when the view
    exposes neither."""
    if engine.C is not None:
        return partial(engine.C.find, view)
    return getattr(view.obj, "find", None)


def holds(view: Any, start: int, end: int, literals: tuple[bytes, ...]) -> bool:
    """Whether ``view[start:end]`` holds every one of ``literals``: searched in place in the window's
    buffer (an mmap or a bytearray) when the view exposes one, else True (the records are read)."""
    find = finder(view)
    if find is None:
        return True
    return all(find(literal, start, end) >= 0 for literal in literals)


def stream_holds(pieces: Iterator[Any], literals: tuple[bytes, ...]) -> bool:
    """Whether the stream of ``pieces`` holds every one of ``literals``, one straddling two pieces too (the
    last bytes of the pieces before are searched with the next one's first); it stops reading once every
    one is found."""
    wanted = list(literals)
    keep = max(map(len, literals)) - 1
    tail = b""
    for piece in pieces:
        joint = tail + bytes(piece[:keep]) if tail else b""
        wanted = [lit for lit in wanted if piece.find(lit) < 0 and joint.find(lit) < 0]
        if not wanted:
            return True
        if keep:
            tail = (tail + bytes(piece[-keep:]))[-keep:]
    return not wanted
