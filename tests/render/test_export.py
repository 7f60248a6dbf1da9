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


@pytest.mark.parametrize("target", [256 << 10, 1 << 20, 1 << 30])
def test_files_of_a_target_size_hold_every_row_once(tmp_path: Path, target: int) -> None:
    """``write_parquet_files``: the corpus' splits (small partitions and a 3 MiB one) into files of about the
    target (within it but for the footer; near it but for the last), every row once, in order."""
    from kseg.ops.export.export import Ranges, plan
    from kseg.storage.outputs import destination
    from kseg.storage.stores.find import discover
    from tests.conftest import CORPUS_DATA
    from tests.stores import local

    splits = plan(discover([str(CORPUS_DATA)], []), Ranges(), 1 << 20)
    whole = tmp_path / "whole.parquet"
    one = export.write_parquet(splits, destination(str(whole)), ranges=Ranges(), limit=1 << 26)
    summary, written = export.write_parquet_files(
        splits, lambda n: str(tmp_path / f"part-{n:04d}.parquet"), target, ranges=Ranges(), limit=1 << 26, store=local()
    )
    assert (summary.records, summary.splits, len(summary.corrupt)) == (one.records, one.splits, len(one.corrupt))
    rows = [row for f in written for row in pq.read_table(f).to_pylist()]
    assert rows == pq.read_table(whole).to_pylist() and len(rows) > 1000
    data = [Path(f).stat().st_size - pq.ParquetFile(f).metadata.serialized_size for f in written]  # no footer
    assert all(size <= target for size in data), (target, data)
    if target < 1 << 30:  # the corpus' rows are ~1.3 MiB in files of small row groups
        assert len(written) > 1 and all(Path(f).stat().st_size >= target * 3 // 4 for f in written[:-1]), (target, data)
    else:
        assert len(written) == 1
