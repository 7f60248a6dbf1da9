"""A segment's byte range appended to a new file (kseg.storage.copy): by the kernel where it can, through
the reader's window where the kernel refuses the files (an ``O_APPEND`` target: ``copy_file_range`` and
``sendfile`` both refuse it), the same bytes either way; a failure raised by its side."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kseg.errors import InputError
from kseg.storage.copy import copy_range
from kseg.storage.records import FileRecords


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
        with FileRecords(str(path), window=1 << 16) as records:
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
        with FileRecords(str(path)) as records:
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
        with FileRecords(str(path)) as records, pytest.raises(OSError):
            copy_range(records, fd, 0, 5000)
    finally:
        os.close(fd)
