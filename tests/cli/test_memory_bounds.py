"""Peak memory of every command on issue 19's hostile inputs, measured on the real CLI in a child process.

Inputs are built at test time with ``kseg.testing.bombs`` at a fraction of the
benchmark's size (``benchmarks/memory.py`` measures the full ones), chosen so
the code before the fix clearly passed the cap (measured: a 600 k-record zstd
batch cost ~220 MiB in ``dump --deep-iteration`` with the C engine, ~380 MiB
in Python, ~110 MiB in lookups and compaction, ~180 MiB in export; the Python engine's
runs take a 300 k-record one, still past every cap there (``COUNTS``); a 512 KiB random index 213 MiB
in ``verify-index`` and 90 MiB in ``rebuild-index --check`` (397 and 154 at 1 MiB); a 256 MiB sparse
index 540-1,075 MiB in every command that reads it, the same with 64 KiB of garbage before its zeros as
with 1 MiB (measured 2026-11-28 with ``KSEG_ENGINE=python``, the code before the bounded report and before
the windows; the windowed code's work is per entry of the garbage, not per byte of zeros); a
400 k-producer snapshot ~110 MiB; 2,000 one-record partitions ~170 MiB in
``export``) while now they stay far below it.

Peak RSS is the child's own high-water mark (``VmHWM`` in ``/proc/self/status``), which
exec starts afresh, read as the process ends: its ``ru_maxrss`` (``wait4``,
``getrusage``) would start from the memory of the process that forked it, and
pytest's own would hide the command's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kseg import engine
from kseg.testing import bombs
from tests.conftest import ENGINES

CAP_MIB = 64  # every command without pyarrow (which alone costs ~65 MiB to import)
EXPORT_CAP_MIB = 120

#: the last line of a measured child's stderr: its peak RSS in KiB
_MARK = "kseg-test-peak-kib: "
#: ``python -c _MEASURED ARGS``: ``kseg ARGS`` as ``python -m kseg`` runs it (``sys.argv`` and ``__main__`` the
#: same); as the process ends, its VmHWM on stderr's last line (an exit handler: the run then ends through the
#: interpreter's shutdown, ``kseg.cli.start._end_now``, after its peak)
_MEASURED = (
    "import atexit, runpy, sys\n"
    "def peak():\n"
    "    with open('/proc/self/status') as f:\n"
    "        kib = next(line.split()[1] for line in f if line.startswith('VmHWM:'))\n"
    f"    sys.stderr.write('{_MARK}' + kib + '\\n')\n"
    "atexit.register(peak)\n"
    "runpy.run_module('kseg', run_name='__main__', alter_sys=True)\n"
)


def peak(args: list[str], eng: str = "python") -> tuple[float, int, str]:
    """Run ``kseg ARGS`` with ``KSEG_ENGINE=eng``: (peak RSS in MiB, exit code, stderr)."""
    env = dict(os.environ, KSEG_ENGINE=eng)
    p = subprocess.run(
        [sys.executable, "-c", _MEASURED, *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        timeout=600,
    )
    err, mark, kib = p.stderr.rpartition(_MARK)
    assert mark, f"exit {p.returncode}, no peak measured: {p.stderr[-3000:]}"
    return int(kib) / 1024, p.returncode, err


#: records of the zstd bomb (6 MB decompressed), by engine.  The pure-Python engine's has half as many, which
#: the code before the fix (KSEG_ENGINE=python) still took past every cap (measured 2026-11-28, on the full
#: bomb and on this one: dump --deep-iteration 392 and 206 MiB, --format json 161 and 88, lookups and
#: compaction 134 and 75, export 194 and 140); the compiled engine's unbounded code needed the full bomb
#: (~110 MiB in lookups and compaction, which half would have let pass)
COUNTS = {"c": 600_000, "python": 300_000}


def _bomb(tmp_path_factory, eng: str) -> Path:
    d = tmp_path_factory.mktemp(f"bomb-{eng}") / "t-0"
    bombs.write_null_bomb(d, COUNTS[eng], "zstd")
    return d


@pytest.fixture(scope="module")
def c_bomb(tmp_path_factory) -> Path:
    return _bomb(tmp_path_factory, "c")


@pytest.fixture(scope="module")
def python_bomb(tmp_path_factory) -> Path:
    return _bomb(tmp_path_factory, "python")


@pytest.fixture
def bomb(request, eng: str) -> Path:
    """The bomb of the test's engine (``eng``)."""
    return request.getfixturevalue(f"{eng}_bomb")


LOG = "{d}/00000000000000000000.log"
BOMB_COMMANDS = {
    "dump-deep": ["dump", "--deep-iteration", LOG],
    "dump-print": ["dump", "--print-data-log", LOG],
    "dump-json-decoder": ["dump", "--value-decoder", "json", LOG],
    "dump-json": ["dump", "--format", "json", "--deep-iteration", LOG],
    "verify-strict": ["verify-index", "--strict", "{d}"],
    "lookup-offset": ["lookup-offset", "{last}", "{d}"],  # the bomb's last record
    "lookup-time": ["lookup-time", str(bombs.TIMESTAMP), "{d}"],
    "compaction": ["compaction", "{d}"],
    "txn": ["txn", "{d}"],
    "rebuild-check": ["rebuild-index", "--check", "{d}"],
    "grep-key": ["grep", "--key", "no-such-key", "{d}"],
    "grep-regex": ["grep", "--count", "--value-regex", "x", "{d}"],
    "salvage": ["salvage", "--dry-run", "{d}"],  # every compressed batch's records decoded
}


@pytest.mark.parametrize("eng", ENGINES)
@pytest.mark.parametrize("name", list(BOMB_COMMANDS))
def test_a_compressed_batch_of_many_records_streams(bomb: Path, name: str, eng: str) -> None:
    mib, code, err = peak([a.format(d=bomb, last=COUNTS[eng] - 1) for a in BOMB_COMMANDS[name]], eng)
    assert code in (0, 1), err
    assert "Traceback" not in err
    assert mib < CAP_MIB, f"{name} ({eng}): {mib:.1f} MiB"


@pytest.mark.parametrize("eng", ENGINES)
def test_export_of_the_bomb_is_bounded(bomb: Path, eng: str, tmp_path: Path) -> None:
    mib, code, err = peak(["export", "-q", str(bomb), "-o", str(tmp_path / "out.parquet")], eng)
    assert code == 0, err
    assert mib < EXPORT_CAP_MIB, f"export ({eng}): {mib:.1f} MiB"


TARGET_MIB = 128  # issue 19's target for every command (benchmarks/memory.py)
STREAMED_CAP_MIB = 48
VALUES = 330_000  # records of 110 zero bytes: 40 MB decompressed, just inside the default 40 MiB bound


@pytest.fixture(scope="module")
def big_batch(tmp_path_factory) -> Path:
    """One zstd batch decompressing to 40 MB (the size of the full bomb's) in few records, so it is quick."""
    from kseg.testing.codecs import compress
    from kseg.testing.segment import write_segment
    from kseg.testing.v2 import MAGIC_V2, attributes_v2, encode_record, finish_batch

    d = tmp_path_factory.mktemp("big") / "t-0"
    d.mkdir()
    body = b"".join(encode_record(i, 0, None, bytes(110), ()) for i in range(VALUES))
    payload = compress("zstd", body, MAGIC_V2)
    attrs = attributes_v2("zstd", "CreateTime", False, False, False)
    n = VALUES
    write_segment(d, [[finish_batch(0, 0, attrs, n - 1, bombs.TIMESTAMP, bombs.TIMESTAMP, -1, -1, -1, n, payload)]])
    return d


BIG_COMMANDS = {
    "dump-deep": ["dump", "--deep-iteration", LOG],
    "lookup-offset": ["lookup-offset", str(VALUES - 1), "{d}"],
    "compaction": ["compaction", "{d}"],
    "grep-literal": ["grep", "--count", "--value-regex", r"\x00\x00\x00", "{d}"],  # pieces searched, then records
    "grep-all": ["grep", "--count", "--from-offset", "0", "{d}"],
    "salvage": ["salvage", "--dry-run", "{d}"],
}


@pytest.mark.parametrize("eng", ENGINES)
@pytest.mark.parametrize("name", list(BIG_COMMANDS))
def test_a_batch_of_40_mb_decompressed_is_never_held_whole(big_batch: Path, name: str, eng: str) -> None:
    """Measured: 61 MiB before the streaming decompressor (the 40 MB held whole), 33-35 MiB with it."""
    mib, code, err = peak([a.format(d=big_batch) for a in BIG_COMMANDS[name]], eng)
    assert code == 0, err
    assert mib < STREAMED_CAP_MIB, f"{name} ({eng}): {mib:.1f} MiB"


def test_export_of_a_batch_of_40_mb_decompressed_is_within_the_target(big_batch: Path, tmp_path: Path) -> None:
    """Issue 19's last row: export of a batch whose decompressed size is the bomb's.  Measured: 147 MiB
    before the streaming decompressor, 120 MiB with it (pyarrow alone ~65 MiB)."""
    eng = "c" if engine.C is not None else "python"
    mib, code, err = peak(["export", "-q", str(big_batch), "-o", str(tmp_path / "out.parquet")], eng)
    assert code == 0, err
    assert mib <= TARGET_MIB, f"export: {mib:.1f} MiB"


def test_export_of_many_splits_is_bounded(tmp_path: Path) -> None:
    root = bombs.write_many_partitions(tmp_path / "logs", 2000)
    out = tmp_path / "out.parquet"
    mib, code, err = peak(["export", "-q", str(root), "-o", str(out)])
    assert code == 0, err
    assert mib < EXPORT_CAP_MIB, f"export of 2,000 splits: {mib:.1f} MiB"


INDEX_COMMANDS = {
    "dump-index": ["dump", "{d}/00000000000000000000.index"],
    "dump-timeindex": ["dump", "{d}/00000000000000000000.timeindex"],
    "verify": ["verify-index", "{d}"],
    "verify-strict": ["verify-index", "--strict", "{d}"],
    "lookup-offset": ["lookup-offset", "0", "{d}"],
    "lookup-time": ["lookup-time", "0", "{d}"],
    "rebuild-check": ["rebuild-index", "--check", "{d}"],
    "export": ["export", "-q", "{d}", "-o", "{d}/../out.parquet", "--force"],
}


@pytest.fixture(scope="module")
def random_index(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("random") / "t-0"
    bombs.write_random_indexes(d, 512 << 10)
    return d


@pytest.fixture(scope="module")
def sparse_index(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("sparse") / "t-0"
    bombs.write_random_indexes(d, 256 << 20, sparse=True, head=64 << 10)  # its size is the point, not garbage
    return d


@pytest.mark.parametrize("name", list(INDEX_COMMANDS))
@pytest.mark.parametrize("which", ["random", "sparse"])
def test_garbage_and_sparse_indexes_are_read_in_windows(name: str, which: str, request) -> None:
    d = request.getfixturevalue(f"{which}_index")
    mib, code, err = peak([a.format(d=d) for a in INDEX_COMMANDS[name]])
    assert code in (0, 1), err
    assert "Traceback" not in err
    cap = EXPORT_CAP_MIB if name == "export" else CAP_MIB
    assert mib < cap, f"{name} on a {which} index: {mib:.1f} MiB"


def test_verify_index_keeps_a_bounded_report_of_a_garbage_index(random_index: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "kseg", "verify-index", "--format", "json", str(random_index)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    segment = next(row for row in rows if row["type"] == "segment")
    problems = [row for row in rows if row["type"] == "problem"]
    kinds = {(p["kind"], p["file"]) for p in problems}
    from kseg.ops.verify.result import KEPT_PER_KIND

    assert r.returncode == 1
    assert len(problems) <= KEPT_PER_KIND * len(kinds)
    assert segment["problems"] > 100_000  # every wrong entry counted
    assert any("more" in note and "not listed" in note for note in segment["notes"])


@pytest.fixture(scope="module")
def snapshot_bomb(tmp_path_factory) -> Path:
    return bombs.write_snapshot_bomb(tmp_path_factory.mktemp("snapshot") / "t-0", 400_000)


@pytest.mark.parametrize("name", ["dump", "txn"])
def test_a_snapshot_of_many_producers_streams(name: str, snapshot_bomb: Path) -> None:
    snap = snapshot_bomb
    args = ["dump", str(snap)] if name == "dump" else ["txn", str(snap.parent)]
    mib, code, err = peak(args)
    assert code == 0, err
    assert mib < CAP_MIB, f"{name}: {mib:.1f} MiB"


@pytest.fixture(scope="module")
def metadata_churn(tmp_path_factory) -> Path:
    """A tiered root whose ``__remote_log_metadata`` saw 40 k segments copied and deleted."""
    root = tmp_path_factory.mktemp("churn")
    bombs.write_metadata_churn(root / "__remote_log_metadata-0", 40_000)
    return root


@pytest.mark.parametrize("eng", ENGINES)
def test_remote_log_metadata_is_folded_in_memory_of_its_live_segments(metadata_churn: Path, eng: str) -> None:
    """Issue 31: ``__remote_log_metadata`` of 10^6 records took 1.2 GiB in ``kseg tiered``, one entry kept per
    segment ever named.  Here 40 k segments copied and deleted (160 k records, none live at the end; the code
    before the fix: ~70 MiB): what is held is one entry per live segment, so the peak is the interpreter's."""
    mib, code, err = peak(["tiered", "-q", "--metadata-partitions", "1", str(metadata_churn)], eng)
    assert code == 0, err
    assert mib < STREAMED_CAP_MIB, f"tiered: {mib:.1f} MiB"


@pytest.mark.parametrize("eng", ENGINES)
def test_a_one_line_resume_file_of_300_mb_is_refused_in_bounded_memory(tmp_path: Path, eng: str) -> None:
    """Issue 31: a 300 MB one-line ``--resume`` file took 925 MiB; now read line by line, a line past the
    bound refused where it starts (exit 2).  The file is sparse: NUL bytes, cheap to make."""
    from kseg.ops.verify.resume import MAX_ROW

    report = tmp_path / "r.jsonl"
    with report.open("wb") as f:
        f.truncate(300_000_000)
    part = tmp_path / "t-0"
    bombs.write_null_bomb(part, 10, "none")
    mib, code, err = peak(
        ["verify-index", "--resume", str(report), "--report", str(tmp_path / "n.jsonl"), str(part)], eng
    )
    assert code == 2 and f"a line longer than {MAX_ROW} bytes" in err, err
    assert mib < CAP_MIB, f"verify-index --resume: {mib:.1f} MiB"


def _going_back(directory: Path, batches: int) -> Path:
    """``batches`` one-record batches (a quiet topic's, an index entry every 4 KiB), the middle one made to
    claim offset 0 (baseOffset is outside the v2 CRC): a log whose offsets go back."""
    import struct

    from kseg.testing.bulk import write_bulk_segment

    one = write_bulk_segment(directory, 1, records_per_batch=1, value_size=8).log_bytes
    write_bulk_segment(directory, one * batches, records_per_batch=1, value_size=8)
    with open(directory / "00000000000000000000.log", "r+b") as log:
        log.seek(one * (batches // 2))
        log.write(struct.pack(">q", 0))
    return directory


@pytest.fixture(scope="module")
def going_back(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("back")
    return _going_back(root / "small-0", 110_000), _going_back(root / "large-0", 330_000)  # both past one 8 MiB window


@pytest.mark.parametrize("eng", ENGINES)
def test_verify_index_on_a_log_going_back_holds_what_its_indexes_ask(going_back: tuple[Path, Path], eng: str) -> None:
    """Issue 34: on a log whose offsets go back, verify-index kept every batch for the index checks' searches
    (~130 bytes a batch at its peak: measured 37 and 67 MiB here before, either engine; 546 MiB at 4 M
    batches); now it keeps the batches answering the entries' questions (measured 33 and 34 MiB)."""
    (mib_small, code_small, err), (mib_large, code_large, _) = (peak(["verify-index", str(d)], eng) for d in going_back)
    assert code_small == code_large == 1, err  # offsets-not-increasing
    assert mib_large - mib_small < 8, f"{mib_small:.1f} MiB at 110 k batches, {mib_large:.1f} MiB at 330 k"
    assert mib_large < CAP_MIB, f"{mib_large:.1f} MiB"
