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
    piece = KERNEL_PIECE if policy is None else read_policy.PIECE
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
