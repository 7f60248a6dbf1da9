"""The one bounded reader of auxiliary files (``kseg.storage.read``): lines as ``BufferedReader.readLine``
gives them at any piece boundary, regular files only (a FIFO never blocks), bounds refused before reading."""

from __future__ import annotations

import io
import os
import random
from pathlib import Path

import pytest

from kseg.errors import CheckpointError, InputError
from kseg.storage import read
from kseg.storage.read import AuxFile, Kind, lines_of_text, open_local

KIND = Kind("test file", 1 << 20, "a test's bound", max_line=64)


def _aux(data: bytes, kind: Kind = KIND) -> AuxFile:
    return AuxFile(lambda: io.BytesIO(data), "f", len(data), kind)


@pytest.mark.parametrize(
    "data,lines",
    [
        (b"", []),
        (b"a", ["a"]),
        (b"a\n", ["a"]),
        (b"a\r\nb\rc\n\nd", ["a", "b", "c", "", "d"]),
        (b"\r\n\r\n", ["", ""]),
        (b"x\r", ["x"]),
        (b"\n", [""]),
    ],
)
def test_lines_end_as_readline_ends_them(data: bytes, lines: list[str]) -> None:
    assert list(_aux(data).lines()) == lines == list(lines_of_text(data.decode()))


def test_lines_at_every_piece_boundary(monkeypatch) -> None:
    rng = random.Random(31)
    for piece in (1, 2, 3, 7):
        monkeypatch.setattr(read, "PIECE", piece)
        for _ in range(300):
            data = bytes(rng.choice(b"ab\r\n") for _ in range(rng.randint(0, 24)))
            assert list(_aux(data).lines()) == list(lines_of_text(data.decode())), (piece, data)


def test_lines_of_every_short_text_in_one_piece() -> None:
    """Every text of up to 7 characters of ``a``, CR and LF, read in one piece, is split as in memory."""
    import itertools

    for n in range(8):
        for chars in itertools.product("a\r\n", repeat=n):
            text = "".join(chars)
            assert list(_aux(text.encode()).lines()) == list(lines_of_text(text)), repr(text)


def test_a_size_past_the_bound_is_refused_before_reading() -> None:
    opened = []
    aux = AuxFile(lambda: opened.append(1) or io.BytesIO(b""), "f", 2 << 20, KIND)
    with pytest.raises(InputError, match=r"f: 2097152 bytes: kseg reads test file files of at most 1048576 bytes"):
        list(aux.lines())
    with pytest.raises(InputError, match="a test's bound"):
        aux.data()
    assert opened == []


def test_a_long_line_is_refused_naming_the_bound() -> None:
    with pytest.raises(InputError, match=r"a line longer than 64 bytes at byte 3: .* at most 64 bytes a line"):
        list(_aux(b"ok\n" + b"x" * 100_000).lines())


def test_a_file_that_grows_while_read_is_refused() -> None:
    aux = AuxFile(lambda: io.BytesIO(b"x\n" * 100), "f", 10, Kind("k", 20, "w"))
    with pytest.raises(InputError, match="grew while read"):
        aux.data()
    with pytest.raises(InputError, match="grew while read"):
        list(aux.lines())


def test_text_that_is_not_utf8_names_its_byte() -> None:
    with pytest.raises(CheckpointError) as err:
        list(_aux(b"0\n1\n\xff 0 1\n").lines())
    assert err.value.position == 4 and "not UTF-8" in err.value.message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_only_a_regular_file_is_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"not a regular file \(a FIFO, socket or device\)"):
        AuxFile.local(str(fifo), KIND)
    with pytest.raises(InputError, match="Is a directory"):
        open_local(str(tmp_path))
    with pytest.raises(InputError, match="No such file or directory"):
        open_local(str(tmp_path / "absent"))
    (tmp_path / "ok").write_bytes(b"a\nb\n")
    aux = AuxFile.local(str(tmp_path / "ok"), KIND)
    assert list(aux.lines()) == ["a", "b"] and aux.data() == b"a\nb\n"  # each read opens it again


def test_open_local_never_blocks_on_a_fifo_swapped_in(tmp_path: Path, monkeypatch) -> None:
    """A FIFO put in the file's place between the ``stat`` and the open: opened without blocking, refused."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    regular = os.stat_result((0o100644, 0, 0, 1, 0, 0, 0, 0, 0, 0))
    monkeypatch.setattr(read.os, "stat", lambda path: regular)
    with pytest.raises(InputError, match="not a regular file"):
        open_local(str(fifo))
