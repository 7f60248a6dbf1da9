"""A segment's byte range appended to a new file (kseg.storage.copy): by the kernel where it can, through
the reader's window where the kernel refuses the files (an ``O_APPEND`` target: ``copy_file_range`` and
``sendfile`` both refuse it), the same bytes either way; a failure raised by its side.  Ranges copied by a
second thread (``CopyThread``): in the order queued, its errors raised in the caller's thread."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from kseg.errors import InputError
from kseg.storage.copy import CopyThread, copy_range, threaded
from kseg.storage.records import FileRecords
from tests.stores import local


@pytest.fixture
def source(tmp_path: Path) -> tuple[Path, bytes]:
    data = os.urandom(3 << 20) + bytes(range(256)) * 100
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    return path, data


@pytest.mark.parametrize("flags", [0, os.O_APPEND], ids=["kernel", "window"])
def test_ranges_copied_in_order(tmp_path: Path, source: tuple[Path, bytes], flags: int) -> None:
    path, data = source
    out = tmp_path / "out.log"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | flags, 0o644)
    try:
        with FileRecords(str(path), window=1 << 16, store=local()) as records:
            copy_range(records, fd, 5, 100)
            copy_range(records, fd, 1 << 20, (2 << 20) + 12345)  # larger than the window
            copy_range(records, fd, len(data) - 7, 7)
    finally:
        os.close(fd)
    assert out.read_bytes() == data[5:105] + data[1 << 20 : (3 << 20) + 12345] + data[-7:]


def test_an_input_that_shrank_is_the_input_s_error(tmp_path: Path, source: tuple[Path, bytes]) -> None:
    path, data = source
    fd = os.open(tmp_path / "out.log", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with FileRecords(str(path), store=local()) as records:
            os.truncate(path, 1000)
            with pytest.raises(InputError, match="shrank") as info:
                copy_range(records, fd, 0, 5000)
    finally:
        os.close(fd)
    assert info.value.path == str(path)


def test_a_write_that_fails_is_an_os_error(tmp_path: Path, source: tuple[Path, bytes]) -> None:
    path, _ = source
    (tmp_path / "out.log").write_bytes(b"")
    fd = os.open(tmp_path / "out.log", os.O_RDONLY)  # not open for writing: every way fails to write
    try:
        with FileRecords(str(path), store=local()) as records, pytest.raises(OSError):
            copy_range(records, fd, 0, 5000)
    finally:
        os.close(fd)


@pytest.mark.parametrize("flags", [0, os.O_APPEND], ids=["kernel", "window"])
def test_a_copy_thread_copies_the_ranges_in_order(tmp_path: Path, source: tuple[Path, bytes], flags: int) -> None:
    path, data = source
    out = tmp_path / "out.log"
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | flags, 0o644)
    try:
        with FileRecords(str(path), window=1 << 16, store=local()) as records:
            assert threaded(records)
            pipe = CopyThread(records, fd)
            ranges = [(k * 7919 % (len(data) - 5000), 1 + k * 613 % 5000) for k in range(CopyThread.DEPTH * 10)]
            for position, n in ranges:
                pipe.put(position, n)
            pipe.finish()
    finally:
        os.close(fd)
    assert out.read_bytes() == b"".join(data[p : p + n] for p, n in ranges)


def test_a_copy_thread_s_write_error_is_raised_in_the_caller(tmp_path: Path, source: tuple[Path, bytes]) -> None:
    """A write failing in the copying thread: the next ``put`` (or ``finish``) raises it; nothing queued
    after it is copied, and a caller queuing more is not held (the thread drains the queue)."""
    path, _ = source
    (tmp_path / "out.log").write_bytes(b"")
    fd = os.open(tmp_path / "out.log", os.O_RDONLY)  # not open for writing: every way fails to write
    try:
        with FileRecords(str(path), store=local()) as records:
            pipe = CopyThread(records, fd)
            with pytest.raises(OSError) as info:
                for _ in range(CopyThread.DEPTH * 100):
                    pipe.put(0, 5000)
                pipe.finish()
            assert info.value.errno == errno.EBADF
            pipe.abandon()  # as the writer does after an error: returns, the thread ended
            assert not pipe._thread.is_alive()
    finally:
        os.close(fd)


def test_a_copy_thread_s_read_error_names_the_input(tmp_path: Path, source: tuple[Path, bytes]) -> None:
    """The input shrinking under the copying thread (a vanished segment): the reader's error, naming it."""
    path, _ = source
    fd = os.open(tmp_path / "out.log", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        with FileRecords(str(path), store=local()) as records:
            os.truncate(path, 1000)
            pipe = CopyThread(records, fd)
            pipe.put(0, 5000)
            with pytest.raises(InputError, match="shrank") as info:
                pipe.finish()
    finally:
        os.close(fd)
    assert info.value.path == str(path)


def test_polite_reads_are_not_threaded(tmp_path: Path, source: tuple[Path, bytes]) -> None:
    """``--max-rate`` paces the reader's reads in one thread: no copying thread beside it."""
    from kseg.storage.context import ReadContext
    from kseg.storage.stores.discover import store_for

    path, _ = source
    with FileRecords(str(path), store=store_for(str(path), ReadContext(max_rate=1 << 30))) as records:
        assert not threaded(records)
