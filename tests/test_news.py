"""The release-note fragments of ``news/`` (docs/contributing.md): one line each, gathered by news/gather.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_fragment_is_one_line() -> None:
    p = subprocess.run([sys.executable, str(ROOT / "news" / "gather.py"), "--check"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_gather_appends_each_fragment_as_one_bullet_under_unreleased(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "news").mkdir(parents=True)
    shutil.copy(ROOT / "news" / "gather.py", repo / "news" / "gather.py")
    (repo / "CHANGELOG.md").write_text("# Changelog\n\n## [Unreleased]\n- old\n\n## [0.1.0]\n- first\n")
    (repo / "news" / "dump-b.md").write_text("second change\n")
    (repo / "news" / "dump-a.md").write_text("- first change\n")
    p = subprocess.run([sys.executable, str(repo / "news" / "gather.py")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert (repo / "CHANGELOG.md").read_text() == (
        "# Changelog\n\n## [Unreleased]\n- old\n- first change\n- second change\n\n## [0.1.0]\n- first\n"
    )
    assert sorted(x.name for x in (repo / "news").iterdir()) == ["gather.py"]


def test_a_fragment_of_two_lines_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "news").mkdir(parents=True)
    shutil.copy(ROOT / "news" / "gather.py", repo / "news" / "gather.py")
    (repo / "news" / "x.md").write_text("one\ntwo\n")
    p = subprocess.run([sys.executable, str(repo / "news" / "gather.py"), "--check"], capture_output=True, text=True)
    assert p.returncode == 1
    assert "x.md: a fragment is one line, found 2" in p.stderr
