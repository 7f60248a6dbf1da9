"""Property: whatever the writer builds, kafka-python's reader decodes to the same records.

Every magic (0, 1, 2) and every codec that magic allows, both timestamp
types, random keys/values/headers and (v2) compacted offset gaps.  The
expected values follow Kafka's rules: v2 LogAppendTime records report the
batch's append time; v1 compressed wrappers with LogAppendTime override
inner timestamps; v0 has no timestamps (kafka-python returns ``None``).

kafka-python limitation: for magic-0 LZ4 it must fix Kafka's broken frame
header checksum, which it does only with the optional ``xxhash`` module.
Without it, kafka-python raises (asserted), and the case is checked by
fixing that byte, decoding the frame with ``lz4.frame`` and reading the
inner message set with kafka-python.
"""

from __future__ import annotations

import importlib.util

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from kafka.record import MemoryRecords

from kseg.testing.writer import RecordSpec, build_legacy, build_v2_batch, lz4_frame_header

HAS_XXHASH = importlib.util.find_spec("xxhash") is not None
TS = st.integers(min_value=0, max_value=2**42)
BLOB = st.one_of(st.none(), st.binary(max_size=64))
HEADERS = st.lists(st.tuples(st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=16))), max_size=3)


@st.composite
def cases(draw):
    magic = draw(st.sampled_from([0, 1, 2]))
    codecs = ["none", "gzip", "snappy", "lz4"] + (["zstd"] if magic == 2 else [])
    codec = draw(st.sampled_from(codecs))
    ts_type = draw(st.sampled_from(["CreateTime", "LogAppendTime"]))
    n = draw(st.integers(min_value=1, max_value=12))
    deltas = list(range(n))
    if magic == 2 and draw(st.booleans()):  # a compacted batch: offset gaps
        deltas = sorted(draw(st.sets(st.integers(min_value=0, max_value=500), min_size=n, max_size=n)))
    records = [
        RecordSpec(
            draw(BLOB),
            draw(BLOB),
            draw(TS),
            tuple(draw(HEADERS)) if magic == 2 else (),
            deltas[i] if magic == 2 else None,
        )
        for i in range(n)
    ]
    base_offset = draw(st.integers(min_value=0, max_value=2**40))
    lat = draw(TS)
    return magic, codec, ts_type, records, base_offset, lat


def _build(magic, codec, ts_type, records, base_offset, lat):
    if magic == 2:
        return build_v2_batch(
            records,
            base_offset=base_offset,
            codec=codec,
            timestamp_type=ts_type,
            log_append_time=lat if ts_type == "LogAppendTime" else None,
        )
    return build_legacy(
        records,
        magic=magic,
        base_offset=base_offset,
        codec=codec,
        timestamp_type=ts_type,
        log_append_time=lat if ts_type == "LogAppendTime" else None,
    )


def _expected_timestamp(magic, ts_type, rec, lat):
    if magic == 0:
        return None
    return lat if ts_type == "LogAppendTime" else rec.timestamp


def _decode(data, magic, codec):
    """All records kafka-python reads from ``data``, with CRC checks."""
    if magic == 0 and codec == "lz4" and not HAS_XXHASH:
        import lz4.frame

        try:
            list(MemoryRecords(data).next_batch())
        except RuntimeError as exc:  # the documented limitation, nothing else
            assert "xxhash" in str(exc)
        # Fix the header-checksum byte (what kafka-python does with xxhash), decode the
        # frame, and let kafka-python read the inner v0 message set (absolute offsets).
        value = data[12 + 4 + 1 + 1 + 4 + 4 :]
        assert value[:7] == lz4_frame_header(0)
        inner = lz4.frame.decompress(lz4_frame_header(2) + value[7:])
        from kafka.record.legacy_records import LegacyRecordBatch

        wrapper = LegacyRecordBatch(data, 0)  # header only: offset, CRC
        assert wrapper.validate_crc()
        return [wrapper], _decode(inner, 0, "none")[1]
    mr = MemoryRecords(data)
    batches, records = [], []
    while mr.has_next():
        batch = mr.next_batch()
        if magic == 2:
            assert batch.validate_crc()
        batches.append(batch)
        for rec in batch:
            assert rec.validate_crc() if magic < 2 else True
            records.append(rec)
    return batches, records


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
@example((0, "lz4", "CreateTime", [RecordSpec(b"k", b"v" * 100, 5), RecordSpec(None, None, 6)], 7, 0))
@example((1, "lz4", "LogAppendTime", [RecordSpec(b"k", b"v", 5), RecordSpec(None, b"", 9)], 0, 42))
@example((2, "zstd", "LogAppendTime", [RecordSpec(b"k", b"v", 5, (("h", None),), 3)], 1, 42))
def test_kafka_python_reads_what_we_write(case):
    magic, codec, ts_type, specs, base_offset, lat = case
    data = _build(magic, codec, ts_type, specs, base_offset, lat)
    batches, got = _decode(data, magic, codec)
    assert len(got) == len(specs)
    for i, (rec, spec) in enumerate(zip(got, specs, strict=True)):
        delta = spec.offset_delta if spec.offset_delta is not None else i
        assert rec.offset == base_offset + delta
        assert rec.key == spec.key
        assert rec.value == spec.value
        assert rec.timestamp == _expected_timestamp(magic, ts_type, spec, lat)
        if magic == 2:
            assert list(rec.headers) == list(spec.headers)
    if magic == 2:
        (batch,) = batches
        assert batch.compression_type == ["none", "gzip", "snappy", "lz4", "zstd"].index(codec)
        assert batch.last_offset == base_offset + specs[-1].offset_delta
    elif codec != "none":
        assert len(batches) == 1 and batches[0].base_offset == base_offset + len(specs) - 1


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from(["COMMIT", "ABORT"]),
    st.integers(0, 2**40),
    st.integers(0, 2**31 - 1),
    st.integers(0, 2**15 - 1),
    st.integers(-1, 2**31 - 1),
    TS,
)
def test_kafka_python_reads_control_markers(kind, base, pid, epoch, coord, ts):
    from kseg.testing.writer import build_control_batch

    data = build_control_batch(
        kind, base_offset=base, producer_id=pid, producer_epoch=epoch, coordinator_epoch=coord, timestamp=ts
    )
    batch = MemoryRecords(data).next_batch()
    assert batch.validate_crc()
    assert batch.is_control_batch and batch.is_transactional
    (rec,) = list(batch)
    assert rec.offset == base and rec.timestamp == ts
    assert (rec.abort, rec.commit) == (kind == "ABORT", kind == "COMMIT")
