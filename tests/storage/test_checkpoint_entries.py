"""``kseg.storage.checkpoints.partition_entry`` / ``log_start_offset``: a partition's values in its log
directory's offset checkpoints (written as ``CheckpointFile`` writes them), each with the file it came from."""

from __future__ import annotations

from pathlib import Path

from kseg.storage import checkpoints as cp
from kseg.storage.stores.discover import store_of
from tests.ops.logdir.kafka_dir import checkpoint


def test_the_entry_and_its_file(tmp_path: Path) -> None:
    (tmp_path / "orders-3").mkdir()
    (tmp_path / cp.HIGH_WATERMARK).write_text(checkpoint([("orders", 2, 7), ("orders", 3, 42)]))
    got = cp.partition_entry(str(tmp_path / "orders-3"), cp.HIGH_WATERMARK, store=store_of(str(tmp_path / "orders-3")))
    assert (got.value, got.file, got.present, got.parsed, got.note) == (
        42,
        str(tmp_path / cp.HIGH_WATERMARK),
        True,
        True,
        None,
    )


def test_absent_file_no_entry_and_malformed_are_notes_without_a_value(tmp_path: Path) -> None:
    (tmp_path / "t-0").mkdir()
    absent = cp.partition_entry(str(tmp_path / "t-0"), cp.CLEANER, store=store_of(str(tmp_path / "t-0")))
    assert (absent.value, absent.present, absent.parsed) == (None, False, False)
    assert absent.note == f"no {cp.CLEANER} in {tmp_path}"
    (tmp_path / cp.CLEANER).write_text(checkpoint([("u", 0, 1)]))
    none = cp.partition_entry(str(tmp_path / "t-0"), cp.CLEANER, store=store_of(str(tmp_path / "t-0")))
    assert (none.value, none.parsed, none.note) == (None, True, f"{tmp_path / cp.CLEANER} has no entry for t 0")
    (tmp_path / cp.CLEANER).write_text("0\n1\nt 0 x\n")  # rewritten: read again, not the cached table
    bad = cp.partition_entry(str(tmp_path / "t-0"), cp.CLEANER, store=store_of(str(tmp_path / "t-0")))
    assert (bad.value, bad.parsed) == (None, False) and "Malformed line in checkpoint file" in (bad.note or "")


def test_log_start_is_kafkas_the_larger_of_the_checkpoint_and_the_first_base(tmp_path: Path) -> None:
    (tmp_path / "t-0").mkdir()
    (tmp_path / cp.LOG_START).write_text(checkpoint([("t", 0, 120)]))
    assert cp.log_start_offset(str(tmp_path / "t-0"), 100, store=store_of(str(tmp_path / "t-0"))) == cp.LogStart(
        120, str(tmp_path / cp.LOG_START), None
    )
    low = cp.log_start_offset(str(tmp_path / "t-0"), 200, store=store_of(str(tmp_path / "t-0")))
    assert (low.offset, low.file) == (200, None) and "is below the first segment's base offset 200" in (low.note or "")
