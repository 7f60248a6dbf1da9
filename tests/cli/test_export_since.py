"""``export --report`` / ``--since`` (issue 39): an incremental export equals the full export in two steps.

A partition gets records, is exported with ``--report``; more are appended (a new segment, and a second
partition appears); ``--since`` the report exports only the new ones.  The two outputs together are the
full export's rows, each record once; a third run with nothing new writes no record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kseg.testing.segment import write_segment
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import CORPUS_DATA, run_cli

pq = pytest.importorskip("pyarrow.parquet", reason="export writes Parquet with pyarrow (the test extra)")
T = 1_700_000_000_000


def _segment(directory: Path, base: int, count: int) -> None:
    batches = [
        [build_v2_batch([RecordSpec(b"k%d" % o, b"v%d" % o, T + o)], base_offset=o)] for o in range(base, base + count)
    ]
    write_segment(directory, batches, base_offset=base)


def _rows(*outputs: Path) -> list[tuple]:
    rows = [r for out in outputs for r in pq.read_table(out).to_pylist()]
    return sorted((r["topic"], r["partition"], r["offset"], r["value"]) for r in rows)


def _two_steps(tmp_path: Path, spark: list[str]) -> tuple[list[tuple], list[tuple], dict]:
    root = tmp_path / "data"
    _segment(root / "orders-0", 0, 40)
    report = tmp_path / "r.json"
    first = run_cli(["export", str(root), "-o", str(tmp_path / "a.parquet"), "--report", str(report)])
    assert first.exit_code == 0, first.errtext
    _segment(root / "orders-0", 40, 25)
    _segment(root / "orders-1", 0, 10)
    second_out = tmp_path / ("b" if spark else "b.parquet")
    args = ["export", *spark, str(root), "-o", str(second_out), "--since", str(report), "--report", str(report)]
    if spark:  # the job on this process's shared local[2] session (tests/spark/shared.py): no JVM of its own
        from tests.spark.shared import run_on_spark

        second = run_on_spark(args)
    else:
        second = run_cli(args)
    assert second.exit_code == 0, second.errtext[-3000:]
    assert run_cli(["export", str(root), "-o", str(tmp_path / "full.parquet")]).exit_code == 0
    parts = [second_out] if not spark else sorted(second_out.glob("*.parquet"))
    return _rows(tmp_path / "a.parquet", *parts), _rows(tmp_path / "full.parquet"), json.loads(report.read_text())


def test_incremental_export_equals_the_full_export_in_two_steps(tmp_path: Path) -> None:
    together, full, report = _two_steps(tmp_path, [])
    assert together == full and len(full) == 75
    key = str((tmp_path / "data" / "orders-0").resolve())
    assert report["type"] == "exportReport" and report["nextOffsets"][key] == 65
    third = run_cli(
        ["export", str(tmp_path / "data"), "-o", str(tmp_path / "c.parquet"), "--since", str(tmp_path / "r.json")]
    )
    assert third.exit_code == 0 and third.text.startswith("0 records"), third.text


def test_the_report_is_a_versioned_row_and_a_first_version_report_is_still_read(tmp_path: Path) -> None:
    from kseg.jsonlines import SCHEMA_VERSION
    from kseg.render.export_report import read_since, report_bytes

    doc = json.loads(report_bytes({"/d/t-0": 5}, {"/d/t-1": 7}))
    assert list(doc) == ["type", "v", "nextOffsets"] and doc["v"] == SCHEMA_VERSION
    assert doc["nextOffsets"] == {"/d/t-0": 5, "/d/t-1": 7}
    old = tmp_path / "old.json"
    old.write_text('{"type": "exportReport", "version": 1, "nextOffsets": {"/d/t-0": 5}}')
    assert read_since(str(old)) == {"/d/t-0": 5}
    old.write_text('{"type": "exportReport", "v": 2, "nextOffsets": {"/d/t-0": 5}}')
    assert read_since(str(old)) == {"/d/t-0": 5}  # written by an earlier version of the schema
    old.write_text('{"type": "exportReport", "version": 3, "nextOffsets": {"/d/t-0": 5}}')
    with pytest.raises(Exception, match="not an export report of version"):
        read_since(str(old))
    old.write_text('{"type": "exportReport", "v": %d, "nextOffsets": {"/d/t-0": 5}}' % (SCHEMA_VERSION + 1))
    with pytest.raises(Exception, match="not an export report of version"):
        read_since(str(old))  # a later kseg's


def test_since_refuses_what_is_not_a_report_and_time_ranges(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "something"}')
    src = str(CORPUS_DATA / "plain-v2-0")
    r = run_cli(["export", src, "-o", str(tmp_path / "x.parquet"), "--since", str(bad)])
    assert r.exit_code == 2 and "not an export report" in r.errtext
    r = run_cli(["export", src, "-o", str(tmp_path / "x.parquet"), "--report", str(bad), "--from-time", "0"])
    assert r.exit_code == 2 and "not with --from-time/--to-time" in r.errtext
