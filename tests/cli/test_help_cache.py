"""``kseg --help`` is written from a kept copy of click's text (``kseg.cli.help_text``) without importing click:
the copy must be what click prints, byte for byte, in a real process, at every width it is used for; on a
narrower terminal click renders the help itself."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kseg.cli import help_text
from tests.conftest import TESTS

#: kseg.cli.main's own entry point (click), bypassing the kept copy
CLICK = "import sys; sys.argv = ['kseg', '--help']; from kseg.cli.main import main; main()"


def run(argv: list[str], columns: str | None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    p = subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env, cwd=TESTS.parent, timeout=120)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("columns", [None, "80", "81", "132", "1000"])
def test_the_kept_help_is_clicks_rendering(columns: str | None) -> None:
    """No terminal (click's fallback of 80 columns) and terminals of 80 columns or more."""
    clicks = run(["-c", CLICK], columns)
    assert clicks[0] == 0 and clicks[1].startswith("Usage: kseg [OPTIONS] COMMAND [ARGS]...\n")
    assert clicks[1] == help_text.TEXT, "click's help changed: run python3 -m kseg.cli.help_text"
    for flag in ("--help", "-h"):
        assert run(["-m", "kseg", flag], columns) == clicks


@pytest.mark.parametrize("columns", ["79", "60", "40"])
def test_a_narrower_terminal_gets_clicks_own_wrapping(columns: str) -> None:
    clicks = run(["-c", CLICK], columns)
    assert clicks[1] != help_text.TEXT  # wrapped narrower: the kept copy would be wrong here
    assert run(["-m", "kseg", "--help"], columns) == clicks


def test_the_kept_help_is_rendered_from_the_command_group() -> None:
    """help_text.rendered() (what rewrites the copy) is click's text of the group, not a file's."""
    env_columns = os.environ.pop("COLUMNS", None)
    try:
        assert help_text.rendered() == help_text.TEXT
    finally:
        if env_columns is not None:
            os.environ["COLUMNS"] = env_columns


@pytest.mark.parametrize("columns", [100, 80, 79, 50])
def test_a_real_terminal_s_width_is_read_as_click_reads_it(columns: int) -> None:
    """stdout a terminal (a pseudo-terminal of that width), no COLUMNS: the same text as click's."""
    import fcntl
    import pty
    import struct
    import termios

    outs = []
    for argv in (["-c", CLICK], ["-m", "kseg", "--help"]):
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        p = subprocess.Popen([sys.executable, *argv], stdout=follower, env=env, cwd=TESTS.parent)
        os.close(follower)
        data = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            data += chunk
        os.close(leader)
        assert p.wait(timeout=120) == 0
        outs.append(data)
    assert outs[0] == outs[1]
    assert (outs[0].replace(b"\r\n", b"\n").decode() == help_text.TEXT) == (columns >= help_text.COLUMNS)
