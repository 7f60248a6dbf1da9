"""kseg.spark.deal: the listing's units dealt to tasks as shares of the listing, not a unit object a segment,
by export's rule and by the data source's (no JVM needed)."""

from __future__ import annotations

import random

from kseg.ops.export.export import Ranges, units
from kseg.spark.deal import deal, deal_in_order, packing
from kseg.storage.listing import Listed
from kseg.storage.partition import Partition, Segment
from tests.stores import local


def _listing(seed: int) -> list[Listed]:
    """Partitions of 0 to 12 segments (some a ``.log`` short of their index, some several bands long)."""
    rng = random.Random(seed)
    out = []
    for n in range(rng.randrange(1, 40)):
        path = f"/d/t-{n}"
        segs = []
        for k in range(rng.randrange(0, 13)):
            base = 100 * k
            log = None if rng.random() < 0.1 else f"{path}/{base:020d}.log"
            segs.append(
                Segment(base, log, f"{path}/{base:020d}.index", log_bytes=rng.choice((70, 900, 5000)), store=local())
            )
        out.append(Listed(Partition(path, segs, store=local())))
    return out


def _packed(planned, target: int, most: int) -> list[list]:
    """The units ``planned`` (a flat list) grouped by the data source's rule (:func:`packing`) one after
    another: what its tasks' shares of the listing must give back."""
    groups: list[list] = []
    starts = packing(target, most)
    for unit in planned:
        if starts(unit.bytes) or not groups:
            groups.append([])
        groups[-1].append(unit)
    return groups


def _expanded(dealt, ranges: Ranges, split: int) -> list:
    """What the tasks make of their deals (export_bin's expansion)."""
    return [u for d in dealt for u in d.units(ranges, split)]


RANGES, SPLIT = Ranges(from_offset=250), 1000


def test_the_tasks_make_every_unit_once_in_order_whatever_the_cuts() -> None:
    """Whatever the number of tasks, the units the tasks make from their shares are the listing's units in
    order (pruned by the range, big segments in bands), each once; every task has at least one."""
    for seed in range(40):
        listing = _listing(seed)
        want = list(units(listing, RANGES, SPLIT))
        for tasks in (1, 2, 3, 7, 50, 10_000):
            dealt = deal(listing, RANGES, SPLIT, lambda total, count, tasks=tasks: min(tasks, count))
            assert _expanded(dealt, RANGES, SPLIT) == want, (seed, tasks)
            assert len(dealt) <= tasks and all(d.take > 0 for d in dealt)
            assert sum(d.bytes for d in dealt) == sum(u.bytes for u in want)


def test_tasks_are_about_equal_bytes_and_hold_no_unit_object() -> None:
    """1,000 one-segment partitions and one of 40 big segments in 8 tasks: each about an eighth of the bytes
    (never more than an eighth and one unit), its share of the listing references to the same partition
    objects (cut only where a partition is shared with the task before or after)."""
    small = [
        Listed(
            Partition(f"/d/s-{n}", [Segment(0, f"/d/s-{n}/{0:020d}.log", log_bytes=70, store=local())], store=local())
        )
        for n in range(1000)
    ]
    big_segs = [Segment(k << 20, f"/d/big-0/{k << 20:020d}.log", log_bytes=3 << 20, store=local()) for k in range(40)]
    listing = [*small[:500], Listed(Partition("/d/big-0", big_segs, store=local())), *small[500:]]
    dealt = deal(listing, Ranges(), 1 << 20, lambda total, count: 8)
    total = sum(d.bytes for d in dealt)
    assert len(dealt) == 8 and all(d.bytes <= total // 8 + (1 << 20) for d in dealt)
    assert _expanded(dealt, Ranges(), 1 << 20) == list(units(listing, Ranges(), 1 << 20))
    shared = [p for d in dealt for p in d.parts if p.path == "/d/big-0"]
    assert len(shared) == 8 and sum(len(p) for p in shared) <= 40 + 2 * 7  # a cut segment in two tasks at most
    untouched = {id(p) for p in small}
    assert sum(id(p) in untouched for d in dealt for p in d.parts) == 1000


def test_the_data_source_tasks_are_its_packed_units_whatever_the_cuts() -> None:
    """Each task's share of the listing gives back exactly the units the packing rule groups into it --
    tasks of at most ``splitBytes`` and ``most`` units, consecutive, across partitions -- in order."""
    for seed in range(40):
        listing = _listing(seed)
        for target, most in ((SPLIT, 256), (3 * SPLIT, 4), (10 * SPLIT, 1), (1, 256)):
            want = _packed(units(listing, RANGES, SPLIT), target, most)
            dealt = deal_in_order(listing, RANGES, SPLIT, packing(target, most))
            assert [list(d.units(RANGES, SPLIT)) for d in dealt] == want, (seed, target, most)
            assert [d.bytes for d in dealt] == [sum(u.bytes for u in group) for group in want]
