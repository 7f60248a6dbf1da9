"""``kseg salvage`` copying the kept ranges in a second thread while it reads on: an error of the copy
(a write past the file size limit: ``EFBIG``) is the command's one line and exit 2, and Ctrl-C while a copy
runs is exit 130; either way nothing is left where the output would have been, and the input is unchanged."""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kseg.testing.bulk import write_bulk_segment

ROOT = Path(__file__).resolve().parents[3]
SEG0 = "00000000000000000000"
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    part = tmp_path_factory.mktemp("in") / "big-0"
    write_bulk_segment(part, 64 << 20, records_per_batch=20, value_size=200, index_interval_bytes=4096)
    return part


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))  # Python ignores SIGXFSZ: writes get EFBIG


def test_a_write_failing_in_the_copying_thread_is_one_line_and_exit_2(tmp_path: Path, big: Path) -> None:
    before = _digest(big / f"{SEG0}.log")
    out = tmp_path / "o" / "big-0"
    out.parent.mkdir()
    cmd = [sys.executable, "-m", "kseg", "salvage", str(big), "-o", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, preexec_fn=_limit_file_size)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kseg: error: "), p.stderr
    assert lines[0].endswith(f"{SEG0}.log: cannot write: {os.strerror(27)}"), p.stderr  # EFBIG
    assert p.stdout == ""
    assert list(out.parent.iterdir()) == []  # the temporary directory removed, nothing renamed into place
    assert _digest(big / f"{SEG0}.log") == before


def test_ctrl_c_while_a_copy_runs_is_130_and_leaves_nothing(tmp_path: Path, big: Path) -> None:
    """SIGINT once the salvaged log has its first bytes (the copying thread at work): exit 130, one line,
    no directory.  A run that finished first (a fast machine) is tried again, a few times."""
    interrupted = 0
    for attempt in range(5):
        out = tmp_path / f"o{attempt}" / "big-0"
        out.parent.mkdir()
        cmd = [sys.executable, "-m", "kseg", "salvage", "-q", str(big), "-o", str(out)]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
        deadline = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < deadline:
            logs = list(out.parent.glob(f".*.kseg-tmp/{SEG0}.log"))
            if logs and logs[0].exists() and logs[0].stat().st_size > 0:
                p.send_signal(signal.SIGINT)
                break
            time.sleep(0.002)
        _, err = p.communicate(timeout=60)
        if p.returncode == 0:  # finished before the signal
            assert (out / f"{SEG0}.log").stat().st_size == (big / f"{SEG0}.log").stat().st_size
            continue
        assert p.returncode == 130 and err == b"kseg: interrupted\n", (p.returncode, err)
        assert list(out.parent.iterdir()) == []
        interrupted += 1
        if interrupted == 2:
            break
    assert interrupted >= 1
