"""kseg.spark.bins: how many tasks, from the data; runs and bins planned from the compact listing, each task's
share of it (no JVM needed)."""

from __future__ import annotations

import pytest

from kseg.spark.bins import DEFAULT_BYTES_PER_TASK, bin_count, bytes_per_task
from tests.stores import local


def test_bins_are_sized_from_the_data() -> None:
    """One task per bytesPerTask of data, at least four per core present, never more than the items."""
    gib = 1 << 30
    assert bin_count(100_000 * gib, 200_000, 2, gib) == 100_000  # a fleet, two executors registered so far
    assert bin_count(10 * gib, 200_000, 50, gib) == 200  # small data: four per core
    assert bin_count(10 * gib, 3, 50, gib) == 3
    assert bin_count(0, 1, 1, gib) == 1


class _Context:
    """What bytes_per_task reads of a SparkContext: its configuration (a real SparkConf, no JVM)."""

    def __init__(self, **conf: str) -> None:
        from pyspark import SparkConf

        self.conf = SparkConf(loadDefaults=False).setAll(list(conf.items()))

    def getConf(self):  # noqa: N802 - SparkContext's name
        return self.conf


def test_bytes_per_task_option() -> None:
    pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")
    assert bytes_per_task(_Context()) == DEFAULT_BYTES_PER_TASK
    assert bytes_per_task(_Context(**{"spark.kseg.bytesPerTask": "268435456"})) == 256 << 20
    for bad in ("0", "-5", "1g"):
        with pytest.raises(ValueError, match="spark.kseg.bytesPerTask takes a positive number of bytes"):
            bytes_per_task(_Context(**{"spark.kseg.bytesPerTask": bad}))


def _fleet_listing(partitions: int, segments: int) -> list:
    """A compact listing of ``partitions`` partitions of ``segments`` 1 KB segments (names only, no file);
    the second partition's first segments left out (as ``--resume`` leaves them) and the third unlistable."""
    from kseg.storage.listing import Listed
    from kseg.storage.partition import Partition, Segment

    listing = []
    for n in range(partitions):
        path = f"/d/t-{n}"
        segs = [
            Segment(k * 100, f"{path}/{k * 100:020d}.log", f"{path}/{k * 100:020d}.index", store=local())
            for k in range(segments)
        ]
        for seg in segs:
            seg.log_bytes = 1000 + n
        error = "cannot list the directory: Permission denied" if n == 2 else None
        part = Partition(path, [] if error else segs, error=error, head_left_out=n == 1, store=local())
        listing.append(Listed(part))
    return listing


def _structure_bytes(bins: list) -> int:
    """What :func:`kseg.spark.bins.plan`'s bins hold of their own (the listing they refer to not counted)."""
    import sys

    runs = [run for b in bins for run in b]
    return sum(map(sys.getsizeof, bins)) + sum(sys.getsizeof(r) + sum(map(sys.getsizeof, r[1:])) for r in runs)


def test_the_plan_holds_a_run_a_partition_not_a_segment() -> None:
    """The driver plans from the compact listing: its bins hold a :class:`~kseg.spark.bins.Run` (a reference
    to the listed partition and four numbers) a run, and -- the partitions smaller than a bin's share -- a
    run a partition, however many segments it has: 40 partitions of 5 or of 200 segments plan to the same
    structure size, and the traced memory held by the plan and the driver's bookkeeping does not grow
    with the segments (it held a ``Segment`` and a work item per segment, ≈ 870 B each)."""
    import gc
    import tracemalloc

    from kseg.spark.bins import plan
    from kseg.spark.job import _Bins

    held = {}
    for segments in (5, 200):
        listing = _fleet_listing(40, segments)
        gc.collect()
        tracemalloc.start()
        bins = plan(listing, 2, DEFAULT_BYTES_PER_TASK)
        state = _Bins(bins, None, keep_all=False)
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        runs = [run for b in bins for run in b]
        assert len(bins) == 8 and len(runs) == 39  # a run a listed partition (the unlistable one: none)
        assert all(any(run.part is part for part in listing) for run in runs)  # references, not copies
        assert not state.needs[0] and not state.bin_of  # no partition split: nothing kept across bins
        held[segments] = (_structure_bytes(bins), traced)
    assert held[200][0] == held[5][0]
    assert held[200][1] < 1.2 * held[5][1] + 4096, held  # 40 x more segments: 0.2 MB more with a Segment each


def test_each_task_makes_the_work_items_the_driver_made() -> None:
    """Whatever the runs' cuts (a bin's share a twentieth of the bytes: partitions split across bins), the
    tasks' shares give every segment's work item once, at its index, as :func:`work_items` of the whole
    listing gives it: the leader-epoch note's ``first`` only on a partition's first segment, never on a
    cut's first, nor where ``--resume`` left the head out; an unlistable partition takes its index."""
    from kseg.ops.verify.run import work_items
    from kseg.spark.bins import indexed, plan

    listing = _fleet_listing(6, 13)
    want = [(i, item) for i, item in enumerate(work_items(listing)) if item.segment is not None]
    for per_task in (1, 3000, 20_000, DEFAULT_BYTES_PER_TASK):
        bins = plan(listing, 2, per_task)
        runs = [run for b in bins for run in b]
        got = sorted((ii for run in runs for ii in indexed([run.share()])), key=lambda ii: ii[0])
        assert got == want, per_task
        assert [i for i, item in got if item.first] == [
            0,
            27,
            40,
            53,
        ]  # t-0, t-3, t-4, t-5 (t-1: head left out; t-2: 26)
    assert len(plan(listing, 2, 20_000)) > len(listing)  # the partitions were cut into runs across bins
