"""kseg.spark.job's driver bookkeeping as bins finish (no JVM needed)."""

from __future__ import annotations


def _fleet_bins(partitions: int) -> tuple[object, list[str]]:
    """The driver's bookkeeping (:class:`kseg.spark.job._Bins`) fed ``partitions`` one-segment partitions
    without a ``leader-epoch-checkpoint`` (a note each), every seventh with a problem too, dealt into 8 bins
    that finish in reverse order; and the notes' lines the local run gives (added in discovery order)."""
    from kseg.render.verify import note_groups
    from kseg.spark.bins import plan_bins
    from kseg.spark.job import _Bins
    from tests.spark.test_partial import _item, _listed, _result, _run

    todo = list(enumerate(_item(f"t-{n}", 0, 100 + n) for n in range(partitions)))
    bins = plan_bins([_run(_listed(f"t-{n}", (0, 100 + n)), 0, 1, n) for n in range(partitions)], 8)
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
        state.finished(number, [(run.first, results[run.first]) for run in bins[number]])
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


def test_the_clean_results_come_back_from_the_driver_disk_in_discovery_order() -> None:
    """Bins finishing in reverse order spool their clean results a chunk each; read back, they merge with the
    results held (problems) into discovery order: every segment once, what the local run prints."""
    state, _ = _fleet_bins(70)
    from kseg.spark.job import Outcome

    outcome = Outcome(state.total, sorted(state.shown, key=lambda ir: ir[0]), [], state.notes, state.clean)
    results = list(outcome.in_order())
    outcome.close()
    assert [res.partition for res in results] == [f"t-{n}" for n in range(70)]
    assert state.clean.count == state.total.clean == 70 - len(state.shown)
    assert [res.status for res in results if res.status != "clean"] == ["problems"] * len(state.shown)
