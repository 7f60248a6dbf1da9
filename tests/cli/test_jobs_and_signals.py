"""``--jobs`` bounded by the CPUs and the descriptor limit, workers that leave Ctrl-C to the parent, and
Ctrl-C at any moment after start-up (issue 19).  Real processes, real signals, ``ulimit -n`` set with
``resource.setrlimit`` in the child."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    from tests.trees import many_partitions

    return many_partitions(tmp_path_factory.mktemp("jobs") / "data", 60)  # 120 segments


def _nofile(limit: int):
    def set_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    return set_limit


def _cpus() -> int:
    return len(os.sched_getaffinity(0))


@pytest.mark.parametrize("args", [["verify-index", "--jobs", "4"], ["rebuild-index", "--check", "--jobs", "8"]])
def test_a_low_descriptor_limit_lowers_jobs_with_a_note(root: Path, args: list[str]) -> None:
    """With ``ulimit -n 16`` verify-index --jobs 4 ended in an EMFILE traceback and rebuild-index --check
    --jobs 8 hung: now one process does the work, and a note says why."""
    p = subprocess.run(
        [sys.executable, "-m", "kseg", *args, str(root)],
        capture_output=True,
        cwd=ROOT,
        preexec_fn=_nofile(16),
        timeout=120,
    )
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert err == f"kseg: note: --jobs {args[-1]} lowered to 1: the open-file limit is 16 (ulimit -n)\n"
    assert b"120 segments" in p.stdout.splitlines()[-1]


def test_jobs_beyond_the_cpus_are_lowered_with_a_note(root: Path) -> None:
    cpus = _cpus()
    p = subprocess.run(
        [sys.executable, "-m", "kseg", "verify-index", "--jobs", str(cpus + 3), str(root)],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert p.returncode == 0
    if cpus > 1:
        assert p.stderr.decode() == f"kseg: note: --jobs {cpus + 3} lowered to {cpus}: {cpus} CPUs\n"
    else:
        assert p.stderr.decode() == "kseg: note: --jobs 4 lowered to 1: 1 CPU\n"
    q = subprocess.run(
        [sys.executable, "-m", "kseg", "verify-index", "-q", "--jobs", str(cpus + 3), str(root)],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert q.returncode == 0 and q.stderr == b""  # --quiet silences the note


@pytest.mark.parametrize("run", range(4))
def test_ctrl_c_during_a_parallel_rebuild_is_one_line(root: Path, tmp_path: Path, run: int) -> None:
    """Workers ignore SIGINT (they printed tracebacks in 19 of 40 runs): the parent stops them and says so once."""
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kseg",
            "rebuild-index",
            "--jobs",
            "2",
            "--format",
            "json",
            "--output-dir",
            str(tmp_path / "out"),
            str(root),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert p.stdout.readline().startswith(b"{")  # workers are running
    time.sleep(0.01 * run)
    p.send_signal(signal.SIGINT)
    p.stdout.read()
    err = p.stderr.read()
    assert p.wait() == 130, err
    assert err == b"kseg: interrupted\n"


def test_ctrl_c_at_any_moment_after_start_up_is_130(root: Path) -> None:
    """A Ctrl-C while the command line is still being imported or parsed printed a traceback, or click's
    ``Aborted!`` with exit 1.  The interpreter runs without ``site`` (-S: its .pth files take tens of
    milliseconds before any kseg code), so the sweep covers kseg's own start: every outcome is exit 130
    with one line, or death by SIGINT before Python started, or a finished run."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *(p for p in sys.path if p)]))
    command = [sys.executable, "-S", "-m", "kseg", "verify-index", "--jobs", "2", str(root)]
    # The sweep spans one whole run as this machine runs it now (a loaded machine starts slower): its 30
    # moments fall from before Python starts to the run's end, whatever the machine's speed.
    began = time.monotonic()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env, check=True)
    whole = time.monotonic() - began
    outcomes = []
    for i in range(30):
        p = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, env=env)
        time.sleep(whole * i / 30)
        p.send_signal(signal.SIGINT)
        err = p.communicate(timeout=60)[1].decode()  # a worker left behind would hold stderr open: a hang
        rc = p.returncode
        outcomes.append(rc)
        assert "Aborted!" not in err
        assert not any(where in err for where in ("kseg/cli/", "click/", "concurrent/")), err
        if rc == 130:
            assert err == "kseg: interrupted\n"
        else:
            assert rc in (-signal.SIGINT, 0) or "Traceback" in err and "kseg" not in err, (rc, err)
    assert outcomes.count(130) >= 10, outcomes


def test_ctrl_c_in_the_interpreters_shutdown_is_the_signal_never_a_traceback(root: Path) -> None:
    """A Ctrl-C after the command is over, while the interpreter shuts down (joining ``--jobs`` workers,
    running exit handlers), raised a KeyboardInterrupt inside an exit handler: "Exception ignored in:
    <module 'threading'>" and a traceback (the sweep above met it once).  Here an exit handler sends the
    SIGINT, so it lands in the shutdown every time: the process ends by the signal, stderr without a trace."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), *(p for p in sys.path if p)]))
    code = (
        "import atexit, os, signal, sys\n"
        "atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))\n"
        f"sys.argv = ['kseg', 'verify-index', '--jobs', '2', {str(root)!r}]\n"
        "from kseg.cli.start import main\n"
        "main()\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=ROOT, env=env, timeout=120)
    err = p.stderr.decode()
    assert p.returncode == -signal.SIGINT, (p.returncode, err)
    assert "Traceback" not in err and "Exception ignored" not in err and "KeyboardInterrupt" not in err, err
    assert b"verified" in p.stdout  # the command's own output was whole before the shutdown


@pytest.mark.parametrize(
    "wrapped, code, err", [(KeyboardInterrupt, 130, "kseg: interrupted\n"), (BrokenPipeError, -signal.SIGPIPE, "")]
)
def test_a_signal_wrapped_by_python_is_still_the_signal(wrapped: type, code: int, err: str) -> None:
    """Python can hand a Ctrl-C (or a closed pipe) on inside another exception -- 3.11 raises
    ``RuntimeError("Error calling __set_name__ ...")`` from a KeyboardInterrupt that lands while a class
    body runs: still exit 130 (or death by SIGPIPE), never ``internal error`` (a race the sweep above met)."""
    code_text = (
        "from kseg.cli.main import fatal\n"
        f"try:\n    raise {wrapped.__name__}()\n"
        "except BaseException as inner:\n"
        "    outer = RuntimeError('Error calling __set_name__')\n"
        "    outer.__cause__ = inner\n"
        "    fatal(outer)\n"
    )
    p = subprocess.run([sys.executable, "-c", code_text], capture_output=True, cwd=ROOT, timeout=60)
    assert p.returncode == code, (p.returncode, p.stderr)
    assert p.stderr.decode() == err


def test_a_worker_dies_with_its_parent() -> None:
    """A parent that exits at once (a Ctrl-C while its pool starts) leaves no worker blocked on its task
    queue, holding stderr open: the workers carry PR_SET_PDEATHSIG (the sweep above met such an orphan)."""
    code = (
        "import os\nfrom kseg.storage.workers import new_pool\n"
        "pool = new_pool(1)\nprint(pool.submit(os.getpid).result(), flush=True)\nos._exit(0)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=ROOT, timeout=60)
    worker = int(p.stdout.decode().strip())
    deadline = time.monotonic() + 20
    while os.path.exists(f"/proc/{worker}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{worker}"), "the worker outlived its parent"
