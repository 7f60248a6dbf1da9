"""The fold's fast road (:mod:`kseg.ops.tiered.fast`, ``kseg.decoders.remote_view``) against the general one
(``read_record`` and ``Fold.apply``, the reference): on varied partitions -- every record kind, accepted and
refused events, damaged values, tagged fields, batches of one record, of many, compressed, a control batch --
the two folds hold the same, field by field, whatever the fold remembers."""

from __future__ import annotations

from pathlib import Path

import pytest

from kseg.decoders.remote import read_record
from kseg.decoders.remote_view import view
from kseg.ops.tiered.read import MetadataRead, read_metadata
from kseg.ops.tiered.state import Fold
from kseg.storage.records import DEFAULT_WINDOW
from kseg.testing import remote_metadata as rm
from kseg.testing.bombs import write_metadata_churn
from kseg.testing.segment import write_segment
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.ops.tiered.varied import TOPICS, varied_values


def _write(directory: Path, values: list[bytes | None], per_batch: int, codec: str) -> None:
    batches, offset = [], 0
    for i in range(0, len(values), per_batch):
        chunk = values[i : i + per_batch]
        specs = [RecordSpec(None, v, 1_780_000_000_000 + offset + j) for j, v in enumerate(chunk)]
        batches.append(build_v2_batch(specs, base_offset=offset, codec=codec))
        offset += len(chunk)
        if i == 0:  # a transaction marker: no metadata, skipped by both roads
            marker = RecordSpec(b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00", 0)
            batches.append(build_v2_batch([marker], base_offset=offset, control=True, transactional=True))
            offset += 1
    write_segment(directory, [batches])


def _held(fold: Fold) -> dict:
    """All the fold holds, in comparable values."""
    return {
        "records": fold.records,
        "notes": fold.all_notes(),
        "problems": fold.problems + fold.undecodable_tail(),
        "partitions": {
            key: (
                tp.name,
                tp.topic_id,
                tp.metadata_partition,
                tp.delete_state,
                tp.all_problems(),
                tp.deleted,
                tp.deleted_count,
                [repr(s) for s in tp.live()],
                sorted(tp.segments) == sorted(s.segment_id for s in tp.by_raw.values()),
            )
            for key, tp in fold.partitions.items()
        },
    }


def _both(directory: Path, remember: frozenset | None) -> tuple[MetadataRead, MetadataRead]:
    """The general fold and the fast one; asserts that the fast one read some records on the fast road."""
    general = read_metadata([str(directory)], read_record, remember=remember)
    read = _Counted()
    fast = read_metadata([str(directory)], read, remember=remember, view=view)
    assert read.calls < general.fold.records, "some records take the fast road"
    return general, fast


class _Counted:
    """``read_record``, counting its calls: the records of the general road."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, value: bytes | None) -> tuple[str, dict]:
        self.calls += 1
        return read_record(value)


@pytest.mark.parametrize(
    "seed,per_batch,codec",
    [(1, 1, "none"), (2, 7, "none"), (3, 100, "none"), (4, 50, "gzip"), (5, 1000, "zstd"), (6, 3, "lz4")],
)
def test_the_fast_road_folds_as_the_general_one(tmp_path, seed: int, per_batch: int, codec: str) -> None:
    values = varied_values(seed)
    directory = tmp_path / "__remote_log_metadata-0"
    _write(directory, values, per_batch, codec)
    for remember in (None, frozenset()):
        general, fast = _both(directory, remember)
        assert _held(fast.fold) == _held(general.fold)
        assert [r.complete for r in fast.reads] == [r.complete for r in general.reads]
    held = _held(general.fold)
    assert held["records"] > 300 and held["problems"] and len(held["partitions"]) >= 4  # varied indeed
    assert any(p for tp in held["partitions"].values() for p in tp[4])


def test_a_corrupt_batch_stops_both_roads_at_the_same_record(tmp_path) -> None:
    values = varied_values(7, segments=40)
    specs = [RecordSpec(None, v, 1_780_000_000_000) for v in values]
    half = len(specs) // 2
    batches = [
        build_v2_batch(specs[:half], base_offset=0),
        build_v2_batch(specs[half:], base_offset=half, records_count=len(specs) - half + 1),  # one record short
    ]
    directory = tmp_path / "__remote_log_metadata-0"
    write_segment(directory, [batches])
    general, fast = _both(directory, None)
    assert not general.reads[0].complete and general.fold.records > half
    assert _held(fast.fold) == _held(general.fold)
    assert [r.describe() for r in fast.reads] == [r.describe() for r in general.reads]


def test_a_churned_partition_takes_the_fast_road_but_for_its_first_record(tmp_path) -> None:
    directory = write_metadata_churn(tmp_path / "__remote_log_metadata-0", 500, records_per_batch=64)
    read = _Counted()
    fast = read_metadata([str(directory)], read, view=view)
    assert read.calls == 1 and fast.fold.records == 2000
    general = read_metadata([str(directory)], read_record)
    assert _held(fast.fold) == _held(general.fold)
    (tp,) = fast.fold.partitions.values()
    assert tp.deleted_count == 500 and not tp.segments


def test_a_batch_larger_than_the_window_is_read_in_place(tmp_path) -> None:
    """A batch over the reader's window (8 MiB) is not copied: its records are read from the reader's own bytes."""
    values = varied_values(8, segments=60)
    pad = [rm.segment_metadata(rm.SegmentId(*TOPICS[1], f"{i:022d}"), i, i, custom=bytes(120)) for i in range(40000)]
    specs = [RecordSpec(None, v, 1_780_000_000_000) for v in values[:200] + pad + values[200:]]
    directory = tmp_path / "__remote_log_metadata-0"
    write_segment(directory, [[build_v2_batch(specs)]])
    assert next(directory.glob("*.log")).stat().st_size > DEFAULT_WINDOW
    general, fast = _both(directory, frozenset())
    assert _held(fast.fold) == _held(general.fold)
