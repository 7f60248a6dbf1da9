"""``kseg.ops.export.export``'s planning: units from a listing alone, splits found by the tasks (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kseg.ops.export.export import Corruption, Ranges, SegmentUnit, plan, read_split, unit_splits, units
from kseg.storage.partition import Partition, Segment, scan_partition
from kseg.testing.bombs import TIMESTAMP
from kseg.testing.segment import write_segment
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.stores import local

BATCHES = 200


def _partition(tmp_path: Path) -> Partition:
    """One partition of two segments of 200 batches (~100 bytes each), an index entry per batch."""
    directory = tmp_path / "orders-0"
    for base in (0, BATCHES):
        batches = [
            [build_v2_batch([RecordSpec(b"k", b"v" * 20, TIMESTAMP + o)], base_offset=o)]
            for o in range(base, base + BATCHES)
        ]
        write_segment(directory, batches, base_offset=base, index_interval_bytes=1)
    return scan_partition(str(directory), store=local())


def _offsets(splits) -> list[int]:
    out = []
    for split in splits:
        for item in read_split(split):
            assert not isinstance(item, Corruption)
            out.append(item.offset)
    return out


def test_units_are_planned_from_names_and_sizes_alone() -> None:
    """The driver's part opens nothing: files that do not exist still plan (their listed sizes)."""
    part = Partition("/nowhere/orders-0", store=local())
    part.segments = [
        Segment(b, f"/nowhere/orders-0/{b:020d}.log", log_bytes=1000, store=local()) for b in (0, 100, 200)
    ]
    got = list(units([part], Ranges(from_offset=150, to_offset=180), split_bytes=400))
    # 0 ends below 150; 200 is named past 180, but a v0/v1 wrapper opening it may hold offsets below its
    # name: it is one unit, whose task reads its first batch only (kseg.storage.ranges)
    assert [(u.base_offset, u.band, u.bands) for u in got] == [(100, 0, 3), (100, 1, 3), (100, 2, 3), (200, 0, 1)]
    assert list(units([part], Ranges(to_offset=99), split_bytes=400))[-1].base_offset == 100  # 200: past by name


@pytest.mark.parametrize("split_bytes", [150, 1000, 4096, 1 << 20])
@pytest.mark.parametrize(
    "ranges",
    [Ranges(), Ranges(from_offset=57), Ranges(from_offset=250, to_offset=330), Ranges(from_time=TIMESTAMP + 310)],
    ids=["all", "fromOffset", "offsets", "fromTime"],
)
def test_bands_cover_each_record_once(tmp_path: Path, split_bytes: int, ranges: Ranges) -> None:
    """Every task cuts its own band; together they read what one whole read does, each record once."""
    part = _partition(tmp_path)
    planned = list(units([part], ranges, split_bytes))
    splits = [s for u in planned for s in unit_splits(u, ranges, split_bytes)]
    want = [
        o
        for o in range(2 * BATCHES)
        if ranges.from_offset <= o <= ranges.to_offset and TIMESTAMP + o >= ranges.from_time
    ]
    got = sorted(o for o in _offsets(splits) if ranges.from_offset <= o <= ranges.to_offset)
    got = [o for o in got if TIMESTAMP + o >= ranges.from_time]
    assert got == want
    assert splits == plan([part], ranges, split_bytes)  # the local export plans the same splits
    if split_bytes == 150 and ranges == Ranges():
        assert len(splits) > 20  # small bands really cut the segments
        assert all(b.start == a.end for a, b in zip(splits, splits[1:], strict=False) if a.segment == b.segment)


def test_a_band_without_a_cut_is_read_by_the_previous_one(tmp_path: Path) -> None:
    """Without an offset index no band after the first has a cut: the first reads the whole segment."""
    part = _partition(tmp_path)
    for seg in part.segments:
        seg.index = None
    planned = list(units([part], Ranges(), 500))
    per_band = [unit_splits(u, Ranges(), 500) for u in planned]
    assert [len(s) for s in per_band if s] == [1, 1]  # one split per segment, from band 0
    assert all(u.band == 0 for u, s in zip(planned, per_band, strict=True) if s)
    assert _offsets(s for group in per_band for s in group) == list(range(2 * BATCHES))


def test_a_unit_is_plain_data() -> None:
    """A unit is strings and integers and the store its segment was listed from (made in a task from its
    share, which carries that store: no unit asks discovery again)."""
    store = local()
    unit = SegmentUnit("/d", "t-0", 0, "/d/t-0/0.log", None, None, 10, 0, 1, store)
    assert tuple(unit)[:9] == ("/d", "t-0", 0, "/d/t-0/0.log", None, None, 10, 0, 1) and unit.bytes == 10
    assert unit.store is store
