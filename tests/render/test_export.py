"""Parquet row groups of ``kseg export`` (``render.export``): bounded, and spanning splits (issue 19)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kseg.render import export
from kseg.testing.bombs import write_many_partitions, write_null_bomb
from tests.conftest import run_cli


def test_one_record_splits_share_row_groups(tmp_path: Path) -> None:
    root = write_many_partitions(tmp_path / "logs", 300)
    out = tmp_path / "out.parquet"
    r = run_cli(["export", "-q", str(root), "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    meta = pq.ParquetFile(out).metadata
    assert (meta.num_rows, meta.num_row_groups) == (300, 1)  # was one row group a split
    table = pq.read_table(out)
    assert sorted(table.column("partition").to_pylist()) == list(range(300))
    assert set(table.column("value").to_pylist()) == {b"v"}


def test_row_groups_are_bounded_in_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export, "ROW_GROUP_ROWS", 5000)
    write_null_bomb(tmp_path / "t-0", 12_000, "zstd")
    out = tmp_path / "out.parquet"
    r = run_cli(["export", "-q", str(tmp_path / "t-0"), "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    meta = pq.ParquetFile(out).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert sum(sizes) == 12_001  # the bomb's records and the record after it
    assert max(sizes) <= 5000 + export.ROWS_PER_BATCH
    assert pq.read_table(out).column("offset").to_pylist() == list(range(12_001))


def test_row_groups_flush_on_bytes() -> None:
    written = []

    class Writer:
        def write_table(self, table, row_group_size):
            written.append((table.num_rows, row_group_size))

    groups = export.RowGroups(Writer(), rows=10**6, nbytes=1000)
    batch = pa.RecordBatch.from_pydict({"x": pa.array(range(100), pa.int64())})  # 800 bytes
    for _ in range(3):
        groups.add(batch)
    groups.flush()
    assert written == [(200, 200), (100, 100)]
    assert groups.groups == 2
