"""Reading politely on a live broker: ``--max-rate`` and ``--drop-cache``.

Both apply to the one segment reader's window reads
(:meth:`kseg.storage.records.FileRecords.window`), so every command gets them: the
:class:`ReadPolicy` is what a read context (:class:`kseg.storage.context.ReadContext`) holds.

``--max-rate``: after each window read the reader sleeps until the bytes read
so far under one read context (:class:`kseg.storage.context.ReadContext`) in this process average at
most the rate (a token bucket without burst; with ``--jobs N`` the rate is split between the N
processes).

``--drop-cache``: kseg's reads should not push the broker's hot pages out of
the page cache (the reason Kafka added ``--max-bytes`` to its dump tool,
KIP-824).  Before reading a window kseg asks the kernel which of its pages
are resident (``mincore(2)`` on a throw-away ``mmap`` of the range, through
ctypes: Python's stdlib has no mincore); after the read it evicts with
``posix_fadvise(POSIX_FADV_DONTNEED)`` exactly the pages that were not
resident before, i.e. the pages kseg itself brought in.  Pages the broker had
cached stay.  Read-ahead is turned off on the file (``POSIX_FADV_RANDOM``) so
the kernel brings in no pages kseg did not ask for (8 MiB windows keep reads
large).  Approximations: a page the broker reads *while* kseg holds it is
dropped too (it was not resident before kseg's read); DONTNEED does not evict
dirty pages (a segment being written), which is what a broker wants.  Where
mincore is unavailable (not Linux, a remote file) nothing is evicted.
"""

from __future__ import annotations

import mmap
import os
import time
from functools import lru_cache
from typing import TYPE_CHECKING, Iterator, Union

if TYPE_CHECKING:
    from kseg.storage.context import ReadContext

PAGE = mmap.PAGESIZE


class Throttle:
    """At most ``rate`` bytes a second, averaged from the first read."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.start: float | None = None
        self.done = 0

    def after(self, n: int) -> None:
        now = time.monotonic()
        if self.start is None:
            self.start = now
        self.done += n
        wait = self.done / self.rate - (now - self.start)
        if wait > 0:
            time.sleep(wait)


class _Libc:
    """``mmap``/``mincore``/``munmap`` from the C library, or None where they are missing."""

    def __init__(self) -> None:
        import ctypes  # only with --drop-cache: a plain run does not load it

        libc = ctypes.CDLL(None, use_errno=True)
        self.mmap = libc.mmap
        self.mmap.restype = ctypes.c_void_p
        self.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        self.mincore = libc.mincore
        self.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
        self.munmap = libc.munmap
        self.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


@lru_cache(maxsize=1)
def _libc() -> _Libc:
    """The C library's functions, loaded once (OSError, AttributeError where they are missing)."""
    return _Libc()


def resident(fd: int, start: int, length: int) -> bytes | None:
    """One byte per page of ``[start, start+length)`` (``start`` page-aligned), bit 0 set when the page is
    in the page cache; None when it cannot be told."""
    if length <= 0:
        return b""
    try:
        libc = _libc()
        addr = libc.mmap(None, length, mmap.PROT_READ, mmap.MAP_SHARED, fd, start)
    except (OSError, AttributeError):
        return None
    import ctypes

    if addr is None or addr == ctypes.c_void_p(-1).value:  # MAP_FAILED
        return None
    try:
        vec = ctypes.create_string_buffer((length + PAGE - 1) // PAGE)
        if libc.mincore(addr, length, vec) != 0:
            return None
        return vec.raw
    finally:
        libc.munmap(addr, length)


def _runs(vec: bytes) -> Iterator[tuple[int, int]]:
    """(first page, page count) of each run of pages that were not resident."""
    i, n = 0, len(vec)
    while i < n:
        if vec[i] & 1:
            i += 1
            continue
        j = i
        while j < n and not vec[j] & 1:
            j += 1
        yield i, j - i
        i = j


#: What :meth:`CacheGuard.before` hands :meth:`CacheGuard.after`: the first page's position and which pages
#: were resident before the read (None: not known, nothing is evicted).
PageToken = tuple[int, Union[bytes, None]]
#: What :meth:`ReadPolicy.before` hands :meth:`ReadPolicy.after`: the file descriptor and its page token.
ReadToken = tuple[int, PageToken]


class CacheGuard:
    """Evicts after each read the pages the read brought into the page cache."""

    def before(self, fd: int, position: int, length: int) -> PageToken:
        start = position - position % PAGE
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        except OSError:
            pass
        return start, resident(fd, start, position + length - start)

    def after(self, fd: int, token: PageToken) -> None:
        start, vec = token
        if vec is None:
            return
        for first, count in _runs(vec):
            try:
                os.posix_fadvise(fd, start + first * PAGE, count * PAGE, os.POSIX_FADV_DONTNEED)
            except OSError:
                return


class ReadPolicy:
    """What the reader does around each window read: ``--max-rate`` (bytes a second, this process's
    share) and ``--drop-cache``."""

    piece = 1 << 20  # with --max-rate a window is read (and paced, and metered) a MiB at a time

    def __init__(self, max_rate: float | None, drop_cache: bool) -> None:
        self.throttle = Throttle(max_rate) if max_rate else None
        self.guard = CacheGuard() if drop_cache else None

    def before(self, f: object, position: int, length: int) -> ReadToken | None:
        """Before ``length`` bytes of the open file ``f`` are read at ``position``: what :meth:`after`
        needs (with ``--drop-cache``, the pages of a local file already resident)."""
        if self.guard is None:
            return None
        fileno = getattr(f, "fileno", None)  # a remote file has none
        if fileno is None:
            return None
        try:
            fd: int = fileno()
        except (OSError, ValueError):  # not a file the OS holds
            return None
        return fd, self.guard.before(fd, position, length)

    def after(self, token: ReadToken | None, n: int) -> None:
        """After ``n`` bytes were read: evict what the read brought in, then keep ``--max-rate``."""
        guard = self.guard
        if token is not None and guard is not None:
            guard.after(*token)
        if self.throttle is not None:
            self.throttle.after(n)


def policy_of(context: ReadContext) -> ReadPolicy | None:
    """What the reader does around each window read under ``context`` (None: neither ``--max-rate`` nor
    ``--drop-cache``), made on first use and kept with the context (one pacing bucket per context and process)."""
    if not context.paced:
        return None
    if not context.pacing:
        context.pacing.append(ReadPolicy(context.max_rate, context.drop_cache))
    policy: ReadPolicy = context.pacing[0]
    return policy


def split(context: ReadContext, processes: int) -> None:
    """``--jobs N``: this process and each of the N it forks paces its reads under ``context`` at 1/N of
    ``--max-rate`` (the pacing bucket is the process's, not a setting: the context's value is unchanged)."""
    policy = policy_of(context)
    if policy is not None and policy.throttle is not None and processes > 1:
        policy.throttle = Throttle(policy.throttle.rate / processes)
