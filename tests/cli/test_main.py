"""The command group: fast start, version, and every command documented."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kseg import __version__
from kseg.cli.main import COMMANDS
from tests.conftest import CORPUS_DATA, run_cli

ROOT = Path(__file__).resolve().parents[2]
HEAVY = [
    "pyspark",
    "rich",
    "lz4",
    "zstandard",
    "snappy",
    "cramjam",
    "crc32c",
    "kseg.decoders",
    "kseg.storage",
    "kseg.ops",
]


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["dump", "--help"]])
def test_start_imports_nothing_heavy(args: list[str]) -> None:
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['kseg'] + {args!r}\n"
        "try:\n    runpy.run_module('kseg', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        f"print(__import__('json').dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} "
        f"or any(m.startswith(h) for h in {HEAVY!r}))))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(p.stdout.strip().splitlines()[-1])
    assert loaded == [], loaded


def test_version() -> None:
    r = run_cli(["--version"])
    assert r.exit_code == 0 and __version__ in r.text


def test_help_lists_every_command() -> None:
    r = run_cli(["--help"])
    for name in COMMANDS:
        assert name in r.text


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_is_documented(name: str) -> None:
    """Each command has a page in docs/ that names it, linked from docs/index.md, and --help text."""
    index = (ROOT / "docs" / "index.md").read_text()
    pages = [p for p in (ROOT / "docs").glob("*.md") if f"kseg {name}" in p.read_text() and p.name != "index.md"]
    assert pages, f"no docs page shows `kseg {name}`"
    assert any(p.name in index for p in pages), f"docs/index.md links none of {[p.name for p in pages]}"
    r = run_cli([name, "--help"])
    assert r.exit_code == 0 and "Usage:" in r.text


def test_an_unexpected_exception_is_one_line_exit_2(tmp_path, monkeypatch) -> None:
    """A bug in kseg (any exception a command does not handle) is one ``kseg: error: internal error``
    line and exit 2 -- never a traceback, never 1 ("problems"); ``KSEG_TRACEBACK=1`` re-raises it."""
    from kseg.ops.compaction import compaction

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(compaction, "scan_segment", broken)
    monkeypatch.delenv("KSEG_TRACEBACK", raising=False)
    r = run_cli(["compaction", str(CORPUS_DATA / "plain-v2-0")])
    assert r.exit_code == 2
    assert r.errtext == (
        "kseg: error: internal error: RuntimeError: boom (a bug in kseg; KSEG_TRACEBACK=1 shows where)\n"
    )
    monkeypatch.setenv("KSEG_TRACEBACK", "1")
    with pytest.raises(RuntimeError, match="boom"):
        run_cli(["compaction", str(CORPUS_DATA / "plain-v2-0")])
