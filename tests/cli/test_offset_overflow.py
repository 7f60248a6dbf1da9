"""Offsets are 64-bit signed everywhere (issue 19): one batch at base offset 2^63-1 holding two
records.  Kafka adds offsets in Java ``long`` arithmetic (``DefaultRecordBatch.lastOffset()`` is
``baseOffset() + lastOffsetDelta()``, a record's offset ``baseOffset + offsetDelta``), so its last
offset is -2^63.  Every command ends promptly on both engines, prints offsets as Kafka does, and the
verification commands call the batch a problem."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kseg.format.v2 import java_long, last_offset
from kseg.testing.v2 import RecordSpec, build_v2_batch

MAX = (1 << 63) - 1
MIN = -(1 << 63)
NAME = f"{MAX:020d}"


@pytest.fixture(params=["c", "python"])
def engine(request) -> str:
    return request.param


@pytest.fixture
def part(tmp_path: Path) -> Path:
    d = tmp_path / "t-0"
    d.mkdir()
    batch = build_v2_batch([RecordSpec(None, b"a", 1000), RecordSpec(b"k", b"b", 1001)], base_offset=MAX)
    (d / f"{NAME}.log").write_bytes(batch)
    (d / f"{NAME}.index").write_bytes(struct.pack(">ii", 0, 0))  # relative offset 0 at position 0
    return d


def kseg(engine: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, KSEG_ENGINE=engine)
    return subprocess.run([sys.executable, "-m", "kseg", *args], capture_output=True, env=env, cwd=cwd, timeout=60)


def test_java_long_wraps_as_java_does() -> None:
    assert last_offset(MAX, 1) == MIN and last_offset(MAX, 0) == MAX and last_offset(MIN, -1) == MAX
    assert java_long(MAX + 1) == MIN and java_long(1 << 64) == 0 and java_long(12) == 12


def test_dump_prints_the_wrapped_long_as_kafka(part: Path, engine: str) -> None:
    p = kseg(engine, "dump", "--deep-iteration", str(part / f"{NAME}.log"))
    assert p.returncode == 0, p.stderr
    out = p.stdout.decode()
    assert f"baseOffset: {MAX} lastOffset: {MIN} count: 2 " in out
    assert f"| offset: {MAX} CreateTime: 1000 " in out and f"| offset: {MIN} CreateTime: 1001 " in out
    assert "Non-consecutive" not in out  # Java: MAX + 1 == MIN, so Kafka's continuity check holds
    p = kseg(engine, "dump", "--deep-iteration", "--format", "json", str(part / f"{NAME}.log"))
    rows = [json.loads(line) for line in p.stdout.decode().splitlines()]
    assert [r["lastOffset"] for r in rows if r["type"] == "batch"] == [MIN]
    assert [r["offset"] for r in rows if r["type"] == "record"] == [MAX, MIN]


@pytest.mark.parametrize("strict", [[], ["--strict"]])
def test_verify_index_ends_and_calls_the_batch_a_problem(part: Path, engine: str, strict: list[str]) -> None:
    p = kseg(engine, "verify-index", *strict, "--format", "json", str(part))
    assert p.returncode == 1, p.stderr
    problems = [r for r in map(json.loads, p.stdout.decode().splitlines()) if r["type"] == "problem"]
    overflow = [r for r in problems if r["kind"] == "bad-last-offset"]
    assert [(r["found"], r["position"]) for r in overflow] == [(str(MAX + 1), 0)], problems
    assert "past 2^63-1" in overflow[0]["message"]
    # the .index entry (offset 2^63-1 at position 0) names a batch whose last offset Kafka reads as -2^63
    # and the segment has no .timeindex: a problem with --strict (a note without)
    allowed = {"bad-last-offset", "index-offset"} | ({"missing-index"} if strict else set())
    assert {r["kind"] for r in problems} <= allowed, problems


def test_txn_calls_the_batch_a_problem(part: Path, engine: str) -> None:
    p = kseg(engine, "txn", str(part))
    assert p.returncode == 1, p.stderr
    out = p.stdout.decode()
    assert f"batch last offset {MAX + 1} is past 2^63-1" in out and f"wraps it to {MIN}" in out


def test_rebuild_index_refuses_the_segment_without_a_traceback(part: Path, engine: str) -> None:
    before = (part / f"{NAME}.index").read_bytes()
    for args in (["--check"], ["--force"]):
        p = kseg(engine, "rebuild-index", *args, str(part))
        assert p.returncode == 1, p.stderr
        assert b"Traceback" not in p.stderr and b"LogSegmentOffsetOverflowException" in p.stdout
    assert (part / f"{NAME}.index").read_bytes() == before


def test_export_calls_the_batch_a_corruption(part: Path, engine: str, tmp_path: Path) -> None:
    """Issue 32: no rows with offset -2^63; one corruption row, exit 1, as verify-index calls it a problem."""
    import pyarrow.parquet as pq

    out = tmp_path / "o.parquet"
    p = kseg(engine, "export", "-o", str(out), str(part))
    assert p.returncode == 1 and b"Traceback" not in p.stderr, p.stderr
    rows = pq.read_table(out).select(["offset", "batchPosition", "corruption"]).to_pylist()
    assert len(rows) == 1 and rows[0]["offset"] is None and rows[0]["batchPosition"] == 0
    assert rows[0]["corruption"].startswith(
        f"bad-last-offset: batch at offset {MAX}: last offset {MAX + 1} past 2^63-1"
    )
    assert (
        b"bad-last-offset" in p.stderr
        and b"1 row from 1 split" in p.stdout
        and b"0 records, 1 corruption row" in p.stdout
    ), p.stdout


def test_lookups_diff_and_compaction_end_with_kafkas_values(part: Path, engine: str) -> None:
    p = kseg(engine, "lookup-offset", str(MAX), str(part))
    assert p.returncode == 1 and b"Traceback" not in p.stderr
    assert (
        f"past 2^63-1 (base offset {MAX}); Kafka's long arithmetic wraps the log end offset to {MIN + 1}"
        in p.stderr.decode()
    )
    p = kseg(engine, "lookup-time", "1000", str(part))
    assert p.returncode == 0 and f"Found: offset {MAX}, timestamp 1000" in p.stdout.decode(), p.stderr
    p = kseg(engine, "diff", str(part), str(part))
    assert p.returncode == 0 and f"log {MAX}..{MAX}" in p.stdout.decode() and str(MAX + 1) not in p.stdout.decode()
    p = kseg(engine, "compaction", str(part))
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
