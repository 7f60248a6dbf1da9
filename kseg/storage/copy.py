"""A byte range of a segment appended to a new file, by the kernel where it can.

:func:`copy_range` asks ``copy_file_range(2)`` first (in the kernel: no pass through user space, and a
reflink on file systems that share extents), then ``sendfile(2)``, then reads through the segment reader's
window and writes -- the only way for a file on an object store or a tiered segment's, and what a kernel
copy that fails or comes up short falls back to: the error is then raised by its side, a read's as the
reader's :class:`~kseg.errors.InputError` naming the input, a write's as ``OSError`` for the caller to name
its file.  With ``--max-rate`` or ``--drop-cache`` the kernel copies a piece at a time, paced and evicted
as the window's reads are (:mod:`kseg.storage.read_policy`).
"""

from __future__ import annotations

import os
import queue
import threading
from typing import Callable

from kseg.storage import read_policy
from kseg.storage.records import FileRecords

KERNEL_PIECE = 64 << 20  # bytes asked of one kernel copy call (Ctrl-C is seen between calls)


def _copy_file_range(src: int, dst: int, position: int, n: int) -> int:
    return os.copy_file_range(src, dst, n, position)


def _sendfile(src: int, dst: int, position: int, n: int) -> int:
    return os.sendfile(dst, src, position, n)


KERNEL_COPIES: tuple[Callable[[int, int, int, int], int], ...] = tuple(
    call
    for call, name in ((_copy_file_range, "copy_file_range"), (_sendfile, "sendfile"))
    if hasattr(os, name)  # Linux has both; other systems one or neither
)


def copy_range(records: FileRecords, fd: int, position: int, n: int) -> None:
    """Append bytes ``[position, position + n)`` of ``records``' file to the file open as ``fd`` (at its
    offset)."""
    end = position + n
    position = _kernel_copy(records, fd, position, end)
    while position < end:  # what the kernel did not copy: through the window
        k = min(records.window_size, end - position)
        buf, i = records.window(position, k)
        view = buf[i : i + k]
        while view:
            view = view[os.write(fd, view) :]
        position += k


def _kernel_copy(records: FileRecords, fd: int, position: int, end: int) -> int:
    """Copy by the kernel from ``position`` as far as it goes; returns where it stopped."""
    try:
        src = records.fileno()
    except (OSError, ValueError):
        return position
    policy = read_policy.policy_of(records.context)
    piece = KERNEL_PIECE if policy is None else policy.piece
    for call in KERNEL_COPIES:
        while position < end:
            k = min(piece, end - position)
            token = None if policy is None else policy.before(records, position, k)
            try:
                done = call(src, fd, position, k)
            except OSError:  # unsupported here (EXDEV, EINVAL, ENOSYS...), or failed: the next way says which
                done = 0
            if policy is not None:
                policy.after(token, done)
            if done <= 0:  # 0: the input ended early (it shrank): the window's read says so
                break
            position += done
        if position >= end:
            break
    return position


class CopyThread:
    """Ranges of ``records`` appended to the file open as ``fd`` in the order queued, by a second thread
    (the kernel's copy releases the GIL: the caller reads on while it copies).  At most :data:`DEPTH` ranges
    wait, so memory and the pages read but not yet copied stay bounded.  An error of the copy (a write's
    ``OSError``, a read's :class:`~kseg.errors.InputError`) is raised in the caller's thread, by the next
    :meth:`put` or by :meth:`finish`; the ranges queued after it are not copied.

    Only for a local file without ``--max-rate`` or ``--drop-cache`` (:func:`threaded`): the polite reads'
    pacing is the reader's, in one thread."""

    DEPTH = 2  # one range copied, two waiting: the copy is at most 128 MiB behind the reading (4 x 32 MiB)

    def __init__(self, records: FileRecords, fd: int) -> None:
        self.records, self.fd = records, fd
        self.error: BaseException | None = None
        self._stopped = False
        self._queue: queue.Queue[tuple[int, int] | None] = queue.Queue(self.DEPTH)
        self._thread = threading.Thread(target=self._run, name="kseg-copy", daemon=True)
        self._thread.start()

    def put(self, position: int, n: int) -> None:
        """Queue bytes ``[position, position + n)`` (waits while :data:`DEPTH` ranges wait)."""
        self._raise()
        self._queue.put((position, n))

    def finish(self) -> None:
        """Every range queued copied; raises the copy's error, if any."""
        self._end()
        self._raise()

    def abandon(self) -> None:
        """Stop after the range being copied (the output is discarded)."""
        self._stopped = True
        self._end()

    def _end(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def _raise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            self._stopped = True
            raise error

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if self._stopped or self.error is not None:
                continue  # drained, so a caller waiting to queue is not held
            try:
                copy_range(self.records, self.fd, *item)
            except BaseException as exc:  # raised in the caller's thread
                self.error = exc


def threaded(records: FileRecords) -> bool:
    """Whether ``records`` can be copied by a :class:`CopyThread`: a local file (the kernel copies it),
    read without ``--max-rate`` or ``--drop-cache``."""
    try:
        records.fileno()
    except (OSError, ValueError):
        return False
    return bool(KERNEL_COPIES) and read_policy.policy_of(records.context) is None
