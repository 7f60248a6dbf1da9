"""Round trips: random batches of every magic, codec and field combination, written by
``kseg.testing`` (a separate byte-exact writer), read back by the reader and by ``kseg dump``."""

from __future__ import annotations

import json
import string
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.decoders.jvm import java_utf8
from kseg.storage.records import FileRecords
from kseg.testing.writer import RecordSpec, build_control_batch, build_legacy, build_v2_batch
from tests.conftest import run_cli
from tests.stores import local

BASE_TS = 1_730_000_000_000
blobs = st.one_of(st.none(), st.binary(max_size=40), st.text(string.printable, max_size=30).map(str.encode))
header_keys = st.text(max_size=8)


@st.composite
def records(draw, *, headers: bool):
    n = draw(st.integers(min_value=1, max_value=6))
    out = []
    for _ in range(n):
        hdrs = ()
        if headers:
            hdrs = tuple(
                draw(st.lists(st.tuples(header_keys, st.one_of(st.none(), st.binary(max_size=8))), max_size=3))
            )
        ts = BASE_TS + draw(st.integers(min_value=0, max_value=10_000))
        out.append(RecordSpec(draw(blobs), draw(blobs), ts, hdrs))
    return out


@st.composite
def batch_specs(draw):
    magic = draw(st.sampled_from([0, 1, 2, 2, 2]))
    codecs = ["none", "gzip", "snappy", "lz4"] + (["zstd"] if magic == 2 else [])
    codec = draw(st.sampled_from(codecs))
    ts_type = draw(st.sampled_from(["CreateTime", "LogAppendTime"])) if magic else "CreateTime"
    spec = {"magic": magic, "codec": codec, "ts_type": ts_type, "records": draw(records(headers=magic == 2))}
    if magic == 2:
        spec["control"] = draw(st.sampled_from([None, None, None, "COMMIT", "ABORT"]))
        spec["producer"] = draw(st.sampled_from([(-1, -1, -1), (1000, 3, 0), (42, 0, 2**31 - 3)]))
        spec["transactional"] = spec["producer"][0] >= 0 and draw(st.booleans())
        spec["horizon"] = draw(st.sampled_from([None, None, BASE_TS - 5]))
        spec["epoch"] = draw(st.integers(min_value=0, max_value=5))
    return spec


def _write(specs, path: Path) -> list[dict]:
    """Write the batches; return what each should read back as."""
    expected = []
    offset = 0
    out = bytearray()
    for spec in specs:
        magic, recs = spec["magic"], spec["records"]
        lat = BASE_TS + 99_999 if spec["ts_type"] == "LogAppendTime" else None
        if magic == 2 and spec["control"]:
            pid, epoch, _ = spec["producer"] if spec["producer"][0] >= 0 else (7, 1, 0)
            data = build_control_batch(
                spec["control"],
                base_offset=offset,
                producer_id=pid,
                producer_epoch=epoch,
                coordinator_epoch=9,
                timestamp=BASE_TS,
            )
            expected.append({"magic": 2, "control": True, "offsets": [offset], "marker": spec["control"]})
            offset += 1
        elif magic == 2:
            pid, pepoch, seq = spec["producer"]
            data = build_v2_batch(
                recs,
                base_offset=offset,
                codec=spec["codec"],
                timestamp_type=spec["ts_type"],
                log_append_time=lat,
                producer_id=pid,
                producer_epoch=pepoch,
                base_sequence=seq,
                transactional=spec["transactional"],
                delete_horizon_ms=spec["horizon"],
                partition_leader_epoch=spec["epoch"],
            )
            expected.append(
                {
                    "magic": 2,
                    "control": False,
                    "recs": recs,
                    "base": offset,
                    "lat": lat,
                    "seq": seq,
                    "horizon": spec["horizon"],
                }
            )
            offset += len(recs)
        else:
            data = build_legacy(
                recs,
                magic=magic,
                base_offset=offset,
                codec=spec["codec"],
                timestamp_type=spec["ts_type"],
                log_append_time=lat,
            )
            expected.append(
                {
                    "magic": magic,
                    "control": False,
                    "recs": recs,
                    "base": offset,
                    "lat": lat,
                    "legacy_wrapper": spec["codec"] != "none",
                }
            )
            offset += len(recs)
        out += data
    path.write_bytes(bytes(out))
    return expected


def _flatten(expected):
    for exp in expected:
        if exp["control"]:
            continue
        for i, r in enumerate(exp["recs"]):
            if exp["magic"] == 0:
                ts = -1
            elif exp["lat"] is not None:
                ts = exp["lat"]
            else:
                ts = r.timestamp
            yield exp, exp["base"] + i, ts, r


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(batch_specs(), min_size=1, max_size=6))
def test_reader_reads_back_what_was_written(tmp_path: Path, specs) -> None:
    log = tmp_path / "00000000000000000000.log"
    expected = _write(specs, log)
    got = []
    with FileRecords(str(log), store=local()) as records_file:
        for batch in records_file.batches():
            assert batch.is_valid()
            for rec in batch.records(1 << 24):
                if batch.magic >= 2:
                    offset, ts, seq, key, value, headers = rec
                    got.append(
                        (
                            offset,
                            ts,
                            None if key is None else bytes(key),
                            None if value is None else bytes(value),
                            tuple((k.decode(), v) for k, v in headers),
                            batch.is_control,
                        )
                    )
                else:
                    offset, ts, key, value, _, valid = rec
                    assert valid
                    got.append(
                        (
                            offset,
                            ts,
                            None if key is None else bytes(key),
                            None if value is None else bytes(value),
                            (),
                            False,
                        )
                    )
        assert records_file.size == log.stat().st_size
    want = [(o, ts, r.key, r.value, tuple(r.headers), False) for _, o, ts, r in _flatten(expected)]
    assert [g for g in got if not g[5]] == want
    assert sum(1 for g in got if g[5]) == sum(1 for e in expected if e["control"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(batch_specs(), min_size=1, max_size=5))
def test_dump_json_reads_back_what_was_written(tmp_path: Path, specs) -> None:
    log = tmp_path / "00000000000000000000.log"
    expected = _write(specs, log)
    result = run_cli(["dump", "--format", "json", "--print-data-log", "--files", str(log)])
    assert result.exit_code == 0, result.errtext
    objs = [json.loads(line) for line in result.text.split("\n") if line]  # JSON Lines: split on \n only
    batches = [o for o in objs if o["type"] == "batch"]
    assert all(b["isValid"] for b in batches)
    assert len(batches) == sum(1 if e["magic"] == 2 or e.get("legacy_wrapper") else len(e["recs"]) for e in expected)
    v2_batches = [b for b in batches if b["magic"] == 2 and not b["isControl"]]
    v2_expected = [e for e in expected if e["magic"] == 2 and not e["control"]]
    for b, e in zip(v2_batches, v2_expected, strict=True):
        assert (b["baseOffset"], b["count"], b["baseSequence"]) == (e["base"], len(e["recs"]), e["seq"])
        assert b["deleteHorizonMs"] == e["horizon"]
        assert b["timestampType"] == ("LogAppendTime" if e["lat"] is not None else "CreateTime")
    recs = [o for o in objs if o["type"] == "record" and "control" not in o]
    want = list(_flatten(expected))
    assert len(recs) == len(want)
    for obj, (exp, offset, ts, r) in zip(recs, want, strict=True):
        assert obj["offset"] == offset and obj["timestamp"] == ts
        assert obj["keySize"] == (-1 if r.key is None else len(r.key))
        assert obj["valueSize"] == (-1 if r.value is None else len(r.value))
        assert obj.get("key") == (None if r.key is None else java_utf8(r.key))
        assert obj.get("payload") == (None if r.value is None else java_utf8(r.value))
        if exp["magic"] == 2:
            assert obj["headerKeys"] == [k for k, _ in r.headers]
    markers = [o["control"] for o in objs if o["type"] == "record" and "control" in o]
    assert markers == [f"endTxnMarker: {e['marker']} coordinatorEpoch: 9" for e in expected if e["control"]]
