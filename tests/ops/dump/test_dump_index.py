"""``kseg dump --files X.index`` (``storage/dump_index.py``): entries checked in bulk, in order.

Each index is checked twice through the real CLI: as it runs (the batch heads
of 1024 entries at a time, :meth:`FileRecords.last_offsets`) and with a read
policy (``--max-rate``), where every entry goes through
:meth:`FileRecords.last_offset_at` alone: same output, same exit code.  And
the mismatches and the first error agree with Kafka's rule computed here over
the full frame (``FileRecords.batch_at(...).last_offset``).
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from kseg.errors import CorruptRecordError
from kseg.format.indexes import OffsetIndexView
from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE
from kseg.storage.records import FileRecords
from kseg.testing.writer import write_bulk_segment
from tests.conftest import CORPUS_DATA, assert_no_traceback, run_cli
from tests.stores import local

NAME = "00000000000000000000"


def kafka_rule(part: Path, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> tuple[list[str], str | None]:
    """``DumpLogSegments.dumpIndex`` over the full frame: the mismatch lines, and the entry that stops it."""
    index = OffsetIndexView((part / f"{NAME}.index").read_bytes(), 0)
    lines = []
    with FileRecords(str(part / f"{NAME}.log"), store=local()) as records:
        for i, (offset, position) in enumerate(index.iter_entries(index.used_entries())):
            if not 0 <= position <= records.size:
                return lines, f"entry {i} points at log position {position}"
            try:
                batch = records.batch_at(position, max_size)
            except CorruptRecordError as exc:
                return lines, f"at byte {position}: {exc.message}"
            if batch is None:
                return lines, f"entry {i}: no whole batch within --max-message-size ({max_size}) bytes"
            if batch.last_offset != offset:
                lines.append(f"  Index offset: {offset}, log offset: {batch.last_offset}")
    return lines, None


def check(part: Path, *extra: str, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> tuple[list[str], str | None]:
    """Both paths of the CLI agree with each other and with :func:`kafka_rule`, which is returned."""
    index = str(part / f"{NAME}.index")
    mismatches, error = kafka_rule(part, max_size)
    size = ["--max-message-size", str(max_size)]
    for verify_only in ([], ["--verify-index-only"]):
        one_by_one = run_cli(["dump", "--files", index, *size, *verify_only, *extra, "--max-rate", "1000000"])
        fast = run_cli(["dump", "--files", index, *size, *verify_only, *extra])  # (and no read policy left behind)
        assert_no_traceback(fast)
        assert (fast.exit_code, fast.text, fast.errtext) == (one_by_one.exit_code, one_by_one.text, one_by_one.errtext)
        reported = [line for line in fast.errtext.splitlines() if line.startswith("  Index offset: ")]
        assert reported == mismatches[::-1]  # Kafka's tool prints the newest first
        if error is None:
            assert fast.exit_code == 0 and "error" not in fast.errtext
        else:
            assert fast.exit_code == 1 and error in fast.errtext, (error, fast.errtext)
        if not verify_only:
            printed = sum(line.startswith("offset: ") for line in fast.text.splitlines())
            assert printed == (
                OffsetIndexView(Path(index).read_bytes(), 0).used_entries()
                if error is None
                else _entries_before(fast.errtext, part)
            )
    return mismatches, error


def _entries_before(errtext: str, part: Path) -> int:
    """The entries printed before the error: those before the entry it names (by entry or log position)."""
    index = OffsetIndexView((part / f"{NAME}.index").read_bytes(), 0)
    positions = [p for _, p in index.iter_entries(index.used_entries())]
    if "entry " in errtext:
        return int(errtext.split("entry ")[1].split()[0].rstrip(":"))
    position = int(errtext.split("at byte ")[1].split(":")[0])
    return positions.index(position)


@pytest.fixture
def part(tmp_path: Path) -> Path:
    """~2700 small batches, every one indexed: three chunks of entries."""
    p = tmp_path / "t-0"
    write_bulk_segment(p, 300_000, records_per_batch=2, value_size=10, index_interval_bytes=0)
    assert len((p / f"{NAME}.index").read_bytes()) // 8 > 2 * 1024
    return p


def _entry(part: Path, k: int) -> tuple[int, int]:
    return struct.unpack_from(">ii", (part / f"{NAME}.index").read_bytes(), k * 8)


def _set_entry(part: Path, k: int, relative: int, position: int) -> None:
    with open(part / f"{NAME}.index", "r+b") as f:
        f.seek(k * 8)
        f.write(struct.pack(">ii", relative, position))


def _patch_log(part: Path, position: int, data: bytes) -> None:
    with open(part / f"{NAME}.log", "r+b") as f:
        f.seek(position)
        f.write(data)


def test_healthy(part: Path) -> None:
    assert check(part) == ([], None)


def test_offset_mismatches_in_several_chunks(part: Path) -> None:
    for k in (1, 1500, 2100):
        relative, position = _entry(part, k)
        _set_entry(part, k, relative + 3, position)
    mismatches, error = check(part)
    assert len(mismatches) == 3 and error is None


@pytest.mark.parametrize("delta", [1, 12, 17, 23, 40])
def test_entry_pointing_mid_batch(part: Path, delta: int) -> None:
    relative, position = _entry(part, 1500)
    _set_entry(part, 1500, relative, position + delta)
    mismatches, error = check(part)
    assert mismatches or error


def test_batch_larger_than_max_message_size(part: Path) -> None:
    _, position = _entry(part, 0)
    size = struct.unpack_from(">i", (part / f"{NAME}.log").read_bytes(), position + 8)[0] + 12
    assert check(part, max_size=size) == ([], None)
    assert check(part, max_size=size - 1)[1] == f"entry 0: no whole batch within --max-message-size ({size - 1}) bytes"


def test_truncated_last_batch(part: Path) -> None:
    log = part / f"{NAME}.log"
    with open(log, "r+b") as f:
        f.truncate(log.stat().st_size - 10)
    mismatches, error = check(part)
    assert not mismatches and "no whole batch" in error


@pytest.mark.parametrize("length", [13, 0, -1, 20, 48])
def test_length_field_below_the_minimum_or_the_v2_header(part: Path, length: int) -> None:
    _, position = _entry(part, 1100)
    _patch_log(part, position + 8, struct.pack(">i", length))
    mismatches, error = check(part)
    if length < 14:
        assert error == f"at byte {position}: found record size {length} smaller than minimum record overhead (14)"
    else:  # a v2 batch declared shorter than its header: the last offset still comes from the 61 bytes there
        assert (mismatches, error) == ([], None)


def test_entries_past_the_end_of_the_log(part: Path) -> None:
    size = (part / f"{NAME}.log").stat().st_size
    for k, position in ((2000, size - 10), (2001, size + 1)):
        _set_entry(part, k, _entry(part, k)[0], position)
    assert "entry 2000: no whole batch" in check(part)[1]
    _set_entry(part, 2000, _entry(part, 2000)[0], size + 1)
    assert check(part)[1] == f"entry 2000 points at log position {size + 1}"


def test_entries_out_of_order(part: Path) -> None:
    a, b = _entry(part, 700), _entry(part, 701)
    _set_entry(part, 700, a[0], b[1])  # positions swapped: each entry points at the other's batch
    _set_entry(part, 701, b[0], a[1])
    mismatches, error = check(part)
    assert len(mismatches) == 2 and error is None


@pytest.mark.parametrize(
    "name",
    [
        "v0-none-0",
        "v0-gzip-0",
        "v1-none-0",
        "v1-snappy-0",
        "plain-v2-0",
        "corrupt-index-0",
        "prealloc-index-0",
        "corrupt-truncated-0",
    ],
)
def test_corpus(tmp_path: Path, name: str) -> None:
    part = tmp_path / name
    shutil.copytree(CORPUS_DATA / name, part)
    check(part)
