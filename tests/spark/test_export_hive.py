"""``export --spark --partition-by topic,partition`` (issue 39): a hive layout on ``local[2]``.

Files under ``OUTPUT/topic=T/partition=P/`` without those two columns; Spark (and pyarrow's hive
discovery) give back the local export's rows, topic and partition from the directory names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, run_cli
from tests.spark.shared import run_on_spark

pq = pytest.importorskip("pyarrow.parquet", reason="export writes Parquet with pyarrow (the test extra)")


def test_hive_layout_holds_the_local_rows(tmp_path: Path) -> None:
    import pyarrow.dataset as ds

    root = tmp_path / "data"
    for name in ("v2-zstd-0", "plain-v2-0", "v1-gzip-0"):
        shutil.copytree(CORPUS_DATA / name, root / name)
    local = tmp_path / "local.parquet"
    assert run_cli(["export", str(root), "-o", str(local)]).exit_code == 0
    out = tmp_path / "out"
    args = ["export", "--spark", "--master", "local[2]", str(root), "-o", str(out), "--partition-by", "topic,partition"]
    r = run_on_spark(args)  # the job on the test process's shared session (tests/spark/shared.py)
    assert r.exit_code == 0, r.errtext[-3000:]
    dirs = sorted(str(p.relative_to(out)) for p in out.glob("topic=*/partition=*"))
    assert dirs == ["topic=plain-v2/partition=0", "topic=v1-gzip/partition=0", "topic=v2-zstd/partition=0"]
    files = list(out.rglob("*.parquet"))
    assert files and all("topic" not in pq.read_schema(f).names for f in files)
    table = ds.dataset(str(out), format="parquet", partitioning="hive").to_table()

    def key(row: dict) -> tuple:
        return (row["topic"], row["offset"], row["value"])

    got = sorted(((row["topic"], row["offset"], row["value"]) for row in table.to_pylist()), key=str)
    want = sorted((key(row) for row in pq.read_table(local).to_pylist()), key=str)
    assert got == want and (out / "_SUCCESS").exists()
    r = run_cli(["export", str(root), "-o", str(tmp_path / "x.parquet"), "--partition-by", "topic,partition"])
    assert r.exit_code == 2 and "--partition-by is for --spark" in r.errtext
