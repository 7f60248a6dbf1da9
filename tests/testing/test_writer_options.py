"""The writer's knobs for unusual batches: overrides, delete horizon, empty batches, gaps."""

from __future__ import annotations

import struct

import pytest
from kafka.record import MemoryRecords

from kseg.errors import KsegError
from kseg.testing.writer import (
    RecordSpec,
    build_empty_v2_batch,
    build_v2_batch,
    java_hashmap_order,
    varint,
)

from ._kparse import parse_v2

RECS = [RecordSpec(b"a", b"1", 1000), RecordSpec(b"b", b"2", 990), RecordSpec(None, b"3", 1005)]


def _kp(data):
    return MemoryRecords(data).next_batch()


def test_header_fields_follow_memory_records_builder():
    data = build_v2_batch(
        RECS,
        base_offset=50,
        producer_id=7,
        producer_epoch=2,
        base_sequence=11,
        partition_leader_epoch=4,
        transactional=True,
    )
    b = parse_v2(data)
    assert (b.base_offset, b.leader_epoch, b.attributes, b.last_offset_delta) == (50, 4, 0x10, 2)
    assert (b.base_timestamp, b.max_timestamp) == (1000, 1005)  # first record's, and the max
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.count) == (7, 2, 11, 3)
    assert [r.timestamp_delta for r in b.records] == [0, -10, 5]  # zig-zag negative delta
    assert struct.unpack_from(">i", data, 8)[0] == len(data) - 12
    assert _kp(data).validate_crc()


def test_log_append_time_sets_max_timestamp_and_keeps_deltas():
    data = build_v2_batch(RECS, timestamp_type="LogAppendTime", log_append_time=5000)
    b = parse_v2(data)
    assert b.attributes & 0x08 and b.max_timestamp == 5000 and b.base_timestamp == 1000
    assert [r.timestamp for r in _kp(data)] == [5000, 5000, 5000]
    with pytest.raises(KsegError):
        build_v2_batch(RECS, timestamp_type="LogAppendTime")


def test_delete_horizon_is_the_base_timestamp():
    data = build_v2_batch(RECS, delete_horizon_ms=900)
    b = parse_v2(data)
    assert b.attributes & 0x40 and b.base_timestamp == 900
    assert [r.timestamp_delta for r in b.records] == [100, 90, 105]
    assert [r.timestamp for r in _kp(data)] == [1000, 990, 1005]


def test_overrides_make_lying_batches():
    data = build_v2_batch(RECS, records_count=99, crc=0xDEADBEEF, last_offset_delta=40)
    b = parse_v2(data[:57] + struct.pack(">i", 3) + data[61:])  # parse with the true count
    assert struct.unpack_from(">i", data, 57)[0] == 99
    assert b.crc == 0xDEADBEEF and b.last_offset_delta == 40
    assert not _kp(data).validate_crc()
    honest = build_v2_batch(RECS, records_count=99)
    assert _kp(honest).validate_crc()  # the CRC covers the lie


def test_offset_gaps_and_kept_last_offset_like_the_cleaner():
    recs = [RecordSpec(b"k", b"v", 10, (), 0), RecordSpec(b"k", b"w", 11, (), 7)]
    data = build_v2_batch(recs, base_offset=100, last_offset_delta=9)
    batch = _kp(data)
    assert [r.offset for r in batch] == [100, 107]
    assert batch.last_offset == 109


def test_empty_batch_like_write_empty_header():
    data = build_empty_v2_batch(
        base_offset=20, last_offset=29, timestamp=1234, producer_id=5, producer_epoch=1, base_sequence=3
    )
    assert len(data) == 61
    b = parse_v2(data)
    assert (b.count, b.last_offset_delta, b.base_timestamp, b.max_timestamp) == (0, 9, 1234, 1234)
    assert _kp(data).validate_crc()


def test_header_keys_utf8_or_raw_bytes():
    b = parse_v2(build_v2_batch([RecordSpec(None, None, 1, (("ünï", b"x"), (b"\xff\xfe", None)))]))
    assert b.records[0].headers == [("ünï".encode(), b"x"), (b"\xff\xfe", None)]


@pytest.mark.parametrize(
    "n, encoded",
    [
        (0, "00"),
        (-1, "01"),
        (1, "02"),
        (63, "7e"),
        (-64, "7f"),
        (64, "8001"),
        (8191, "fe7f"),
        (-(2**63), "ffffffffffffffffff01"),
        (2**31 - 1, "feffffff0f"),
    ],
)
def test_zigzag_varints(n, encoded):
    assert varint(n).hex() == encoded


def test_java_hashmap_iteration_order():
    assert java_hashmap_order([1000, 1001]) == [1000, 1001]
    assert java_hashmap_order([1, 16]) == [16, 1]  # bucket 0 before bucket 1
    assert java_hashmap_order([17, 1]) == [17, 1]  # same bucket: insertion order
    assert java_hashmap_order(list(range(13))) == list(range(13))  # resized to 32 buckets
