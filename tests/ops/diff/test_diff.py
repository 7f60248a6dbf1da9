"""``kseg.ops.diff.diff.compare``: the offset walk on batch boundaries that differ, gaps, realignment."""

from __future__ import annotations

from pathlib import Path

from kseg.ops.diff.diff import DIVERGENT, compare
from kseg.storage.partition import scan_partition
from kseg.testing.writer import RecordSpec, build_v2_batch, write_partition
from tests.stores import local

T = 1_700_000_000_000


def _batch(first: int, n: int, value: bytes = b"v") -> list[bytes]:
    return [build_v2_batch([RecordSpec(b"k", value, T + first + i) for i in range(n)], base_offset=first)]


def _replica(tmp_path: Path, name: str, appends) -> object:
    write_partition(tmp_path / name / "t-0", appends)
    return scan_partition(str(tmp_path / name / "t-0"), store=local())


def _ranges(rep) -> list[tuple]:
    return [(r.first_offset, r.last_offset, r.records, r.batches) for r in rep.only_here]


def test_other_batch_boundaries_diverge_then_realign(tmp_path: Path) -> None:
    a = _replica(tmp_path, "a", [_batch(0, 10), _batch(10, 10), _batch(20, 10)])
    b = _replica(tmp_path, "b", [_batch(0, 10), _batch(10, 5), _batch(15, 5), _batch(20, 10)])
    res = compare([a, b])
    assert res.status == DIVERGENT and res.first_divergent_offset == 10
    assert "lastOffset" in res.differences and "count" in res.differences
    assert _ranges(res.replicas[0]) == [(10, 19, 10, 1)]
    assert _ranges(res.replicas[1]) == [(10, 19, 10, 2)]
    assert [r.log_end for r in res.replicas] == [30, 30] and [r.lag for r in res.replicas] == [0, 0]


def test_a_gap_is_a_difference(tmp_path: Path) -> None:
    a = _replica(tmp_path, "a", [_batch(0, 10), _batch(10, 10), _batch(20, 10)])
    b = _replica(tmp_path, "b", [_batch(0, 10), _batch(20, 10)])
    res = compare([a, b])
    assert res.first_divergent_offset == 10
    # b has no batch starting at 10: its next batch (20..29) is what it has there
    assert res.replicas[1].at_divergence.base_offset == 20 and res.differences == ["baseOffset", "lastOffset", "crc"]
    assert _ranges(res.replicas[0]) == [(10, 19, 10, 1)] and _ranges(res.replicas[1]) == []
    assert res.leader is None  # same leader epoch everywhere: no election, no truncation to show


def test_three_replicas_two_agreeing(tmp_path: Path) -> None:
    same = [_batch(0, 10), _batch(10, 10, b"x")]
    a, b = _replica(tmp_path, "a", same), _replica(tmp_path, "b", same)
    c = _replica(tmp_path, "c", [_batch(0, 10), _batch(10, 10, b"y")])
    res = compare([a, b, c])
    assert res.first_divergent_offset == 10 and res.differences == ["crc"]
    assert _ranges(res.replicas[0]) == _ranges(res.replicas[1]) == []  # a and b share 10..19
    assert _ranges(res.replicas[2]) == [(10, 19, 10, 1)]
