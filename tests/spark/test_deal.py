"""kseg.spark.deal: the data source's tasks dealt as shares of the listing are the units it packed before
(export's rule: tests/spark/test_export_job.py); no JVM needed."""

from __future__ import annotations

from kseg.ops.export.export import units
from kseg.spark.deal import deal_in_order, packing
from tests.spark.test_export_job import RANGES, SPLIT, _listing


def test_the_data_source_tasks_are_its_packed_units_whatever_the_cuts() -> None:
    """Each task's share of the listing gives back exactly the units the packing rule groups into it --
    tasks of at most ``splitBytes`` and ``most`` units, consecutive, across partitions -- in order."""
    from kseg.spark.datasource import pack_units

    for seed in range(40):
        listing = _listing(seed)
        for target, most in ((SPLIT, 256), (3 * SPLIT, 4), (10 * SPLIT, 1), (1, 256)):
            want = pack_units(units(listing, RANGES, SPLIT), target, most)
            dealt = deal_in_order(listing, RANGES, SPLIT, packing(target, most))
            assert [list(d.units(RANGES, SPLIT)) for d in dealt] == want, (seed, target, most)
            assert [d.bytes for d in dealt] == [sum(u.bytes for u in group) for group in want]
