"""Paths shown as given (kseg/render/given.py): the absolute forms a --spark run reads are shown as the
user gave them, at path boundaries only, JSON's logDir left absolute; and a log directory is never called
``.`` (a relative partition directory's is named absolute, ``.``'s is its parent)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from kseg.render.given import GivenPaths
from tests.conftest import CORPUS_DATA, run_cli


def test_absolute_forms_are_shown_as_given() -> None:
    given = GivenPaths(["data", "./b2/", "/abs", "data/orders-0"], ["/w/data", "/w/b2", "/abs", "/w/data/orders-0"])
    assert (
        given.text("/w/data/orders-0/00000000000000000000.log: clean")
        == "data/orders-0/00000000000000000000.log: clean"
    )
    assert given.text("note: 2 files (/w/data/x-1/a, /w/b2/y-0/b)") == "note: 2 files (data/x-1/a, ./b2/y-0/b)"
    assert given.text("/w/data") == "data" and given.text("/abs/x") == "/abs/x"
    assert given.text("/w/database/x /x/w/data /w/data2") == "/w/database/x /x/w/data /w/data2"  # boundaries
    row = '{"logDir":"/w/data","path":"/w/data/orders-0/0.log","notes":["/w/data/orders-0/a: absent"]}'
    assert given.text(row) == '{"logDir":"/w/data","path":"data/orders-0/0.log","notes":["data/orders-0/a: absent"]}'
    assert not GivenPaths(["/abs", "s3://b/p"], ["/abs", "s3://b/p"])  # nothing to map: the stream as it is
    out = io.BytesIO()
    given.stream(out).write(memoryview(b"/w/data/orders-0\n"))
    assert out.getvalue() == b"data/orders-0\n"


def test_a_log_directory_is_never_called_dot(tmp_path: Path) -> None:
    """``txn orders-0`` run in the log directory, and ``txn .`` in the partition directory, read and name
    the log directory's checkpoint: the working directory (absolute), and for ``.`` its parent -- not the
    partition directory itself."""
    log_dir = tmp_path / "data"
    shutil.copytree(CORPUS_DATA / "txn-v2-0", log_dir / "orders-0")
    r = run_cli(["txn", "orders-0"], cwd=log_dir)
    assert f"no replication-offset-checkpoint in {log_dir}:" in r.text and " in .:" not in r.text, r.text
    (log_dir / "replication-offset-checkpoint").write_text("0\n1\norders 0 40\n")
    for cwd, path in ((log_dir, "orders-0"), (log_dir / "orders-0", ".")):
        r = run_cli(["txn", path], cwd=cwd)
        assert r.exit_code == 0, r.errtext
        assert "below the high watermark 40" in r.text or "high watermark 40" in r.text, r.text
