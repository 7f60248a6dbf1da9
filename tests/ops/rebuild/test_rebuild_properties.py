"""Property tests: random segments from the test writer (``kseg.testing``), random index
interval.  The writer applies ``LogSegment.append``'s per-batch rule on its own; recovery
must reproduce its files byte for byte, and lookups must agree with brute force."""

from __future__ import annotations

import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.ops.lookup.offset import PartitionLog, lookup_offset
from kseg.ops.lookup.time import lookup_time
from kseg.ops.rebuild.rebuild import recover_partition, resolve
from kseg.ops.rebuild.write import rebuilt_files
from kseg.testing.writer import (
    RecordSpec,
    build_control_batch,
    build_legacy,
    build_v2_batch,
    write_partition,
)
from tests.ops.lookup.lookup_oracle import LIMIT, read_partition
from tests.stores import local

BASE_TS = 1_730_000_000_000
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


@st.composite
def batch_spec(draw):
    """(record count, value size, codec, timestamp offsets, LogAppendTime or not)."""
    n = draw(st.integers(1, 30))
    return (
        n,
        draw(st.integers(0, 600)),
        draw(st.sampled_from(CODECS)),
        draw(st.lists(st.integers(-5_000, 20_000), min_size=n, max_size=n)),
        draw(st.booleans()),
    )


def build(specs, magic: int) -> list[bytes]:
    out, offset = [], 0
    for n, size, codec, ts, log_append in specs:
        records = [
            RecordSpec(b"k%d" % (offset + i) if i % 3 else None, bytes([65 + i % 26]) * size, BASE_TS + ts[i])
            for i in range(n)
        ]
        if magic == 2:
            lat = {}
            if log_append:
                lat = {"timestamp_type": "LogAppendTime", "log_append_time": BASE_TS + 30_000 + offset}
            out.append(build_v2_batch(records, base_offset=offset, codec=codec, **lat))
        else:
            codec = "none" if codec == "zstd" else codec
            if codec == "none":  # an uncompressed legacy append is one entry per record: keep one
                records = records[:1]
                n = 1
            out.append(build_legacy(records, magic=magic, base_offset=offset, codec=codec))
        offset += n
    return out


def rebuild(directory, interval: int) -> dict:
    (target,) = resolve([directory], [])
    return {rec.segment.name: rec for rec in recover_partition(target, index_interval_bytes=interval)}


def same_files(directory, recs) -> None:
    for name, rec in recs.items():
        assert rec.truncated == 0 and rec.failure is None
        for kind, data in rebuilt_files(rec).items():
            path = os.path.join(directory, name + kind)
            assert data == (open(path, "rb").read() if os.path.exists(path) else None), (name, kind)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(batch_spec(), min_size=1, max_size=25),
    st.integers(0, 9000),
    st.sampled_from([2, 2, 1, 0]),
    st.integers(2000, 40000),
)
def test_rebuild_equals_the_writers_per_batch_indexes(specs, interval, magic, segment_bytes) -> None:
    batches = build(specs, magic)
    with tempfile.TemporaryDirectory() as d:
        write_partition(d, [[b] for b in batches], index_interval_bytes=interval, segment_bytes=segment_bytes)
        same_files(d, rebuild(d, interval))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(batch_spec(), min_size=1, max_size=12), st.integers(0, 5000), st.integers(2000, 20000))
def test_lookups_agree_with_brute_force_on_random_partitions(specs, interval, segment_bytes) -> None:
    batches = build(specs, 2)
    with tempfile.TemporaryDirectory() as d:
        write_partition(d, [[b] for b in batches], index_interval_bytes=interval, segment_bytes=segment_bytes)
        part = read_partition(d)
        with PartitionLog(d, LIMIT, store=local()) as log:
            for target in range(part.log_start, part.log_end):
                batch, offset = part.by_offset(target)
                r = lookup_offset(log, target)
                assert (r.record[0], r.batch.position, r.segment.base_offset) == (offset, batch.position, batch.segment)
            for target in part.timestamps(sample=50):
                expected = part.by_time(target)
                r = lookup_time(log, target)
                assert (None if expected is None else expected[1:]) == (
                    None if r.offset is None else (r.offset, r.timestamp)
                ), target


@st.composite
def txn_appends(draw):
    """Interleaved transactional producers 1-3 (random data batches, COMMIT/ABORT markers) and
    plain data, as one batch per append."""
    appends, offset, open_ = [], 0, set()
    for _ in range(draw(st.integers(1, 40))):
        pid = draw(st.sampled_from([None, 1, 2, 3]))
        if pid is not None and pid in open_ and draw(st.booleans()):
            kind = draw(st.sampled_from(["COMMIT", "ABORT"]))
            appends.append(
                [
                    build_control_batch(
                        kind,
                        base_offset=offset,
                        producer_id=pid,
                        producer_epoch=0,
                        coordinator_epoch=5,
                        timestamp=BASE_TS + offset,
                    )
                ]
            )
            open_.discard(pid)
            offset += 1
            continue
        n = draw(st.integers(1, 8))
        records = [RecordSpec(b"k", b"x" * draw(st.integers(0, 300)), BASE_TS + offset + i) for i in range(n)]
        if pid is None:
            appends.append([build_v2_batch(records, base_offset=offset)])
        else:
            appends.append(
                [
                    build_v2_batch(
                        records,
                        base_offset=offset,
                        producer_id=pid,
                        producer_epoch=0,
                        base_sequence=0,
                        transactional=True,
                    )
                ]
            )
            open_.add(pid)
        offset += n
    return appends


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(txn_appends(), st.integers(300, 4000))
def test_txn_indexes_across_segments_equal_the_writers(appends, segment_bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        write_partition(d, appends, segment_bytes=segment_bytes)
        same_files(d, rebuild(d, 4096))
