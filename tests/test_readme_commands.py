"""The README's two commands, as ``.ci/run`` reads and runs them verbatim (issue 33): one line each, each making
and activating the virtual environment it installs into, so that they work on a system's own Python (Debian's
refuses ``pip install`` outside one: ``externally-managed-environment``) and inside an activated one; the
test line runs the suite on the two processes the README promises."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import TESTS

ROOT = TESTS.parent
VENV = "python3 -m venv .venv && . .venv/bin/activate && "


def _readme_line(ends: str) -> str:
    """The README's indented command line with ``ends`` in it, as ``.ci/run``'s ``readme_line`` finds it."""
    lines = [
        line[4:]
        for line in (ROOT / "README.md").read_text().splitlines()
        if re.match(r"^    python3 -m venv \.venv && ", line) and ends in line
    ]
    assert lines, f"README.md: no command line with {ends!r}"
    return lines[0]


def test_the_two_lines_make_and_activate_their_environment_then_install() -> None:
    setup, test = _readme_line("kseg dump"), _readme_line("pytest")
    assert setup.startswith(VENV + "python3 -m pip install . && kseg dump ")
    upgrade = "python3 -m pip install -q -U pip && "  # a current pip resolves the test extra in far less time
    assert test == VENV + upgrade + "python3 -m pip install --no-compile -e '.[test]' && python3 -m pytest -q"
    ci = (ROOT / ".ci" / "run").read_text()
    assert "readme_line 'kseg dump'" in ci and "readme_line 'pytest'" in ci
    assert 'bash -euo pipefail -c "$setup_line"' in ci and 'bash -euo pipefail -c "$test_line"' in ci


def test_the_suite_runs_on_two_processes_with_what_the_test_extra_installs() -> None:
    project = (ROOT / "pyproject.toml").read_text()  # (tomllib is Python 3.11's; kseg runs on 3.10)
    assert re.search(r'^addopts = "[^"]*-n 2 ', project, re.M)
    test_extra = project.split("\ntest = [\n", 1)[1].split("\n]\n", 1)[0]
    assert re.search(r'^  "pytest-xdist>=', test_extra, re.M)


@pytest.mark.install
def test_the_setup_line_runs_inside_an_activated_environment(tmp_path: Path) -> None:
    """Inside an activated virtual environment (the test line after the set-up line, in one shell), the line's
    ``python3 -m venv .venv`` over the active ``.venv`` keeps it working: the same interpreter, pip there."""
    work = tmp_path / "clone"
    work.mkdir()
    setup = _readme_line("kseg dump").split(" && python3 -m pip")[0]  # the environment's part, no install
    script = f"{setup} && {setup} && python3 -c 'import sys; print(sys.prefix)' && python3 -m pip --version"
    p = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=work, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr[-3000:]
    prefix, pip = p.stdout.splitlines()[-2:]
    assert Path(prefix) == work / ".venv" and str(work / ".venv") in pip
