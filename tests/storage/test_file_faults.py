"""Files that change while read, and file-system faults, through the storage layer and the CLI."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from kseg.errors import InputError
from kseg.storage.records import FileRecords
from tests.conftest import CORPUS_DATA, assert_no_traceback, run_cli
from tests.stores import local

LOG0 = CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log"


def test_a_segment_appended_to_is_read_up_to_its_size_at_open(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    shutil.copyfile(LOG0, log)
    size = log.stat().st_size
    with FileRecords(str(log), store=local()) as records:
        with open(log, "ab") as f:
            f.write(log.read_bytes()[:474])  # a whole extra batch appended under the reader
        batches = list(records.batches())
    assert sum(b.size for b in batches) == size
    assert len(batches) == 22


def test_a_segment_truncated_under_the_reader_ends_with_a_clear_error(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    shutil.copyfile(CORPUS_DATA / "large-v2-0" / "00000000000000000000.log", log)  # 3 MB, > the window
    with FileRecords(str(log), window=1 << 16, store=local()) as records:
        it = records.batches()
        next(it)
        os.truncate(log, 100_000)
        with pytest.raises(InputError, match="shrank") as err:
            for batch in it:
                batch.is_valid()
    assert err.value.path == str(log) and err.value.position is not None


def test_dangling_symlink(tmp_path: Path) -> None:
    link = tmp_path / "00000000000000000000.log"
    link.symlink_to(tmp_path / "gone.log")
    r = run_cli(["dump", "--files", str(link)])
    assert r.exit_code == 2
    assert_no_traceback(r)
    assert "no such file" in r.errtext


def test_sparse_preallocated_index(tmp_path: Path) -> None:
    """A 10 MiB preallocated .index (an active segment copied while open): dump stops at the zero tail."""
    part = tmp_path / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    idx = part / "00000000000000000000.index"
    entries = idx.read_bytes()
    with open(idx, "r+b") as f:
        f.truncate(10 << 20)  # sparse: no blocks for the zero tail
    assert idx.read_bytes()[: len(entries)] == entries
    r = run_cli(["dump", "--files", str(idx)])
    assert r.exit_code == 0
    assert r.text.count("offset: ") == len(entries) // 8
    r = run_cli(["dump", "--index-sanity-check", "--files", str(idx)])
    assert (r.exit_code, r.text.splitlines()[-1]) == (0, f"{idx} passed sanity check.")


def test_empty_files(tmp_path: Path) -> None:
    for suffix in (".log", ".index", ".timeindex", ".txnindex", ".snapshot"):
        (tmp_path / f"00000000000000000000{suffix}").write_bytes(b"")
    files = ",".join(str(tmp_path / f"00000000000000000000{s}") for s in (".log", ".index", ".timeindex", ".txnindex"))
    r = run_cli(["dump", "--files", files])
    assert r.exit_code == 0
    assert f"{tmp_path}/00000000000000000000.index is empty." in r.text
    r = run_cli(["dump", "--files", str(tmp_path / "00000000000000000000.snapshot")])
    assert r.exit_code == 0 and "Snapshot failed schema validation" in r.errtext


def test_snapshot_of_unknown_version(tmp_path: Path) -> None:
    snap = tmp_path / "00000000000000000000.snapshot"
    snap.write_bytes(struct.pack(">hIi", 7, 0, 0))
    r = run_cli(["dump", "--files", str(snap)])
    assert r.errtext == "Snapshot failed schema validation: Snapshot contained an unknown file version 7\n"


def test_a_batch_larger_than_the_window_and_the_bound_is_positioned_once(tmp_path: Path) -> None:
    """A batch bigger than the read window is CRC-streamed; deep iteration refuses it past the bound,
    naming the batch's own position (not twice it)."""
    from kseg.testing.writer import RecordSpec, build_v2_batch

    small = build_v2_batch([RecordSpec(b"k", b"v", 1)], base_offset=0)
    huge = build_v2_batch([RecordSpec(b"k", bytes(1000), 1) for _ in range(100)], base_offset=1)
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(small + huge)
    with FileRecords(str(log), window=1 << 16, store=local()) as records:
        batch = list(records.batches())[1]
        assert batch.size > (1 << 16) and batch.position == len(small)
        assert batch.is_valid()  # streamed CRC
        assert sum(1 for _ in batch.records(1 << 20)) == 100
        with pytest.raises(Exception) as err:
            list(batch.records(1 << 10))
        assert err.value.position == len(small) and err.value.path == str(log)
