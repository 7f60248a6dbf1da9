"""``kseg.ops.lookup.time``: a spread of timestamps in every corpus partition, against
Kafka's ListOffsets rule applied by brute force to every record (``lookup_oracle``)."""

from __future__ import annotations

import bisect
import shutil

import pytest

from kseg.errors import KsegError
from kseg.ops.lookup.offset import PartitionLog
from kseg.ops.lookup.time import (
    EARLIEST_TIMESTAMP,
    FROM_BATCHES,
    FROM_TIME_INDEX,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    NOT_FOUND,
    lookup_time,
)
from tests.conftest import CORPUS_DATA
from tests.ops.lookup.lookup_oracle import LIMIT, read_partition
from tests.stores import local

CASES = sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir())
DAMAGED_TIME_INDEX = "corrupt-timeindex-0"  # Kafka's answer follows the damaged index: tested on its own


@pytest.mark.parametrize("name", [c for c in CASES if c != DAMAGED_TIME_INDEX])
def test_a_spread_of_timestamps_agrees_with_kafkas_rule_by_brute_force(name: str) -> None:
    part = read_partition(CORPUS_DATA / name)
    targets = part.timestamps()
    with PartitionLog(str(CORPUS_DATA / name), LIMIT, store=local()) as log:
        for target in targets:
            expected = part.by_time(target)
            if expected == "error":
                with pytest.raises(KsegError):
                    lookup_time(log, target)
                continue
            r = lookup_time(log, target)
            if expected is None:
                assert r.offset is None and r.status == NOT_FOUND, target
            else:
                batch, offset, ts = expected
                assert (r.offset, r.timestamp) == (offset, ts), target
                assert (r.chosen.segment.base_offset, r.batch.position) == (batch.segment, batch.position)
                assert r.record[0] == offset and r.record[1] == ts


@pytest.mark.parametrize("name", CASES)
def test_earliest_latest_and_max_timestamp(name: str) -> None:
    part = read_partition(CORPUS_DATA / name)
    with PartitionLog(str(CORPUS_DATA / name), LIMIT, store=local()) as log:
        r = lookup_time(log, EARLIEST_TIMESTAMP)
        assert r.offset == part.log_start and r.timestamp == -1
        first = part.by_offset(part.log_start) if part.log_start < part.log_end else None
        assert (r.record[0] if r.record else None) == (first[1] if first else None)
        r = lookup_time(log, LATEST_TIMESTAMP)
        assert (r.offset, r.timestamp, r.record) == (part.log_end, -1, None)
        r = lookup_time(log, MAX_TIMESTAMP)
        largest = max((b.max_timestamp for b in part.batches), default=-1)
        holders = [(o, ts) for b, o, ts in part.records() if ts == largest and b.max_timestamp == largest]
        if largest < 0 or not holders or name.startswith("v0-"):
            assert r.offset is None
        else:
            assert (r.offset, r.timestamp) == holders[0]


def test_nonmonotonic_gives_kafkas_answer_not_a_binary_search() -> None:
    """Out-of-order CreateTime: batches 0-11 (max ...5244), 12-23 (max ...1244), 24-35
    (...9244), 48-59 (...2244), 84-95 (...0744), 156-167 (...0245).  Kafka answers the
    first record in offset order with a timestamp >= target; a binary search over the
    record timestamps, assuming them sorted, lands elsewhere."""
    part = read_partition(CORPUS_DATA / "nonmonotonic-v2-0")
    records = [(o, ts) for _, o, ts in part.records()]
    timestamps = [ts for _, ts in records]
    assert timestamps != sorted(timestamps)
    differ = 0
    with PartitionLog(str(CORPUS_DATA / "nonmonotonic-v2-0"), LIMIT, store=local()) as log:
        for target in part.timestamps():
            r = lookup_time(log, target)
            first = next(((o, ts) for o, ts in records if ts >= target), None)
            assert (None if r.offset is None else (r.offset, r.timestamp)) == first
            i = bisect.bisect_left(timestamps, target)
            differ += (records[i] if i < len(records) else None) != first
        r = lookup_time(log, 1730000002000)
        assert (r.offset, r.timestamp, r.time_slot, r.index.position) == (0, 1730000004800, -1, 0)
        r = lookup_time(log, 1730000020000)  # entry (1730000012244, 71) -> position 21522, batch 60-71
        assert r.time_entry == (1730000012244, 71) and r.index.position == 21522
        assert (r.offset, r.timestamp, r.batch.base_offset) == (99, 1730000020022, 96)
    assert differ > 10


def test_a_damaged_time_index_gives_kafkas_answer_with_a_note() -> None:
    """Entries #1 and #2 swapped (107 <-> 119 ms): for 110 ms Kafka's binary search
    lands on (1730000000107, 379), so the scan starts at batch 370-379 and passes over
    the records of 340-369 that are >= 110 ms; kseg gives that answer and says why."""
    part = read_partition(CORPUS_DATA / DAMAGED_TIME_INDEX)
    target = 1730000000110
    with PartitionLog(str(CORPUS_DATA / DAMAGED_TIME_INDEX), LIMIT, store=local()) as log:
        r = lookup_time(log, target)
        assert r.time_slot == 2 and r.time_entry == (1730000000107, 379)
        assert r.batch.base_offset == 370 and (r.offset, r.timestamp) == (375, 1730000000111)
        assert part.by_time(target)[1] < 370  # the true first record is earlier
        assert any("timestamps out of order" in n for n in r.notes)


def test_largest_timestamp_from_batches_without_a_time_index(tmp_path) -> None:
    d = tmp_path / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", d)
    (d / "00000000000000000000.timeindex").unlink()
    with PartitionLog(str(d), LIMIT, store=local()) as log:
        r = lookup_time(log, 1730000000050)
        assert r.chosen.source == FROM_BATCHES and r.chosen.segment.base_offset == 0
        assert r.chosen.timestamp == 1730000000093 and r.offset is not None
        r = lookup_time(log, 1730000000100)
        assert r.skipped[0].source == FROM_BATCHES and r.chosen.source == FROM_TIME_INDEX


def test_a_preallocated_time_index_is_not_trusted(tmp_path) -> None:
    """prealloc-index-0's .timeindex: 19 entries used, the rest zero and no final entry:
    the segment's largest timestamp comes from its batches."""
    part = read_partition(CORPUS_DATA / "prealloc-index-0")
    with PartitionLog(str(CORPUS_DATA / "prealloc-index-0"), LIMIT, store=local()) as log:
        r = lookup_time(log, 0)
        assert r.chosen.source == FROM_BATCHES and r.chosen.timestamp == part.largest(0)
        assert any("preallocated" in n for n in log.notes)
