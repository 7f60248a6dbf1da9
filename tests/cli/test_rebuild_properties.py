"""Property: whatever appends built a partition (several batches per append, as followers
and old producers did, any index interval), ``kseg rebuild-index --force`` leaves indexes
that ``kseg verify-index --strict`` (Kafka's own rule) finds clean."""

from __future__ import annotations

import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.testing.writer import RecordSpec, build_v2_batch, write_partition
from tests.conftest import assert_no_traceback, run_cli

BASE_TS = 1_730_000_000_000


@st.composite
def appends(draw):
    out, offset = [], 0
    for _ in range(draw(st.integers(1, 15))):
        append = []
        for _ in range(draw(st.integers(1, 4))):
            n = draw(st.integers(1, 10))
            ts = draw(st.lists(st.integers(0, 10_000), min_size=n, max_size=n))
            records = [RecordSpec(b"k", b"v" * draw(st.integers(0, 900)), BASE_TS + t) for t in ts]
            append.append(build_v2_batch(records, base_offset=offset, codec=draw(st.sampled_from(["none", "gzip"]))))
            offset += n
        out.append(append)
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(appends(), st.integers(0, 6000), st.integers(3000, 30000))
def test_rebuild_then_strict_verify_is_clean(batches, interval, segment_bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        write_partition(d, batches, per_batch_index=False, index_interval_bytes=interval, segment_bytes=segment_bytes)
        r = run_cli(["rebuild-index", "--force", "--index-interval-bytes", str(interval), d])
        assert_no_traceback(r)
        assert r.exit_code == 0, r.text
        r = run_cli(["verify-index", "--strict", "--quiet", d])
        assert r.exit_code == 0, r.text + r.errtext
        r = run_cli(["rebuild-index", "--check", "--index-interval-bytes", str(interval), d])
        assert r.exit_code == 0, r.text
