"""``kseg.errors``: one hierarchy, errors never changed after they are raised, one printed form."""

from __future__ import annotations

import ast
from pathlib import Path

from kseg.errors import CorruptRecordError, InputError, KsegError, LimitExceededError, error_line

KSEG = Path(__file__).resolve().parent.parent / "kseg"


def test_at_returns_an_anchored_copy():
    exc = LimitExceededError("too big", position=4, hint="raise it")
    moved = exc.at("/x/0.log", 100)
    assert (moved.path, moved.position, moved.hint, type(moved)) == ("/x/0.log", 104, "raise it", LimitExceededError)
    assert (exc.path, exc.position) == (None, 4)  # the original is untouched


def test_at_keeps_a_path_and_uses_a_default_position():
    exc = CorruptRecordError("bad", path="/a.log")
    assert exc.at("/b.log", 10).position is None
    moved = exc.at("/b.log", 10, default=61)
    assert (moved.path, moved.position) == ("/a.log", 71)


def test_extended_appends_to_a_copy():
    exc = InputError("cannot open", path="/p")
    longer = exc.extended("; index entries are not checked")
    assert longer.describe() == "/p: cannot open; index entries are not checked"
    assert exc.describe() == "/p: cannot open"


def test_error_line():
    assert error_line(KsegError("m", path="f", position=3, hint="h")) == "kseg: error: f: at byte 3: m (hint: h)"


def _classes_deriving_from_kseg_errors(tree: ast.AST) -> list[str]:
    names = {
        "KsegError",
        "CorruptRecordError",
        "DecompressionError",
        "LimitExceededError",
        "CorruptIndexError",
        "CorruptSnapshotError",
        "InputError",
        "UsageError",
        "DecoderError",
        "UncaughtJavaError",
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", None) for b in node.bases}
            if bases & names:
                found.append(node.name)
    return found


# Files changed in parallel for issue 11's verify/rebuild work; the lead moves their classes after merging.
PENDING: set[str] = set()


def test_every_kseg_exception_is_defined_in_errors_py():
    strays = {}
    for path in KSEG.rglob("*.py"):
        rel = path.relative_to(KSEG).as_posix()
        if rel == "errors.py" or rel in PENDING:
            continue
        found = _classes_deriving_from_kseg_errors(ast.parse(path.read_text()))
        if found:
            strays[rel] = found
    assert strays == {}
