"""Partial verdicts of ``verify-index --spark``: a bin whose task keeps dying becomes ``failed`` rows
for its segments (exit 2) while every other bin's rows stand; overlap checks across bins."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kseg.ops.verify.report import sort_key
from kseg.ops.verify.run import WorkItem
from kseg.ops.verify.verify import SegmentResult
from kseg.spark.bins import Run, plan_runs
from kseg.spark.job import KILL_WORKER_ENV, _Bins
from kseg.storage.listing import Listed
from kseg.storage.outputs import destination
from kseg.storage.partition import Partition, Segment
from tests.cli.test_verify_resume import overlapping_partition
from tests.conftest import CORPUS_DATA, run_cli
from tests.spark.shared import run_on_spark
from tests.stores import local


def _item(partition: str, base: int, size: int) -> WorkItem:
    return WorkItem(
        "/d",
        partition,
        f"/d/{partition}",
        local(),
        Segment(base, log=f"/d/{partition}/{base:020d}.log", log_bytes=size, store=local()),
    )


def _listed(partition: str, *segments: tuple[int, int]) -> Listed:
    """The listed partition ``/d/<partition>`` of ``(base offset, .log bytes)`` segments."""
    return Listed(
        Partition(f"/d/{partition}", [_item(partition, base, size).segment for base, size in segments], store=local())
    )


def _run(part: Listed, lo: int, hi: int, first: int | None = None) -> Run:
    """Segments ``lo`` to ``hi`` of ``part`` as a run (its first index ``lo`` unless given)."""
    return Run(part, lo, hi, lo if first is None else first, sum(part.sizes[lo:hi]))


def _result(item: WorkItem, last: int) -> SegmentResult:
    seg = item.segment
    assert seg is not None
    return SegmentResult(
        item.partition, seg.name, seg.base_offset, seg.log or "", last_offset=last, log_dir="/d", names=seg.store.names
    )


def test_runs_are_consecutive_segments_of_one_partition() -> None:
    """Runs cut from the listing, each a reference to its partition (no segment made); a partition that
    could not be listed takes one index and no run."""
    a, b = _listed("a-0", (0, 60), (10, 60), (20, 10)), _listed("b-0", (0, 500))
    failed = Listed(Partition("/d/c-0", error="cannot list the directory", store=local()))
    runs = plan_runs([a, failed, b], 100)
    assert [list(range(r.first, r.last + 1)) for r in runs] == [[0], [1, 2], [4]]  # never across partitions
    assert [(r.part, r.lo, r.hi, r.bytes) for r in runs] == [(a, 0, 1, 60), (a, 1, 3, 70), (b, 0, 1, 500)]


def test_overlap_is_checked_across_bins_whichever_finishes_first(tmp_path: Path) -> None:
    """a-0's second run is in bin 0 and its first in bin 1: bin 0 finishes first, waits (no part file)
    until bin 1 gives the last offset before it, then both are written; the overlap is found."""
    items = [_item("a-0", 0, 10), _item("a-0", 5, 10), _item("a-0", 50, 10)]
    part = _listed("a-0", (0, 10), (5, 10), (50, 10))
    bins = [[_run(part, 1, 3)], [_run(part, 0, 1)]]
    state = _Bins(bins, destination(str(tmp_path)), keep_all=True)
    state.finished(0, [(1, _result(items[1], 40)), (2, _result(items[2], 60))])
    assert state.parts == []  # waits for bin 1: a row must not be written before its overlap check
    state.finished(1, [(0, _result(items[0], 9))])
    assert len(state.parts) == 2
    kinds = {res.segment: [p.kind for p in res.problems] for _, res in state.shown}
    assert kinds == {f"{0:020d}": [], f"{5:020d}": ["segment-overlap"], f"{50:020d}": []}
    assert state.total.with_problems == 1 and state.total.clean == 2


def test_a_failed_bin_leaves_no_overlap_check_and_settles_the_next(tmp_path: Path) -> None:
    items = [_item("a-0", 0, 10), _item("a-0", 5, 10)]
    part = _listed("a-0", (0, 10), (5, 10))
    state = _Bins([[_run(part, 1, 2)], [_run(part, 0, 1)]], None, keep_all=False)
    state.finished(0, [(1, _result(items[1], 40))])
    failed = _result(items[0], 9)
    failed.failed = "not verified: Spark gave up this bin"
    state.finished(1, [(0, failed)])
    assert state.total.failed == 1 and state.total.clean == 1 and [r.status for _, r in state.shown] == ["failed"]


def test_a_segment_after_a_resumed_one_is_checked_against_it_not_the_run_before() -> None:
    """``--resume`` skipped …020 (the report gives its last offset): …030 is compared with it, whether it
    shares a run with …010 (which it follows in the work list) or not, never with …010 (last offset 35)."""
    items = [_item("a-0", 0, 10), _item("a-0", 10, 10), _item("a-0", 30, 10)]
    part = _listed("a-0", (0, 10), (10, 10), (30, 10))
    lasts = (9, 35, 39)

    def kinds_of_030(bins: list, resumed_last: int) -> list[str]:
        before = {("/d", "a-0", f"{30:020d}"): _result(_item("a-0", 20, 10), resumed_last)}
        state = _Bins(bins, None, keep_all=True, before=before)
        for number, runs in enumerate(bins):
            state.finished(number, [(i, _result(items[i], lasts[i])) for r in runs for i in range(r.first, r.last + 1)])
        return {res.segment: [p.kind for p in res.problems] for _, res in state.shown}[f"{30:020d}"]

    for bins in ([[_run(part, 0, 3)]], [[_run(part, 0, 2)], [_run(part, 2, 3)]]):
        assert kinds_of_030(bins, 29) == []  # 30 > 29
        assert kinds_of_030(bins, 30) == ["segment-overlap"]  # 30 <= 30, the resumed one's last offset


pyspark = pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")


@pytest.fixture(scope="module")
def log_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("partial") / "data"
    for i, src in enumerate(["plain-v2-0", "txn-v2-0", "large-v2-0", "idempotent-v2-0", "v1-gzip-0", "follower-v2-0"]):
        shutil.copytree(CORPUS_DATA / src, root / f"t-{i}")
    overlapping_partition(root).rename(root / "t-6")  # …200 overlaps …000 before it and …251 after it
    return root


def test_a_task_that_keeps_dying_fails_only_its_segment(log_root: Path, tmp_path: Path) -> None:
    """The Python worker dies (os._exit, as an out-of-memory kill ends it) on t-3's middle segment: its bin
    (t-3's three segments, one run) fails, is run again one segment a job, and only that segment is a failed
    row naming the cause, exit 2; every other segment's row, its bin-mates' too, is the local run's."""
    local, spark = tmp_path / "local.jsonl", tmp_path / "spark"
    assert run_cli(["verify-index", "--report", str(local), str(log_root)]).exit_code == 1
    r = run_on_spark(  # the dying worker's variable in its environment only (tests/spark/shared.py)
        ["verify-index", "--spark", "--master", "local[2]", "--report", str(spark), str(log_root)],
        worker_env={KILL_WORKER_ENV: f"t-3/{67:020d}"},
    )
    assert r.exit_code == 2, r.errtext[-3000:]
    from tests.cli.test_verify import _report_rows

    got = {(row["partition"], row["segment"]): row for row in _report_rows(spark) if row["type"] == "segment"}
    want = {(row["partition"], row["segment"]): row for row in _report_rows(local) if row["type"] == "segment"}
    assert got.keys() == want.keys()
    failed = {key for key, row in got.items() if row["status"] == "failed"}
    assert failed == {("t-3", f"{67:020d}")}  # its bin-mates t-3/…000 and t-3/…152 have their verdicts
    assert all("Spark gave up this segment's task" in got[k]["error"] for k in failed), got
    assert all("Python worker exited" in got[key]["error"] for key in failed), got
    for key in got.keys() - failed:
        assert got[key] == want[key]
    assert "failed" in r.text and "Traceback" not in r.errtext
    assert (spark / "_SUCCESS").exists()  # the report is complete: every segment has its row
    assert sorted(_report_rows(spark), key=sort_key)  # rows parse


def test_resume_after_a_partial_verdict_reads_only_the_failed_segments(log_root: Path, tmp_path: Path, s3) -> None:
    """A partial verdict (t-6's …200 poisoned) written to the S3 server as Parquet, then ``--resume`` of it
    on --spark: only the failed segment and the one after it are verified again (…251's overlap with …200
    belongs on its row), …200 is checked against the report's last offset of …000; the report is the full
    local run's, overlaps included."""
    from tests.cli.test_verify import _report_rows

    local, again = tmp_path / "local.jsonl", tmp_path / "again.parquet"
    spark = s3.uri("partial/spark.parquet")
    assert run_cli(["verify-index", "--report", str(local), str(log_root)]).exit_code == 1
    argv = ["verify-index", "--spark", "--master", "local[2]", "--format", "json", str(log_root)]
    first = run_on_spark([*argv, "--report", spark], worker_env={KILL_WORKER_ENV: f"t-6/{200:020d}"})
    assert first.exit_code == 2, first.errtext[-3000:]
    failed = [json.loads(line) for line in first.text.splitlines()[:-1]]
    failed = [row for row in failed if row["type"] == "segment" and row["status"] == "failed"]
    assert [(row["partition"], row["segment"]) for row in failed] == [("t-6", f"{200:020d}")]
    # the resumed run without the dying worker: the process's shared session as it was
    again_run = run_on_spark([*argv, "--verbose", "--resume", spark, "--report", str(again)])
    assert again_run.exit_code == 1, again_run.errtext[-3000:]
    *shown, summary = [json.loads(line) for line in again_run.text.splitlines()]
    read = {(row["partition"], row["segment"]) for row in shown if row["type"] == "segment"}
    assert read == {("t-6", f"{200:020d}"), ("t-6", f"{251:020d}")}
    want = sorted(_report_rows(local), key=sort_key)
    kinds = {(r["segment"], r["kind"]) for r in want if r["type"] == "problem" and r["partition"] == "t-6"}
    assert kinds >= {(f"{200:020d}", "segment-overlap"), (f"{251:020d}", "segment-overlap")}
    assert summary["segments"] == sum(1 for row in want if row["type"] == "segment")
    assert summary["resumed"] == summary["segments"] - len(read)
    import pyarrow.parquet as pq

    got = [{k: v for k, v in row.items() if v is not None} for row in pq.read_table(again).to_pylist()]
    assert sorted(got, key=sort_key) == [{k: v for k, v in row.items() if v is not None} for row in want]
