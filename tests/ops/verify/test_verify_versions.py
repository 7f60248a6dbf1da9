"""Property: a segment written by any Kafka version's leader (random appends, timestamps, codecs,
index intervals) verifies clean by default, and ``--strict`` reports exactly the index entries Kafka's
``--verify-index-only`` reports (the oracle in :mod:`tests.ops.verify.kafka_versions`)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.ops.verify.verify import verify_segment
from kseg.storage.partition import scan_partition
from kseg.testing.appendinfo import leader_append_info
from kseg.testing.segment import SegmentWriter
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.ops.verify.kafka_versions import kafka_verify_index_only
from tests.stores import local

TS = 1_730_000_000_000

appends = st.lists(
    st.tuples(
        st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=12),  # record timestamp offsets
        st.sampled_from(["none", "none", "gzip"]),
        st.integers(min_value=10, max_value=600),
    ),  # value size
    min_size=1,
    max_size=30,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(appends, st.sampled_from(["2.0", "2.8", "3.4", "3.6", "3.7", "3.9"]), st.sampled_from([0, 100, 1000, 4096]))
def test_any_versions_leader_segment_is_clean_and_strict_is_kafkas(tmp_path_factory, spec, kafka, interval) -> None:
    d: Path = tmp_path_factory.mktemp("leader")
    w = SegmentWriter(d, 0, per_batch_index=False, index_interval_bytes=interval)
    offset, clock = 0, TS
    for stamps, codec, size in spec:
        recs = [RecordSpec(b"k", b"v" * size, clock + t) for t in stamps]
        raw = build_v2_batch(recs, base_offset=offset, codec=codec)
        w.append([raw], leader_append_info([raw], kafka))
        offset += len(recs)
        clock += 20
    w.close()
    (seg,) = scan_partition(str(d), store=local()).segments
    res = verify_segment("p", seg)
    assert res.status == "clean", [p.line() for p in res.problems]
    strict = verify_segment("p", seg, strict=True)
    reported = {(Path(p.file).suffix, p.entry) for p in strict.problems}
    assert reported == kafka_verify_index_only(Path(seg.log))
