"""Exit codes that must never read as a verdict: Ctrl-C (130) and a closed stdout (SIGPIPE).

Real processes on a log root whose output is far larger than a pipe's buffer, so the
command is still writing when its reader stops (no timing involved: a full pipe blocks it).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def big_root(tmp_path_factory) -> Path:
    from tests.trees import many_partitions

    return many_partitions(tmp_path_factory.mktemp("big") / "data", 250)  # 500 segments, ~150 KB of JSON


def _start(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kseg", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
    )


@pytest.mark.parametrize(
    "args",
    [
        ["verify-index", "--format", "json"],
        ["verify-index", "--format", "json", "--jobs", "2"],
        ["rebuild-index", "--check", "--format", "json"],
    ],
)
def test_ctrl_c_is_exit_130_with_one_line(big_root: Path, args: list[str]) -> None:
    p = _start([*args, str(big_root)])
    assert p.stdout.readline().startswith(b"{")  # it is running; it blocks once the pipe is full
    p.send_signal(signal.SIGINT)
    p.stdout.read()
    err = p.stderr.read()
    assert p.wait() == 130
    assert err == b"kseg: interrupted\n"


@pytest.mark.parametrize(
    "args",
    [
        ["verify-index", "--format", "json", "{root}"],
        ["verify-index", "--jobs", "2", "--format", "json", "{root}"],
        ["rebuild-index", "--check", "{root}"],
        ["dump", "--deep-iteration", "--print-data-log", str(CORPUS_DATA / "large-v2-0" / "00000000000000000000.log")],
    ],
)
def test_a_closed_stdout_ends_the_run_by_sigpipe(big_root: Path, args: list[str]) -> None:
    """`kseg verify-index tree | head -1`: killed by SIGPIPE (the shell shows 141) as git is, quietly;
    never 0 ("clean") or 1 ("problems"), never a traceback."""
    p = _start([a.format(root=big_root) for a in args])
    assert p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait() == -signal.SIGPIPE, err
    assert err == b""


def test_the_shell_sees_141(big_root: Path) -> None:
    p = subprocess.run(
        [
            "bash",
            "-c",
            f'"{sys.executable}" -m kseg verify-index "{big_root}" | head -1; echo "status=${{PIPESTATUS[0]}}"',
        ],
        capture_output=True,
        cwd=ROOT,
    )
    assert p.stdout.decode().splitlines()[-1] == "status=141"
    assert p.stderr == b""
