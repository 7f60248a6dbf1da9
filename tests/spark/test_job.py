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
