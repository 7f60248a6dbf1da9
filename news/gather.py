"""Gather the one-line release-note fragments of ``news/`` into CHANGELOG.md's [Unreleased] section.

Run from the repository root: ``python3 news/gather.py``.  Each fragment becomes one bullet (sorted by
file name, so fragments of one topic stand together) and its file is removed.  ``--check`` only checks
the fragments' form (one non-empty line, at most 400 characters) and exits 1 on the first bad one.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEWS = ROOT / "news"
CHANGELOG = ROOT / "CHANGELOG.md"
HEADING = "## [Unreleased]"
MAX_LINE = 400


def fragments() -> list[Path]:
    return sorted(p for p in NEWS.glob("*.md") if p.name != "README.md")


def line_of(path: Path) -> str:
    """The fragment's one line, without a leading ``- ``; ValueError naming the file when it is not one line."""
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    if len(lines) != 1:
        raise ValueError(f"{path.name}: a fragment is one line, found {len(lines)}")
    text = lines[0].removeprefix("- ").strip()
    if len(text) > MAX_LINE:
        raise ValueError(f"{path.name}: {len(text)} characters, at most {MAX_LINE}")
    return text


def gather() -> int:
    paths = fragments()
    bullets = [f"- {line_of(p)}" for p in paths]
    text = CHANGELOG.read_text(encoding="utf-8")
    at = text.index(HEADING) + len(HEADING)
    nxt = text.find("\n## ", at)
    section = text[at:nxt] if nxt >= 0 else text[at:]
    body = section.rstrip("\n") + "\n" + "\n".join(bullets) if bullets else section.rstrip("\n")
    rest = text[nxt:] if nxt >= 0 else "\n"
    CHANGELOG.write_text(text[:at] + body.rstrip("\n") + "\n" + rest, encoding="utf-8")
    for p in paths:
        p.unlink()
    print(f"{len(bullets)} fragment(s) gathered into {CHANGELOG.name}")
    return 0


def check() -> int:
    for p in fragments():
        try:
            line_of(p)
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(check() if "--check" in sys.argv[1:] else gather())
