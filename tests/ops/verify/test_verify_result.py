"""``SegmentResult``: problems past ``KEPT_PER_KIND`` of a kind are counted, not kept (issue 19)."""

from __future__ import annotations

from kseg.ops.verify.report import result_rows
from kseg.ops.verify.result import KEPT_PER_KIND, SegmentResult
from kseg.storage.location import LocalNames


def test_problems_past_the_bound_are_counted_per_kind_and_file():
    res = SegmentResult("t-0", "00000000000000000000", 0, "/x/t-0/00000000000000000000.log", names=LocalNames())
    for i in range(KEPT_PER_KIND + 7):
        res.problem("index-order", "a.index", "offsets do not strictly increase", entry=i)
    for i in range(3):
        res.problem("index-order", "b.index", "offsets do not strictly increase", entry=i)
        res.problem("index-position", "a.index", "position outside the log's batches", entry=i)
    assert len(res.problems) == KEPT_PER_KIND + 6
    assert [p.entry for p in res.problems if p.file == "a.index" and p.kind == "index-order"] == list(
        range(KEPT_PER_KIND)
    )
    assert res.omitted == {("index-order", "a.index"): 7}
    assert res.problem_count == KEPT_PER_KIND + 7 + 6
    assert res.status == "problems"
    assert res.omitted_notes() == [
        f"a.index: 7 more index-order problems not listed (the first {KEPT_PER_KIND} of each kind are)"
    ]
    segment, *problems = result_rows(res)
    assert segment["problems"] == res.problem_count
    assert segment["notes"][-1] == res.omitted_notes()[0]
    assert len(problems) == len(res.problems)
