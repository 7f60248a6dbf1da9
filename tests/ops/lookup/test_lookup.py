"""``kseg.ops.lookup.offset``: every offset of every corpus partition, against a brute-force scan."""

from __future__ import annotations

import shutil

import pytest

from kseg.errors import KsegError
from kseg.format.indexes import OffsetIndexView
from kseg.ops.lookup.offset import (
    AT_END,
    BELOW_START,
    FOUND,
    NEXT,
    PAST_END,
    PartitionLog,
    lookup_offset,
)
from kseg.storage import files
from kseg.storage.stores.discover import store_of
from tests.conftest import CORPUS_DATA
from tests.ops.lookup.lookup_oracle import LIMIT, read_partition
from tests.stores import local

CASES = sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", CASES)
def test_every_offset_agrees_with_a_scan_of_every_record(name: str) -> None:
    part = read_partition(CORPUS_DATA / name)
    with PartitionLog(str(CORPUS_DATA / name), LIMIT, store=local()) as log:
        start, end = part.log_start, part.log_end
        assert (log.log_start, log.log_end()) == (start, end)
        for target in range(start - 2, end + 3):
            expected = part.by_offset(target) if start <= target < end else None
            if expected == "error":
                with pytest.raises(KsegError):
                    lookup_offset(log, target)
                continue
            r = lookup_offset(log, target)
            if target < start:
                assert r.status == BELOW_START and r.record is None
            elif target >= end:
                assert r.status == (AT_END if target == end else PAST_END) and r.record is None
            else:
                batch, offset = expected
                assert r.record[0] == offset, target
                assert (r.segment.base_offset, r.batch.position) == (batch.segment, batch.position), target
                assert r.status == (FOUND if offset == target else NEXT)


@pytest.mark.parametrize("name", CASES)
def test_the_index_entry_is_the_largest_at_or_below_the_target(name: str) -> None:
    """Step 2 by brute force over the index entries (those before a preallocated tail)."""
    with PartitionLog(str(CORPUS_DATA / name), LIMIT, store=local()) as log:
        for seg in log.segments:
            if seg.index is None:
                continue
            data = files.read_small_file(seg.index, store=store_of(seg.index))
            view = OffsetIndexView(data[: OffsetIndexView(data, 0).used_entries() * 8], seg.base_offset)
            entries = [view.entry(n) for n in range(view.entries)]
            last = max([o for o, _ in entries], default=seg.base_offset)
            for target in range(seg.base_offset, last + 2):
                below = [(n, e) for n, e in enumerate(entries) if e[0] <= target]
                step = log.index_step(seg, target)
                if below:
                    assert (step.slot, (step.offset, step.position)) == max(below, key=lambda x: x[1][0])
                else:
                    assert (step.slot, step.offset, step.position) == (-1, seg.base_offset, 0)


def test_kafka_documentation_example() -> None:
    """Segments 0 and 251; offset 268 is read from segment 251 (relative offset 17).  Its
    .index has no entry <= 268 (the first is 299), so the scan starts at position 0 and
    passes batch 251-259 to reach batch 260-279."""
    with PartitionLog(str(CORPUS_DATA / "plain-v2-0"), LIMIT, store=local()) as log:
        r = lookup_offset(log, 268)
        (step,) = r.steps
        assert step.segment.base_offset == 251 and r.target - step.segment.base_offset == 17
        assert (step.index.slot, step.index.offset, step.index.position) == (-1, 251, 0)
        assert (step.scan.start, step.scan.batches, step.scan.found_position, step.scan.bytes) == (0, 2, 1060, 3351)
        assert (r.batch.base_offset, r.batch.last_offset, r.record[0], r.status) == (260, 279, 268, FOUND)


def _batch(base: int, deltas, ts: int = 1000) -> bytes:
    from kseg.testing.writer import RecordSpec, build_v2_batch

    return build_v2_batch(
        [RecordSpec(b"k%d" % d, b"v%d" % d, ts + d, offset_delta=d) for d in deltas], base_offset=base
    )


def test_compacted_offsets_give_the_next_record(tmp_path) -> None:
    """A compacted partition: records gone inside a batch, whole batches gone, and the
    tail of segment 0 gone -- then Kafka's read moves on to ``higherSegment``."""
    from kseg.testing.writer import write_partition

    appends = [[_batch(0, [0, 2, 4])], [_batch(5, range(5))], [_batch(20, range(5))], [_batch(30, [1, 3])]]
    write_partition(tmp_path / "p-0", appends, roll_before=[3])
    with PartitionLog(str(tmp_path / "p-0"), LIMIT, store=local()) as log:
        assert [s.base_offset for s in log.segments] == [0, 30]
        r = lookup_offset(log, 1)
        assert (r.status, r.record[0], r.batch.base_offset) == (NEXT, 2, 0)
        r = lookup_offset(log, 12)
        assert (r.status, r.record[0], r.batch.base_offset, len(r.steps)) == (NEXT, 20, 20, 1)
        r = lookup_offset(log, 27)  # past segment 0's last batch (20-24): the next segment
        assert (r.status, r.record[0], [s.segment.base_offset for s in r.steps]) == (NEXT, 31, [0, 30])
        assert r.steps[0].outcome.startswith("no batch") and r.steps[1].index.position == 0
        assert lookup_offset(log, 33).record[0] == 33 and lookup_offset(log, 34).status == AT_END


def test_a_missing_or_insane_index_is_noted_and_the_scan_starts_at_zero(tmp_path) -> None:
    d = tmp_path / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", d)
    (d / "00000000000000000000.index").unlink()
    (d / "00000000000000000251.index").write_bytes(b"\0\0\0\0\0\0\0\0\0")  # not a multiple of 8
    with PartitionLog(str(d), LIMIT, store=local()) as log:
        for target in (110, 300):  # in the segments at 0 and 251
            r = lookup_offset(log, target)
            assert r.record[0] == target and r.steps[0].index.path is None and r.steps[0].scan.start == 0
        assert any("00000000000000000000.index: missing" in n for n in log.notes)
        assert any("not a multiple of 8" in n for n in log.notes)


def test_an_index_pointing_past_its_offset_is_warned_about(tmp_path) -> None:
    """Entry #1 of segment 0 moved to batch 112-... (position 11705): Kafka's read of
    offset 104 would start there and answer a later record; kseg says so."""
    d = tmp_path / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", d)
    index = d / "00000000000000000000.index"
    data = bytearray(index.read_bytes())
    data[12:16] = (11705).to_bytes(4, "big")
    index.write_bytes(bytes(data))
    with PartitionLog(str(d), LIMIT, store=local()) as log:
        r = lookup_offset(log, 105)
        assert r.record[0] == 112 and r.status == NEXT  # Kafka's answer from the damaged index
        assert any("points at a batch starting at offset 112" in n for n in r.notes)
