"""An export killed mid-job leaves nothing a reader takes as data (issue 39), locally and on ``local[2]``.

The local export writes its one file unnamed (``O_TMPFILE``) and names it when whole; ``--spark`` writes
under ``OUTPUT/_temporary/<run>/``, which readers skip (a name starting with ``_``), and commits by moving
the files into place and writing ``_SUCCESS`` last.  The process is killed (SIGKILL: no clean-up code
runs) once it is seen writing; the output is then read as a reader would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA

pq = pytest.importorskip("pyarrow.parquet", reason="export writes Parquet with pyarrow (the test extra)")


def _start(args: list[str], tmp_path: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), TMPDIR=str(tmp_path))
    return subprocess.Popen(
        [sys.executable, "-m", "kseg", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )


def _wait_for(proc: subprocess.Popen, seen, what: str, limit: float = 300) -> None:
    """Poll until ``seen()`` (no timing is asserted: the limit only ends a hung test)."""
    deadline = time.monotonic() + limit
    while not seen():
        assert proc.poll() is None, f"the export ended before {what}: {proc.stderr.read().decode()[-2000:]}"
        assert time.monotonic() < deadline, f"never saw {what}"
        time.sleep(0.05)


def _kill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _readable_data(out: Path) -> list[Path]:
    """The Parquet files a reader of ``out`` takes: not below a name starting with ``_`` or ``.``."""
    return [p for p in out.rglob("*.parquet") if not any(part[0] in "_." for part in p.relative_to(out).parts)]


def test_a_killed_local_export_leaves_no_file(tmp_path: Path) -> None:
    out_dir = tmp_path / "o"
    out_dir.mkdir()
    out = out_dir / "x.parquet"
    proc = _start(["export", "--max-rate", "0.1", str(CORPUS_DATA / "large-v2-0"), "-o", str(out)], tmp_path)

    def writing() -> bool:  # the unnamed output file is open in the output directory
        try:
            links = [os.readlink(f"/proc/{proc.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{proc.pid}/fd")]
        except OSError:
            return False
        return any(link.startswith(str(out_dir)) for link in links)

    _wait_for(proc, writing, "the output being written")
    _kill(proc)
    assert list(out_dir.iterdir()) == []
    r = subprocess.run(
        [sys.executable, "-m", "kseg", "export", str(CORPUS_DATA / "plain-v2-0"), "-o", str(out)],
        capture_output=True,
        env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2])),
    )
    assert r.returncode == 0, r.stderr  # the re-run is not refused
