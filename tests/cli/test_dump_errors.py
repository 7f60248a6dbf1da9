"""``kseg dump`` on bad input: one positioned line, the documented exit code, never a traceback."""

from __future__ import annotations

import gzip
import os
import shutil
import struct
import subprocess
from pathlib import Path

import crc32c
import pytest

from tests.conftest import CORPUS_DATA, as_unprivileged_root, assert_no_traceback, kseg_argv, run_cli, run_subprocess

PLAIN = CORPUS_DATA / "plain-v2-0"
LOG0 = PLAIN / "00000000000000000000.log"


def _copy(tmp_path: Path, src: Path, name: str | None = None) -> Path:
    dst = tmp_path / (name or src.name)
    shutil.copyfile(src, dst)
    return dst


def _patch(path: Path, position: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(position)
        f.write(data)


def _v2_batch(payload: bytes, *, codec: int, count: int, base_offset: int = 0) -> bytes:
    """A minimal v2 batch around ``payload`` (records, compressed as a whole when codec != 0)."""
    body = struct.pack(">hiqqqhii", codec, count - 1, 0, 0, -1, -1, -1, count) + payload
    crc = crc32c.crc32c(body)
    return struct.pack(">qiibI", base_offset, len(body) + 9, 0, 2, crc) + body


def _one_line_error(result, *needles: str) -> str:
    assert_no_traceback(result)
    lines = [line for line in result.errtext.splitlines() if line.startswith("kseg: error:")]
    assert len(lines) == 1, result.errtext
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_missing_file_is_exit_2(tmp_path: Path) -> None:
    r = run_cli(["dump", "--files", str(tmp_path / "00000000000000000000.log")])
    assert r.exit_code == 2
    _one_line_error(r, "00000000000000000000.log", "no such file")
    assert r.text == f"Dumping {tmp_path}/00000000000000000000.log\n"


def test_directory_is_exit_2(tmp_path: Path) -> None:
    r = run_cli(["dump", "--files", str(PLAIN)])
    assert r.exit_code == 2
    _one_line_error(r, "plain-v2-0", "directory")


def test_permission_denied_is_exit_2(tmp_path: Path) -> None:
    log = _copy(tmp_path, LOG0)
    log.chmod(0)
    p = subprocess.run(as_unprivileged_root(kseg_argv("dump", "--files", str(log))), capture_output=True)
    assert p.returncode == 2, p.stderr
    assert b"permission denied" in p.stderr and b"Traceback" not in p.stderr


def test_truncated_log_reports_trailing_bytes(tmp_path: Path) -> None:
    log = _copy(tmp_path, LOG0)
    size = log.stat().st_size
    os.truncate(log, size - 100)
    r = run_cli(["dump", "--deep-iteration", "--files", str(log)])
    assert r.exit_code == 0
    assert r.text.endswith(f"Found {3171 - 100} invalid bytes at the end of {log.name}\n")


@pytest.mark.parametrize("length", [0, 5, 13, -1, -(2**31)])
def test_length_below_minimum_is_a_positioned_error(tmp_path: Path, length: int) -> None:
    log = _copy(tmp_path, LOG0)
    _patch(log, 474 + 8, struct.pack(">i", length))  # the second batch's length field
    r = run_cli(["dump", "--files", str(log)])
    assert r.exit_code == 1
    _one_line_error(r, "at byte 474", f"record size {length}")
    assert r.text.count("baseOffset:") == 1  # the first batch was printed, as Kafka would


@pytest.mark.parametrize("length", [2**31 - 1, 10**9])
def test_absurd_length_is_trailing_bytes_not_an_allocation(tmp_path: Path, length: int) -> None:
    log = _copy(tmp_path, LOG0)
    _patch(log, 474 + 8, struct.pack(">i", length))
    r = run_subprocess(["dump", "--deep-iteration", "--files", str(log)])
    assert r.exit_code == 0
    assert r.text.endswith(f"Found {log.stat().st_size - 474} invalid bytes at the end of {log.name}\n")


def test_flipped_byte_in_uncompressed_batch_is_invalid_not_fatal(tmp_path: Path) -> None:
    log = _copy(tmp_path, LOG0)
    with open(log, "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 0x5A]))
    r = run_cli(["dump", "--files", str(log)])
    assert r.exit_code == 0
    assert "isvalid: false" in r.text.splitlines()[2]


def test_record_count_that_lies_stops_the_batch(tmp_path: Path) -> None:
    log = _copy(tmp_path, LOG0)
    _patch(log, 57, struct.pack(">i", 13))  # first batch holds 12 records
    r = run_cli(["dump", "--deep-iteration", "--files", str(log)])
    assert r.exit_code == 1
    _one_line_error(r, log.name, "at byte")
    assert r.text.count("| offset:") == 12  # the 12 real records were printed first


def test_overlong_varint_is_an_error(tmp_path: Path) -> None:
    record = b"\xff" * 11  # a record length varint of 11 bytes
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(_v2_batch(record, codec=0, count=1))
    r = run_cli(["dump", "--deep-iteration", "--files", str(log)])
    assert r.exit_code == 1
    _one_line_error(r, "varint is too long")


def test_decompression_bomb_is_bounded(tmp_path: Path) -> None:
    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 MiB of zeros in ~64 KiB
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(_v2_batch(bomb, codec=1, count=1))
    r = run_subprocess(["dump", "--deep-iteration", "--max-message-size", "65536", "--files", str(log)])
    assert r.exit_code == 1
    _one_line_error(r, "exceeds the bound of 524288 bytes", "--max-message-size")


def test_corrupt_compressed_payload_deep(tmp_path: Path) -> None:
    r = run_cli(
        ["dump", "--deep-iteration", "--files", "corrupt-compressed-0/00000000000000000000.log"], cwd=CORPUS_DATA
    )
    assert r.exit_code == 1
    _one_line_error(r, "corrupt-compressed-0/00000000000000000000.log", "at byte 1386", "decompress")


def test_goes_on_to_the_next_file_and_exits_with_the_worst_code(tmp_path: Path) -> None:
    bad = _copy(tmp_path, LOG0)
    _patch(bad, 8, struct.pack(">i", 3))
    r = run_cli(["dump", "--files", f"{bad},{tmp_path}/missing.log,{LOG0}"])
    assert r.exit_code == 2
    assert r.text.count("Dumping ") == 3
    assert r.text.rstrip().endswith("isvalid: true")
    assert r.errtext.count("kseg: error:") == 2


def test_empty_log(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000020.log"
    log.write_bytes(b"")
    r = run_cli(["dump", "--files", str(log)])
    assert (r.exit_code, r.text) == (0, f"Dumping {log}\nLog starting offset: 20\n")


def test_unknown_suffix_is_ignored_like_kafka(tmp_path: Path) -> None:
    other = tmp_path / "leader-epoch-checkpoint"
    other.write_text("0\n0\n")
    r = run_cli(["dump", "--files", str(other)])
    assert r.exit_code == 0
    assert r.errtext == f"Ignoring unknown file {other}\n"


def test_index_without_its_log(tmp_path: Path) -> None:
    idx = _copy(tmp_path, PLAIN / "00000000000000000000.index")
    r = run_cli(["dump", "--files", str(idx)])
    assert r.exit_code == 2
    assert r.text.count("offset: ") == 5  # entries still printed
    _one_line_error(r, "00000000000000000000.log", "not checked")


def test_corrupt_snapshot_reports_and_goes_on(tmp_path: Path) -> None:
    snap = _copy(tmp_path, CORPUS_DATA / "idempotent-v2-0" / "00000000000000000067.snapshot")
    _patch(snap, 20, b"\xff")
    r = run_cli(["dump", "--files", str(snap)])
    assert r.exit_code == 0  # as Kafka: the message is printed, the run goes on
    assert r.errtext.startswith("Snapshot is corrupt (CRC is no longer valid). Stored crc: ")


def test_txnindex_with_unknown_version(tmp_path: Path) -> None:
    """Kafka reads an entry's version as its first byte (``AbortedTxn.version``: ``buffer.get(0)``): 01 00 is
    version 1, refused; 00 01 is version 0 to Kafka, dumped as such."""
    txn = _copy(tmp_path, CORPUS_DATA / "txn-v2-0" / "00000000000000000000.txnindex")
    _patch(txn, 0, struct.pack(">h", 1 << 8))
    r = run_cli(["dump", "--files", str(txn)])
    assert r.exit_code == 1
    _one_line_error(r, "version 1")
    _patch(txn, 0, struct.pack(">h", 1))
    r = run_cli(["dump", "--files", str(txn)])
    assert r.exit_code == 0, r.errtext
    assert "version: 0 producerId: 2001 " in r.text, r.text


def test_name_without_base_offset_still_dumps(tmp_path: Path) -> None:
    log = _copy(tmp_path, PLAIN / "00000000000000000251.log", "segment.log")
    r = run_cli(["dump", "--files", str(log)])
    assert r.exit_code == 0
    assert "Log starting offset: 251\n" in r.text
    assert "no base offset" in r.errtext


def test_unknown_codec_id(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(_v2_batch(b"\x00" * 8, codec=6, count=1))
    r = run_cli(["dump", "--files", str(log)])
    assert r.exit_code == 1
    _one_line_error(r, "unknown compression type id: 6")


def test_no_files_is_a_usage_error() -> None:
    r = run_cli(["dump"])
    assert r.exit_code == 2
    assert_no_traceback(r)
