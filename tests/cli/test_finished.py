"""A lookup run as a process ends at once when it is done (``kseg.cli.ending.Finished``): what it wrote
reaches stdout and stderr whole, through a pipe and into a file (block-buffered), with its exit code; and
when an exit handler is registered the interpreter's own shutdown runs it.  Real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "examples" / "orders-0"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["lookup-offset", "3", str(ORDERS)], 0),
        (["lookup-offset", "3000", str(ORDERS)], 1),  # past the log end: the reason on stderr
        (["lookup-time", "1730000000003", str(ORDERS)], 0),
        (["lookup-offset", "--format", "json", "3", str(ORDERS)], 0),
    ],
)
def test_a_lookup_process_writes_all_it_wrote_in_process(tmp_path: Path, args: list[str], code: int) -> None:
    expected = run_cli(args)  # in process (click's runner): no early end
    assert expected.exit_code == code
    piped = subprocess.run([sys.executable, "-m", "kseg", *args], capture_output=True, env=ENV, timeout=120)
    assert (piped.returncode, piped.stdout, piped.stderr) == (code, expected.stdout, expected.stderr)
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("wb") as o, err.open("wb") as e:
        filed = subprocess.run([sys.executable, "-m", "kseg", *args], stdout=o, stderr=e, env=ENV, timeout=120)
    assert (filed.returncode, out.read_bytes(), err.read_bytes()) == (code, piped.stdout, piped.stderr)


def test_an_exit_handler_still_runs(tmp_path: Path) -> None:
    """Something registered with ``atexit`` (coverage, logging, a library) leaves the shutdown to Python."""
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('handler ran\\n'))\n"
        "sys.argv = ['kseg', 'lookup-offset', '3000', sys.argv[1]]\n"
        "from kseg.cli.start import main\n"
        "main()\n"
    )
    p = subprocess.run([sys.executable, "-c", script, str(ORDERS)], capture_output=True, env=ENV, timeout=120)
    assert p.returncode == 1 and p.stderr.endswith(b"handler ran\n"), p.stderr
    assert b"not found: offset 3000" in p.stderr
