"""``export --spark`` killed mid-job on ``local[2]`` leaves nothing a reader takes as data (issue 39):
the tasks write under ``OUTPUT/_temporary/<run>/`` (skipped by readers: a name starting with ``_``), the
driver moves the files into place and writes ``_SUCCESS`` last.  A re-run over the same output removes
what the killed run left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_export_killed import _kill, _readable_data, _start, _wait_for

pq = pytest.importorskip("pyarrow.parquet", reason="export writes Parquet with pyarrow (the test extra)")


def test_a_killed_spark_export_leaves_nothing_a_reader_takes(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from kseg.testing.bombs import write_many_partitions

    root = write_many_partitions(tmp_path / "root", 200)
    out = tmp_path / "out"
    args = ["export", "--spark", "--master", "local[2]", str(root), "-o", str(out)]
    args += ["--spark-conf", "spark.kseg.bytesPerTask=1", "--target-file-size", "1"]
    proc = _start(args, tmp_path)
    _wait_for(proc, lambda: any((out / "_temporary").rglob("part-*.parquet")), "a staged part file", limit=600)
    _kill(proc)
    assert _readable_data(out) == [] and not (out / "_SUCCESS").exists()
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]), TMPDIR=str(tmp_path))
    r = subprocess.run([*[sys.executable, "-m", "kseg"], *args], capture_output=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr.decode()[-3000:]  # the re-run takes over: what the kill left is removed
    assert not (out / "_temporary").exists() and (out / "_SUCCESS").exists()
    rows = [row for f in _readable_data(out) for row in pq.read_table(f).to_pylist()]
    assert len(rows) == 200
