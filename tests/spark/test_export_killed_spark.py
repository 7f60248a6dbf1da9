"""``export --spark`` killed mid-job on ``local[2]`` leaves nothing a reader takes as data (issue 39):
the tasks write under ``OUTPUT/_temporary/<run>/`` (skipped by readers: a name starting with ``_``), the
driver moves the files into place and writes ``_SUCCESS`` last.  A re-run over the same output removes
what the killed run left."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_export_killed import _kill, _readable_data, _start, _wait_for
from tests.spark.shared import run_on_spark

pq = pytest.importorskip("pyarrow.parquet", reason="export writes Parquet with pyarrow (the test extra)")

#: one-record partitions, each its own task and file (``bytesPerTask=1``): the kill comes once the first file is
#: staged, with tens of tasks still to run (~0.05 s each on local[2]); the re-run writes them all again
PARTITIONS = 60


def test_a_killed_spark_export_leaves_nothing_a_reader_takes(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from kseg.testing.bombs import write_many_partitions

    root = write_many_partitions(tmp_path / "root", PARTITIONS)
    out = tmp_path / "out"
    args = ["export", "--spark", "--master", "local[2]", str(root), "-o", str(out)]
    args += ["--spark-conf", "spark.kseg.bytesPerTask=1", "--target-file-size", "1"]
    proc = _start(args, tmp_path)
    _wait_for(proc, lambda: any((out / "_temporary").rglob("part-*.parquet")), "a staged part file", limit=600)
    _kill(proc)
    assert _readable_data(out) == [] and not (out / "_SUCCESS").exists()
    # the re-run (no fresh process needed: on this process's shared session, tests/spark/shared.py) takes over:
    # what the kill left is removed
    r = run_on_spark(args)
    assert r.exit_code == 0, r.errtext[-3000:]
    assert not (out / "_temporary").exists() and (out / "_SUCCESS").exists()
    rows = [row for f in _readable_data(out) for row in pq.read_table(f).to_pylist()]
    assert len(rows) == PARTITIONS


def test_an_output_bucket_that_does_not_exist_is_said_before_the_job(s3, tmp_path: Path) -> None:
    """No such bucket: exit 2 before any Spark work, with the store's own reason; an existing bucket
    written to without --force where an export is already: refused before the job too."""
    from tests.conftest import CORPUS_DATA, run_subprocess

    src = str(CORPUS_DATA / "plain-v2-0")
    r = run_subprocess(["export", "--spark", "--master", "local[1]", src, "-o", "s3://no-such-bucket-kseg/x"])
    assert r.exit_code == 2, r.errtext[-2000:]
    line = r.errtext.strip().splitlines()[-1]
    assert "s3://no-such-bucket-kseg/x" in line and "cannot write the output" in line, r.errtext
    assert "bucket" in line.lower(), line  # the store's reason (NoSuchBucket), not "no such file or directory"
    assert "Spark" not in r.errtext and "Traceback" not in r.errtext  # no session was started
    s3.client.put_object(Bucket="kseg-test", Key="exports/taken/part-0.parquet", Body=b"x")
    r = run_subprocess(["export", "--spark", "--master", "local[1]", src, "-o", s3.uri("exports/taken")])
    assert r.exit_code == 2 and "exists; not replaced" in r.errtext, r.errtext[-2000:]
