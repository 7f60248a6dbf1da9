"""kseg.spark.job's planning: how many tasks, from the data (no JVM needed)."""

from __future__ import annotations

import pytest

from kseg.spark.job import DEFAULT_BYTES_PER_TASK, bin_count, bytes_per_task


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


def _fleet_bins(partitions: int) -> tuple[object, list[str]]:
    """The driver's bookkeeping (:class:`kseg.spark.job._Bins`) fed ``partitions`` one-segment partitions
    without a ``leader-epoch-checkpoint`` (a note each), every seventh with a problem too, dealt into 8 bins
    that finish in reverse order; and the notes' lines the local run gives (added in discovery order)."""
    from kseg.render.verify import note_groups
    from kseg.spark.job import _Bins, plan_bins
    from tests.spark.test_partial import _item, _result

    todo = list(enumerate(_item(f"t-{n}", 0, 100 + n) for n in range(partitions)))
    bins = plan_bins([[indexed] for indexed in todo], 8, size=lambda run: run[0][1].segment.log_size())
    results = {}
    local = note_groups()
    for index, item in todo:
        res = results[index] = _result(item, 9)
        res.notes.append(f"/d/{item.partition}/leader-epoch-checkpoint: absent: the batches' leader epochs not checked")
        if index % 7 == 3:
            res.problem("crc", res.path, "batch CRC does not match its contents", position=0)
            res.notes.append(f"/d/{item.partition}/00000000000000000000.index: {index} entries past the log's end")
        for note in res.notes:
            local.add(note)
    state = _Bins(bins, None, keep_all=False)
    for number in reversed(range(len(bins))):
        state.finished(number, [(index, results[index]) for run in bins[number] for index, _ in run])
    return state, local.lines()


def test_the_driver_holds_the_problems_and_grouped_notes_not_each_clean_segment() -> None:
    """At 10^5 partitions each partition's first segment carries the absent-checkpoint note: the driver folds
    it into the grouped notes as bins finish, whatever their order, and holds whole only the results it
    prints -- what it holds does not grow with the clean segments."""
    small, small_lines = _fleet_bins(70)
    large, large_lines = _fleet_bins(700)
    for state, lines, partitions in ((small, small_lines, 70), (large, large_lines, 700)):
        assert state.notes.lines() == lines  # the local run's grouping, though bins finished out of order
        assert state.total.segments == partitions and len(state.shown) == state.total.with_problems
        assert not state.done and not state.last  # every bin settled, nothing kept for a later run
    assert large.held() - len(large.shown) == small.held() - len(small.shown) == 2 * (1 + 3)
    assert "700 files: absent" in large_lines[0] and "and 697 more" in large_lines[0]
