"""``kseg export``: the records of every corpus partition as Parquet, equal to what ``dump`` shows.

The rows are checked against ``kseg dump --format json --deep-iteration
--print-data-log`` (itself byte-identical to Kafka's tool on the goldens):
offsets, timestamps and their type, keys, values, header keys.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kseg.format.strings import string_decoder
from tests.conftest import CORPUS_DATA, assert_no_traceback, run_cli

pq = pytest.importorskip("pyarrow.parquet", reason="export writes Parquet with pyarrow (the test extra)")

HEALTHY = sorted(
    p.name for p in CORPUS_DATA.iterdir() if p.is_dir() and not p.name.startswith("corrupt-") and any(p.glob("*.log"))
)


def dump_records(partition: Path) -> list[tuple]:
    """(offset, timestamp, timestampType, keySize, valueSize, headerKeys, key, value) from dump's JSON."""
    out = []
    for log in sorted(partition.glob("*.log")):
        r = run_cli(["dump", "--format", "json", "--print-data-log", "--files", str(log)])
        for line in r.text.splitlines():
            obj = json.loads(line)
            if obj["type"] == "record":
                out.append(
                    (
                        obj["offset"],
                        obj["timestamp"],
                        obj["timestampType"],
                        obj["keySize"],
                        obj["valueSize"],
                        obj.get("headerKeys", []),
                        obj.get("key") if "control" not in obj else None,
                        obj.get("payload") if "control" not in obj else None,
                    )
                )
    return out


def export_records(table) -> list[tuple]:
    out = []
    for row in table.to_pylist():
        if row["corruption"] is not None:
            continue
        key, value = row["key"], row["value"]
        control = row["isControl"]
        out.append(
            (
                row["offset"],
                row["timestampMs"],
                row["timestampType"],
                -1 if key is None else len(key),
                -1 if value is None else len(value),
                [h["key"] for h in row["headers"]],
                None if key is None or control else string_decoder(key),
                None if value is None or control else string_decoder(value),
            )
        )
    return out


@pytest.mark.parametrize("name", HEALTHY)
def test_export_rows_equal_dump_records(name: str, tmp_path: Path) -> None:
    out = tmp_path / "x.parquet"
    r = run_cli(["export", "-q", str(CORPUS_DATA / name), "--output", str(out)])
    assert r.exit_code == 0, r.errtext
    table = pq.read_table(out)
    assert export_records(table) == dump_records(CORPUS_DATA / name)
    assert set(table.column("topic").to_pylist()) <= {name.rsplit("-", 1)[0]}
    assert f"{table.num_rows} records" in r.text


def test_timestamp_is_typed_and_the_milliseconds_kept(tmp_path: Path) -> None:
    """Schema version 2: ``timestamp`` a Parquet timestamp (ms, UTC), ``timestampMs`` Kafka's epoch ms
    beside it; no timestamp (-1, every v0 record) is a null ``timestamp``."""
    import pyarrow as pa

    out = tmp_path / "x.parquet"
    inputs = [str(CORPUS_DATA / "plain-v2-0"), str(CORPUS_DATA / "v0-gzip-0")]
    assert run_cli(["export", *inputs, "-o", str(out)]).exit_code == 0
    table = pq.read_table(out)
    assert table.schema.field("timestamp").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("timestampMs").type == pa.int64()
    assert table.schema.metadata[b"kseg.export.schemaVersion"] == b"2"
    assert pq.ParquetFile(out).schema_arrow.field("timestamp").type == pa.timestamp("ms", tz="UTC")
    rows = table.to_pylist()
    v2 = [r for r in rows if r["topic"] == "plain-v2"]
    assert v2 and all(round(r["timestamp"].timestamp() * 1000) == r["timestampMs"] > 0 for r in v2)
    v0 = [r for r in rows if r["topic"] == "v0-gzip"]
    assert v0 and all(r["timestamp"] is None and r["timestampMs"] == -1 for r in v0)


def test_a_timestamp_no_reader_can_hold_is_null_the_milliseconds_kept() -> None:
    from kseg.render.export import TIMESTAMP_RANGE, typed_timestamp

    assert typed_timestamp(-1) is None and typed_timestamp(0) == 0 and typed_timestamp(-2) == -2
    assert typed_timestamp(TIMESTAMP_RANGE[1]) == TIMESTAMP_RANGE[1] and typed_timestamp(TIMESTAMP_RANGE[1] + 1) is None
    assert typed_timestamp(2**63 - 1) is None and typed_timestamp(TIMESTAMP_RANGE[0] - 1) is None


def test_batch_columns_and_headers(tmp_path: Path) -> None:
    out = tmp_path / "x.parquet"
    assert run_cli(["export", str(CORPUS_DATA / "txn-v2-0"), "-o", str(out)]).exit_code == 0
    rows = pq.read_table(out).to_pylist()
    control = [r for r in rows if r["isControl"]]
    assert control and all(r["isTransactional"] for r in control)
    assert all(r["producerId"] >= 0 for r in rows if r["isTransactional"])
    assert {r["partition"] for r in rows} == {0} and {r["logDir"] for r in rows} == {str(CORPUS_DATA)}
    out2 = tmp_path / "h.parquet"
    assert run_cli(["export", str(CORPUS_DATA / "plain-v2-0"), "-o", str(out2)]).exit_code == 0
    with_headers = [r for r in pq.read_table(out2).to_pylist() if r["headers"]]
    assert with_headers and all(isinstance(h["value"], (bytes, type(None))) for r in with_headers for h in r["headers"])


def test_offset_and_time_ranges(tmp_path: Path) -> None:
    src = CORPUS_DATA / "plain-v2-0"
    every = export_records_of(src, tmp_path / "all.parquet")
    some = export_records_of(src, tmp_path / "o.parquet", "--from-offset", "100", "--to-offset", "300")
    assert some == [r for r in every if 100 <= r[0] <= 300]
    t0 = sorted(r[1] for r in every)[len(every) // 3]
    t1 = sorted(r[1] for r in every)[2 * len(every) // 3]
    timed = export_records_of(src, tmp_path / "t.parquet", "--from-time", str(t0), "--to-time", str(t1))
    assert timed == [r for r in every if t0 <= r[1] < t1] and timed


ALL_WITH_RECORDS = sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir() and any(p.glob("*.log")))


@pytest.mark.parametrize("name", ALL_WITH_RECORDS)
def test_middle_third_ranges_select_records_not_batches(name: str, tmp_path: Path) -> None:
    """Issue 39: every corpus partition's middle third, by offset and by time, is the full export filtered.
    v0/v1 compressed wrappers carry their last inner offset: a wrapper whose offset passes ``--to-offset``
    is opened and its inner records filtered (``--to-offset 199`` of v0-gzip gave 176 records)."""
    src = CORPUS_DATA / name
    every = export_records_of(src, tmp_path / "all.parquet", "--on-corruption", "skip", code=None)
    assert every, f"{name}: no record exported from a partition holding segments"
    offsets = sorted(r[0] for r in every)
    lo, hi = offsets[len(offsets) // 3], offsets[2 * len(offsets) // 3]
    some = export_records_of(src, tmp_path / "o.parquet", "--from-offset", str(lo), "--to-offset", str(hi), code=None)
    assert some == [r for r in every if lo <= r[0] <= hi] and some
    times = sorted(r[1] for r in every)
    t0, t1 = max(times[len(times) // 3], 0), times[2 * len(times) // 3]
    if t1 <= t0:  # v0: no timestamps (-1)
        return
    timed = export_records_of(src, tmp_path / "t.parquet", "--from-time", str(t0), "--to-time", str(t1), code=None)
    assert timed == [r for r in every if t0 <= r[1] < t1] and timed


def test_a_segment_named_past_the_range_opened_by_a_wrapper_below_it(tmp_path: Path) -> None:
    """A follower names a segment of v0/v1 data by its first wrapper's *last* offset
    (``firstOrLastOffsetOfFirstBatch``): ``00000000000000000015.log`` holding offsets 10..15.  A range
    ending at 12 reads that wrapper's first records; one ending at 9 does not need it.  A v2 twin (a
    segment named 10 past a range ending at 9) reads nothing of it."""
    from kseg.testing.legacy import build_legacy
    from kseg.testing.v2 import RecordSpec as Spec

    part = tmp_path / "old-0"
    part.mkdir()
    specs = [Spec(b"k%d" % i, b"v%d" % i, 1000 + i) for i in range(10)]
    (part / f"{0:020d}.log").write_bytes(build_legacy(specs, magic=1, base_offset=0, codec="gzip"))
    later = [Spec(b"k%d" % i, b"v%d" % i, 1000 + i) for i in range(10, 16)]
    (part / f"{15:020d}.log").write_bytes(build_legacy(later, magic=1, base_offset=10, codec="gzip"))
    got = export_records_of(part, tmp_path / "a.parquet", "--to-offset", "12")
    assert [r[0] for r in got] == list(range(13))
    got = export_records_of(part, tmp_path / "b.parquet", "--from-offset", "11", "--to-offset", "12")
    assert [r[0] for r in got] == [11, 12]
    assert [r[0] for r in export_records_of(part, tmp_path / "c.parquet", "--to-offset", "9")] == list(range(10))


def export_records_of(src: Path, out: Path, *args: str, code: int | None = 0) -> list[tuple]:
    r = run_cli(["export", str(src), "-o", str(out), *args])
    assert r.exit_code == code if code is not None else r.exit_code in (0, 1), r.errtext
    return export_records(pq.read_table(out))


def test_split_segments_read_as_one(tmp_path: Path) -> None:
    whole = tmp_path / "w.parquet"
    split = tmp_path / "s.parquet"
    src = CORPUS_DATA / "large-v2-0"
    assert run_cli(["export", str(src), "-o", str(whole)]).exit_code == 0
    r = run_cli(["export", str(src), "-o", str(split), "--split-bytes", str(1 << 20)])
    assert r.exit_code == 0
    assert pq.read_table(whole).to_pylist() == pq.read_table(split).to_pylist()


@pytest.mark.parametrize(
    "name, kind",
    [
        ("corrupt-crc-0", "crc"),
        ("corrupt-truncated-0", "trailing-bytes"),
        ("corrupt-garbage-tail-0", None),
        ("corrupt-compressed-0", None),
    ],
)
def test_corruption_is_marked_counted_and_exit_1(name: str, kind: str | None, tmp_path: Path) -> None:
    out = tmp_path / "x.parquet"
    r = run_cli(["export", str(CORPUS_DATA / name), "-o", str(out)])
    assert_no_traceback(r)
    assert r.exit_code == 1, r.errtext
    marked = [row for row in pq.read_table(out).to_pylist() if row["corruption"] is not None]
    assert marked and all(row["offset"] is None for row in marked)
    if kind:
        assert any(row["corruption"].startswith(kind + ":") for row in marked)
    rows = pq.read_table(out).num_rows
    records = rows - len(marked)
    assert f"{rows} row{'s' * (rows != 1)} from " in r.text  # issue 39: every row written is counted
    assert f": {records} record{'s' * (records != 1)}, {len(marked)} corruption row" in r.text
    assert r.errtext.count("kseg: corrupt: ") == len(marked)


def test_on_corruption_fail_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "x.parquet"
    r = run_cli(["export", str(CORPUS_DATA / "corrupt-crc-0"), "-o", str(out), "--on-corruption", "fail"])
    assert r.exit_code == 1 and not out.exists()
    assert "export stopped" in r.errtext and "kseg: corrupt: " in r.errtext
    assert list(tmp_path.iterdir()) == []


def test_on_corruption_keep_exports_the_crc_failing_records(tmp_path: Path) -> None:
    out = tmp_path / "x.parquet"
    r = run_cli(["export", str(CORPUS_DATA / "corrupt-crc-0"), "-o", str(out), "--on-corruption", "keep"])
    assert r.exit_code == 1
    rows = pq.read_table(out).to_pylist()
    assert any(row["crcValid"] is False and row["offset"] is not None for row in rows)


def test_existing_output_needs_force(tmp_path: Path) -> None:
    out = tmp_path / "x.parquet"
    out.write_bytes(b"keep me")
    r = run_cli(["export", str(CORPUS_DATA / "plain-v2-0"), "-o", str(out)])
    assert r.exit_code == 2 and "--force" in r.errtext and out.read_bytes() == b"keep me"
    assert run_cli(["export", str(CORPUS_DATA / "plain-v2-0"), "-o", str(out), "--force"]).exit_code == 0
    assert pq.read_table(out).num_rows > 0


def test_usage_errors(tmp_path: Path) -> None:
    out = str(tmp_path / "x.parquet")
    for args in (
        ["--from-offset", "5", "--to-offset", "4"],
        ["--master", "local[2]"],
        ["--from-time", "latest"],
        ["--key-decoder", "no_such_module_kseg:f"],
    ):
        r = run_cli(["export", str(CORPUS_DATA / "plain-v2-0"), "-o", out, *args])
        assert r.exit_code == 2, (args, r.errtext)
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_cli(["export", str(empty), "-o", out])
    assert r.exit_code == 2 and "no partition directories" in r.errtext
    assert_no_traceback(r)


@pytest.mark.parametrize("value", ["latest", "earliest", "max-timestamp", "-1", "yesterday"])
@pytest.mark.parametrize("option", ["--from-time", "--to-time"])
def test_time_bounds_take_times_and_say_only_what_they_accept(tmp_path: Path, option: str, value: str) -> None:
    """A range bound is a time: the names of lookups are refused, and no error lists them as valid."""
    r = run_cli(["export", str(CORPUS_DATA / "plain-v2-0"), "-o", str(tmp_path / "x.parquet"), option, value])
    assert r.exit_code == 2 and not (tmp_path / "x.parquet").exists()
    assert "epoch milliseconds or ISO-8601 with a zone" in r.errtext
    assert "earliest, latest or max-timestamp" not in r.errtext  # the list that named them as valid


def test_decoders_add_text_columns(tmp_path: Path) -> None:
    out = tmp_path / "x.parquet"
    r = run_cli(["export", str(CORPUS_DATA / "plain-v2-0"), "-o", str(out), "--value-decoder", "hex"])
    assert r.exit_code == 0
    rows = pq.read_table(out).to_pylist()
    assert all(row["valueText"] == (None if row["value"] is None else row["value"].hex()) for row in rows)
    assert all(row["keyText"] is None for row in rows)


def test_export_from_s3_to_s3_equals_local(s3, local_brokers, tmp_path: Path) -> None:
    local_out = tmp_path / "l.parquet"
    assert run_cli(["export", str(local_brokers / "b1" / "data"), "-o", str(local_out)]).exit_code == 1
    r = run_cli(["export", s3.uri("brokers/b1/data"), "-o", s3.uri("exports/b1.parquet")])
    assert r.exit_code == 1, r.errtext  # corrupt-crc-0 is in the tree
    got = tmp_path / "s3.parquet"
    s3.client.download_file("kseg-test", "exports/b1.parquet", str(got))
    strip = [{k: v for k, v in row.items() if k != "logDir"} for row in pq.read_table(got).to_pylist()]
    assert strip == [{k: v for k, v in row.items() if k != "logDir"} for row in pq.read_table(local_out).to_pylist()]
    assert {row["logDir"] for row in pq.read_table(got).to_pylist()} == {s3.uri("brokers/b1/data")}


def test_a_time_index_without_its_newest_entries_skips_nothing_it_should_not(tmp_path: Path) -> None:
    """Brokers before the final entry at roll left the newest batches unindexed: a start time above
    the last entry must still find the records after it."""
    import shutil

    part = tmp_path / "old-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    for tindex in part.glob("*.timeindex"):
        tindex.write_bytes(tindex.read_bytes()[:12])  # only the first entry left
    every = export_records_of(part, tmp_path / "all.parquet")
    t0 = max(r[1] for r in every if r[0] < 251)  # the newest record of the rolled first segment
    got = export_records_of(part, tmp_path / "t.parquet", "--from-time", str(t0))
    assert got == [r for r in every if r[1] >= t0]
    assert any(r[0] < 251 for r in got)


def test_control_records_decoded_as_their_type(tmp_path: Path) -> None:
    """Issue 33: a marker's bytes are no payload: with a decoder, keyText is its control type and valueText
    what dump prints for it (was ``valueText: '\\x00\\x00\\x00\\x00\\x00\\x05'`` with ``--value-decoder json``)."""
    out = tmp_path / "j.parquet"
    r = run_cli(["export", "--value-decoder", "json", str(CORPUS_DATA / "txn-v2-0"), "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    control = [row for row in pq.read_table(out).to_pylist() if row["isControl"]]
    assert control and {row["keyText"] for row in control} <= {"ABORT", "COMMIT"}
    assert all(
        row["valueText"] == f"endTxnMarker: {row['keyText']} coordinatorEpoch: " + row["valueText"].split()[-1]
        for row in control
    )
    assert all(row["valueText"].split()[-1].isdigit() for row in control)


def test_topic_selection_from_a_fleet_root(local_brokers, tmp_path: Path) -> None:
    """``--topic`` keeps the partitions of the topics named, from several brokers' log dirs."""
    out = tmp_path / "t.parquet"
    roots = [str(local_brokers / b / "data") for b in ("b1", "b2")]
    r = run_cli(["export", "--topic", "v2-zstd", "--topic", "v1-gzip", *roots, "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    rows = pq.read_table(out).to_pylist()
    assert {row["topic"] for row in rows} == {"v2-zstd", "v1-gzip"}
    assert len({row["logDir"] for row in rows}) == 2  # both brokers' copies
    whole = export_records_of(CORPUS_DATA / "v2-zstd-0", tmp_path / "z.parquet")
    assert [r for r in export_records(pq.read_table(out)) if r in whole] and len(rows) == 2 * (
        len(whole) + len(export_records_of(CORPUS_DATA / "v1-gzip-0", tmp_path / "g.parquet"))
    )
    r = run_cli(["export", "--topic", "nope", *roots, "-o", str(tmp_path / "n.parquet")])
    assert r.exit_code == 2 and "no partition of topic nope in the inputs" in r.errtext
    assert not (tmp_path / "n.parquet").exists()


def test_an_output_bucket_that_does_not_exist_is_said_before_any_work(s3, tmp_path: Path) -> None:
    """Issue 39: a store is probed before anything is read: no such bucket is exit 2 with the store's reason."""
    r = run_cli(["export", str(CORPUS_DATA / "plain-v2-0"), "-o", "s3://no-such-bucket-kseg/x.parquet"])
    assert r.exit_code == 2, r.errtext
    line = r.errtext.strip().splitlines()[-1]
    assert line.startswith("kseg: error: s3://no-such-bucket-kseg/x.parquet: cannot write -o: ") and "bucket" in line
    s3.client.put_object(Bucket="kseg-test", Key="exports/one.parquet", Body=b"x")
    r = run_cli(["export", str(CORPUS_DATA / "plain-v2-0"), "-o", s3.uri("exports/one.parquet")])
    assert r.exit_code == 2 and "exists; not replaced" in r.errtext
    keys = [o["Key"] for o in s3.client.list_objects_v2(Bucket="kseg-test", Prefix="exports/")["Contents"]]
    assert not [k for k in keys if "kseg-probe" in k]
