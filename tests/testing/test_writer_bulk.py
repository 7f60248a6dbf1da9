"""The fast bulk path writes the same bytes as the careful path (small sizes; no timing asserts)."""

from __future__ import annotations

import pytest
from kafka.record import MemoryRecords

from kseg.testing.writer import SegmentWriter, iter_batch_bytes, write_bulk_segment

from ._kparse import parse_v2
from ._reencode import reencode_v2


@pytest.mark.parametrize("codec", ["none", "gzip", "lz4", "zstd", "snappy"])
def test_bulk_segment_equals_segment_writer(tmp_path, codec):
    bulk_dir, ref_dir = tmp_path / "bulk", tmp_path / "ref"
    result = write_bulk_segment(
        bulk_dir,
        150_000,
        records_per_batch=40,
        value_size=90,
        codec=codec,
        base_offset=1000,
        partition_leader_epoch=3,
    )
    data = result.log_path.read_bytes()
    batches = list(iter_batch_bytes(data))
    assert len(data) == result.log_bytes >= 150_000
    assert len(data) - len(batches[-1]) < 150_000  # the smallest number of batches reaching it
    assert result.records == 40 * len(batches) == 40 * result.batches
    offset = 1000
    for raw in batches:
        b = parse_v2(raw)
        assert (b.base_offset, b.leader_epoch, b.count, b.codec) == (offset, 3, 40, codec)
        assert reencode_v2(raw) == raw  # header fields and CRC as build_v2_batch computes them
        offset += 40
    ref = SegmentWriter(ref_dir, 1000)
    for raw in batches:
        ref.append([raw])
    ref.close()
    for suffix in (".log", ".index", ".timeindex"):
        name = f"{1000:020d}{suffix}"
        assert (bulk_dir / name).read_bytes() == (ref_dir / name).read_bytes(), suffix
    assert result.index_entries == len(ref.offset_entries) > 0
    assert result.time_index_entries == len(ref.time_entries)


def test_bulk_segment_reads_with_kafka_python(tmp_path):
    result = write_bulk_segment(tmp_path, 64_000, records_per_batch=25, value_size=200, key_size=None)
    mr = MemoryRecords(result.log_path.read_bytes())
    offsets = []
    while mr.has_next():
        batch = mr.next_batch()
        assert batch.validate_crc()
        for rec in batch:
            assert rec.key is None and len(rec.value) == 200
            offsets.append(rec.offset)
    assert offsets == list(range(result.records))
