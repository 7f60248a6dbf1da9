"""Discovery (``kseg.storage.stores.find.discover``): a partition is its directory, each listed once."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kseg.errors import InputError
from kseg.storage.stores.find import discover
from tests.conftest import CORPUS_DATA


def _root(base: Path, *names: str) -> Path:
    root = base / "data"
    root.mkdir(parents=True)
    for name in names:
        shutil.copytree(CORPUS_DATA / "plain-v2-0", root / name)
    return root


def test_same_name_under_two_log_dirs_is_two_partitions(tmp_path: Path) -> None:
    b1, b2 = _root(tmp_path / "b1", "orders-0"), _root(tmp_path / "b2", "orders-0")
    parts = discover([str(b1), str(b2)], [])
    assert [(p.log_dir, p.name) for p in parts] == [(str(b1), "orders-0"), (str(b2), "orders-0")]


def test_a_directory_reached_twice_is_listed_once(tmp_path: Path) -> None:
    root = _root(tmp_path, "orders-0", "orders-1")
    (tmp_path / "link").symlink_to(root)
    one = str(root / "orders-0" / "00000000000000000251.log")
    parts = discover([one, str(root / "orders-1"), str(tmp_path / "link"), str(root)], [])
    # the single file's partition keeps its place, and the whole directory replaced the single file
    assert [p.name for p in parts] == ["orders-0", "orders-1"]
    assert [len(p.segments) for p in parts] == [2, 2]


def test_lost_found_and_transition_dirs_are_noted(tmp_path: Path) -> None:
    root = _root(tmp_path, "orders-0")
    (root / "lost+found").mkdir()
    (root / "orders-1-future").mkdir()
    notes: list[str] = []
    assert [p.name for p in discover([str(root)], notes)] == ["orders-0"]
    assert any("lost+found" in n for n in notes) and any("in transition" in n for n in notes)


@pytest.mark.parametrize("name", ["00000000000000000000.snapshot", "leader-epoch-checkpoint"])
def test_a_file_that_is_no_segment_is_an_error(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(b"")
    with pytest.raises(InputError, match="not a segment file"):
        discover([str(tmp_path / name)], [])


def test_partitions_sort_naturally(tmp_path) -> None:
    """orders-2 before orders-10, in every listing (a log root, and what commands print from it)."""
    from tests.conftest import run_cli

    root = tmp_path / "data"
    for n in (10, 2, 1, 33, 3):
        shutil.copytree(CORPUS_DATA / "txn-v2-0", root / f"orders-{n}")
    names = [p.name for p in discover([str(root)], [])]
    assert names == ["orders-1", "orders-2", "orders-3", "orders-10", "orders-33"]
    out = run_cli(["verify-index", str(root)]).text.splitlines()
    segment_lines = [line for line in out[:-1] if not line.startswith((" ", "note:"))]  # notes: grouped, after the rows
    assert [line.split(": ")[0].split("/")[-2] for line in segment_lines][::2] == names  # <path given>/<segment>


def test_a_segment_is_opened_once_with_its_files(tmp_path: Path) -> None:
    """``Segment.open``: its indexes and the log's identity in one call to the store; a file that cannot be
    opened is its error in its place (the others still open)."""
    import os

    root = _root(tmp_path, "orders-0")
    seg = discover([str(root / "orders-0")], [])[0].segments[0]
    assert seg.log and seg.index and seg.timeindex
    opened = seg.open()
    try:
        assert opened.offset_index is not None and not isinstance(opened.offset_index, InputError)
        assert opened.offset_index.read() == Path(seg.index).read_bytes()
        assert opened.time_index is not None and not isinstance(opened.time_index, InputError)
        st = os.stat(seg.log)
        assert opened.identity == f"size={st.st_size} mtime_ns={st.st_mtime_ns} ctime_ns={st.st_ctime_ns}"
    finally:
        opened.close()
    os.unlink(seg.timeindex)
    os.mkfifo(seg.timeindex)  # never opened (it would block): refused, in its place
    os.unlink(seg.log)
    again = seg.open()
    again.close()
    assert isinstance(again.time_index, InputError) and "not a regular file" in again.time_index.message
    assert again.offset_index is not None and not isinstance(again.offset_index, InputError)
    assert isinstance(again.identity, InputError)
