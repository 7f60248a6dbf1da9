"""``spark.read.format("kseg")`` and ``kseg export --spark`` on a real local[2] PySpark.

The data source's rows must be ``kseg export``'s rows (themselves checked
against ``kseg dump``), for local paths and for the same tree on S3 (a real
S3-protocol server on loopback), split or not; range reads return exactly
the records in range.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, run_cli
from tests.s3server import broker_data_dirs
from tests.spark.shared import run_on_spark, shared_session
from tests.stores import local

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (the test extra)")

ORDER = ["logDir", "segment", "batchPosition", "offset"]


@pytest.fixture(scope="module")
def spark(s3):  # the S3 variables must be set before the JVM (and its Python workers) start
    """The process's shared local[2] session (tests/spark/shared.py), kseg's data source registered."""
    return shared_session()


def epoch_ms(when) -> int | None:
    """A ``timestamp`` value as epoch ms: Spark's are naive local times, pyarrow's aware (UTC)."""
    return None if when is None else round(when.timestamp() * 1000)


def rows_of(df) -> list[dict]:
    """The DataFrame's rows as dicts (binary columns as bytes, ``timestamp`` as epoch ms), in ``ORDER``: collected
    as Arrow (``toArrow``), the same values as ``collect()``'s Rows without a pickled Row each (the whole
    corpus's 17,000 rows: ~4.5 s -> ~2.7 s of wall)."""
    rows = df.toArrow().to_pylist()
    for r in rows:
        r["timestamp"] = epoch_ms(r["timestamp"])
    return sorted(rows, key=lambda r: tuple((x is None, x) for x in (r[k] for k in ORDER)))


def exported(paths: list[str], tmp_path: Path, *args: str) -> list[dict]:
    out = tmp_path / "e.parquet"
    r = run_cli(["export", *paths, "-o", str(out), "--force", *args])
    assert r.exit_code in (0, 1), r.errtext
    rows = pq.read_table(out).to_pylist()
    for r in rows:
        r["timestamp"] = epoch_ms(r["timestamp"])
    return sorted(rows, key=lambda r: tuple((x is None, x) for x in (r[k] for k in ORDER)))


def test_data_source_rows_are_the_export_rows_for_the_whole_corpus(spark, tmp_path: Path) -> None:
    parts = sorted(str(p) for p in CORPUS_DATA.iterdir() if p.is_dir() and any(p.glob("*.log")))
    df = spark.read.format("kseg").option("splitBytes", str(1 << 20)).load(",".join(parts))
    got = rows_of(df)
    want = exported(parts, tmp_path)
    assert len(got) == len(want) > 1000
    assert got == want
    assert df.where("corruption IS NOT NULL").count() == sum(r["corruption"] is not None for r in want) > 0


def test_range_reads(spark, tmp_path: Path) -> None:
    path = str(CORPUS_DATA / "large-v2-0")
    df = spark.read.format("kseg").options(fromOffset="1000", toOffset="1999", splitBytes=str(1 << 20)).load(path)
    offsets = [r.offset for r in df.select("offset").collect()]
    every = [r["offset"] for r in exported([path], tmp_path)]
    assert sorted(offsets) == [o for o in every if 1000 <= o <= 1999] and offsets
    some = exported([path], tmp_path, "--from-time", "1730000000500", "--to-time", "1730000001000")
    timed = spark.read.format("kseg").options(fromTime="1730000000500", toTime="2024-10-27T03:33:21Z").load(path)
    assert rows_of(timed) == some


def test_timestamp_is_a_spark_timestamp_beside_the_milliseconds(spark, tmp_path: Path) -> None:
    """``timestamp`` is a TIMESTAMP (SQL's comparisons work), ``timestampMs`` Kafka's bigint; a v0 record has
    none (-1: null); ``fromTime`` still selects by the milliseconds; the export's rows."""
    from datetime import datetime, timezone

    path = str(CORPUS_DATA / "plain-v2-0")
    df = spark.read.format("kseg").load(path)
    types = dict(df.dtypes)
    assert types["timestamp"] == "timestamp" and types["timestampMs"] == "bigint"
    every = exported([path], tmp_path)
    assert all(r["timestamp"] == r["timestampMs"] for r in every if r["offset"] is not None)
    t = sorted(r["timestampMs"] for r in every if r["offset"] is not None)[len(every) // 2]
    iso = datetime.fromtimestamp(t / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    later = [r for r in every if r["offset"] is not None and r["timestampMs"] >= t]
    assert rows_of(df.where(f"timestamp >= TIMESTAMP '{iso}'")) == later and 0 < len(later) < len(every)
    assert rows_of(spark.read.format("kseg").option("fromTime", str(t)).load(path)) == later
    v0 = spark.read.format("kseg").load(str(CORPUS_DATA / "v0-gzip-0"))
    assert {(r.timestamp, r.timestampMs) for r in v0.select("timestamp", "timestampMs").collect()} == {(None, -1)}


def test_data_source_on_s3_equals_the_local_copy(spark, s3, local_brokers) -> None:
    remote = rows_of(spark.read.format("kseg").load(s3.uri("brokers")))
    local = rows_of(spark.read.format("kseg").load(f"{local_brokers / 'b1' / 'data'},{local_brokers / 'b2' / 'data'}"))
    strip = [{k: v for k, v in r.items() if k != "logDir"} for r in remote]
    assert len(remote) == len(local) > 0
    key = lambda r: (r["topic"], r["segment"], r["batchPosition"], r["offset"] is None, r["offset"] or 0)  # noqa: E731
    assert sorted(strip, key=key) == sorted(({k: v for k, v in r.items() if k != "logDir"} for r in local), key=key)
    assert {r["logDir"] for r in remote} == {s3.uri("brokers/b1/data"), s3.uri("brokers/b2/data")}


def test_export_on_spark_writes_from_the_executors(s3, tmp_path: Path) -> None:
    r = run_on_spark(
        ["export", "--spark", "--master", "local[2]", s3.uri("brokers/b1/data"), "-o", s3.uri("exports/spark-b1")]
    )
    assert r.exit_code == 1, r.errtext[-3000:]  # corrupt-crc-0 is in the tree
    assert "Traceback" not in r.errtext
    listing = s3.client.list_objects_v2(Bucket="kseg-test", Prefix="exports/spark-b1/")["Contents"]
    keys = sorted(o["Key"] for o in listing)
    assert "exports/spark-b1/_SUCCESS" in keys
    rows = []
    for k in keys:
        if k.endswith(".parquet"):
            dst = tmp_path / k.replace("/", "_")
            s3.client.download_file("kseg-test", k, str(dst))
            rows.extend(pq.read_table(dst).to_pylist())
    local = tmp_path / "l.parquet"
    run_cli(["export", s3.uri("brokers/b1/data"), "-o", str(local)])
    key = lambda r: (r["topic"], r["segment"], r["batchPosition"], r["offset"] is None, r["offset"] or 0)  # noqa: E731
    assert sorted(rows, key=key) == sorted(pq.read_table(local).to_pylist(), key=key)
    assert f"{sum(r['corruption'] is None for r in rows)} records" in r.text


def test_verify_index_on_spark_reads_s3_and_writes_the_report_there(s3, local_brokers, tmp_path: Path) -> None:
    """Segments on S3, report to S3 by the executors: the local command's rows on the local copy."""
    import json

    local = tmp_path / "local.jsonl"
    r1 = run_cli(["verify-index", "-q", "--report", str(local), *broker_data_dirs(local_brokers)])
    r2 = run_on_spark(  # on the shared session: a fresh process's stderr is test_spark.py's two-broker test's
        [
            "verify-index",
            "--spark",
            "--master",
            "local[2]",
            "--report",
            s3.uri("reports/fleet.parquet"),
            s3.uri("brokers/b1/data"),
            s3.uri("brokers/b2/data"),
        ]
    )
    assert r1.exit_code == r2.exit_code == 1, r2.errtext[-3000:]
    assert r2.errtext == ""
    keys = sorted(o["Key"] for o in s3.client.list_objects_v2(Bucket="kseg-test", Prefix="reports/")["Contents"])
    assert "reports/fleet.parquet/_SUCCESS" in keys
    rows = []
    for k in keys:
        if k.endswith(".parquet") and "/part-" in k:
            dst = tmp_path / k.replace("/", "_")
            s3.client.download_file("kseg-test", k, str(dst))
            rows.extend(pq.read_table(dst).to_pylist())
    prefix = s3.uri("brokers")

    def norm(row: dict) -> str:  # a copy's identity is its own (size, mtime, ctime here; an ETag on S3)
        return json.dumps({k: v for k, v in row.items() if v is not None and k != "identity"}, sort_keys=True)

    want = [json.loads(line.replace(str(local_brokers), prefix)) for line in local.read_text().splitlines()]
    assert sorted(map(norm, rows)) == sorted(map(norm, want))
    # the terminal shows the local run's lines: each segment's (clean ones too), its problems, the summary
    shown = r2.text.replace(prefix, str(local_brokers))
    assert shown == run_cli(["verify-index", *broker_data_dirs(local_brokers)]).text
    assert ": clean (" in r2.text and "problem: " in r2.text
    assert r2.text.splitlines()[-1] == r1.text.splitlines()[-1]


def test_small_partitions_share_a_task_and_large_segments_are_split() -> None:
    from kseg.ops.export.export import Ranges
    from kseg.spark.datasource import UNITS_PER_TASK
    from kseg.spark.deal import deal_in_order, packing
    from kseg.storage.listing import Listed
    from kseg.storage.stores.find import discover_as

    paths = [str(CORPUS_DATA / "plain-v2-0"), str(CORPUS_DATA / "txn-v2-0"), str(CORPUS_DATA / "large-v2-0")]
    parts = discover_as(paths, [], Listed)
    dealt = deal_in_order(parts, Ranges(), 1 << 20, packing(1 << 20, UNITS_PER_TASK))  # the data source's tasks
    groups = [list(d.units(Ranges(), 1 << 20)) for d in dealt]
    assert [u.partition for u in groups[0][:4]] == ["plain-v2-0"] * 2 + ["txn-v2-0"] * 2  # small: one task
    large = [(u.band, u.bands) for g in groups for u in g if u.partition == "large-v2-0"]
    assert large == [(0, 4), (1, 4), (2, 4), (3, 4)]  # 3.01 MiB: four bands of ~0.75 MiB
    assert [len(g) for g in groups] == [5, 1, 1, 1]  # the first band shares the small partitions' task


def test_no_filter_is_pushed_and_spark_filters_the_rows(spark) -> None:
    """Spark keeps its Filter above the scan (a pushed one would stick to the DataFrame: issue 39), and
    the rows are the unfiltered rows filtered."""
    df = spark.read.format("kseg").load(str(CORPUS_DATA / "plain-v2-0"))
    query = df.where("offset >= 251 AND timestampMs > 0")
    plan = query._jdf.queryExecution().optimizedPlan().toString()
    assert "Filter" in plan and "offset" in plan.split("Filter")[1].split("\n")[0], plan
    every = rows_of(df)
    want = [r for r in every if r["offset"] is not None and r["offset"] >= 251 and r["timestampMs"] > 0]
    assert rows_of(query) == want


def test_a_from_offset_does_not_read_the_segments_below_it(spark, tmp_path: Path) -> None:
    """A corrupt batch in the first segment fails ``onCorruption=fail`` -- unless ``fromOffset`` prunes it."""
    import shutil

    part = tmp_path / "plain-v2-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    log = part / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[70] ^= 0xFF  # inside the first batch's records: a CRC mismatch
    log.write_bytes(bytes(data))
    df = spark.read.format("kseg").option("onCorruption", "fail").load(str(part))
    with pytest.raises(Exception, match="CorruptionStop|CRC"):
        df.count()
    pruned = spark.read.format("kseg").options(onCorruption="fail", fromOffset="251").load(str(part))
    assert pruned.count() == pruned.count() > 0
    assert sorted(r.offset for r in pruned.select("offset").collect())[0] == 251


def test_many_small_partitions_are_a_few_tasks_not_one_each() -> None:
    """Packing is by bytes and by count: 1,000 one-segment partitions are 4 tasks of 256 or fewer."""
    from kseg.ops.export.export import Ranges, units
    from kseg.spark.datasource import UNITS_PER_TASK
    from kseg.spark.deal import deal_in_order, packing
    from kseg.storage.listing import Listed
    from kseg.storage.partition import Partition, Segment

    listing = [
        Listed(Partition(f"/d/t-{n}", [Segment(0, f"/d/t-{n}/0.log", log_bytes=100, store=local())], store=local()))
        for n in range(1000)
    ]
    planned = list(units(listing))
    dealt = deal_in_order(listing, Ranges(), 128 << 20, packing(128 << 20, UNITS_PER_TASK))  # the data source's
    groups = [list(d.units(Ranges(), 128 << 20)) for d in dealt]
    assert [len(g) for g in groups] == [UNITS_PER_TASK] * 3 + [1000 - 3 * UNITS_PER_TASK]
    assert [u for g in groups for u in g] == planned


def test_one_load_is_one_listing_for_every_query(spark, tmp_path: Path) -> None:
    """The listing is made by ``load()`` and carried in the data source's pickle to every query planned
    from it: a partition added afterwards is seen only by a new load."""
    import shutil

    root = tmp_path / "root"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", root / "plain-v2-0")
    df = spark.read.format("kseg").load(str(root))
    total = df.count()
    shutil.copytree(CORPUS_DATA / "txn-v2-0", root / "txn-v2-0")  # not in the load's listing
    assert df.count() == total and df.where("offset >= 251").count() == df.where("offset >= 251").count() > 0
    assert {r.topic for r in df.where("timestampMs >= 0").select("topic").distinct().collect()} == {"plain-v2"}
    assert spark.read.format("kseg").load(str(root)).select("topic").distinct().count() == 2


def test_the_tasks_are_not_sent_the_listing() -> None:
    """The read function's pickle (the data source after ``reader()``, and the reader) leaves the listing
    out; the pickle Spark keeps from ``load()`` holds it."""
    import pickle

    from kseg.spark.datasource import KsegDataSource

    ds = KsegDataSource({"path": str(CORPUS_DATA)})
    kept = pickle.loads(pickle.dumps(ds))
    assert kept.listing is not None and len(kept.listing) == len(ds.listing) > 5
    reader = kept.reader(None)
    assert pickle.loads(pickle.dumps(kept)).listing is None and pickle.loads(pickle.dumps(reader)).listing is None
    assert len(reader.partitions()) > 0  # the live reader plans from the carried listing


def test_a_path_that_cannot_be_listed_fails_the_load(spark, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="no such file or directory") as got:
        spark.read.format("kseg").load(str(tmp_path / "nowhere"))
    assert str(tmp_path / "nowhere") in str(got.value)


def test_an_unreadable_segment_fails_the_query_or_is_an_unreadable_row(spark, tmp_path: Path) -> None:
    """A segment gone between the listing and the task (an I/O failure, as a store's access denied): by
    default the query fails naming it; with ``onUnreadable=rows`` it is one row whose ``unreadable``
    says why -- never a ``corruption`` row -- and every other segment's records are there."""
    import shutil

    root = tmp_path / "root"
    for name in ("plain-v2-0", "txn-v2-0"):
        shutil.copytree(CORPUS_DATA / name, root / name)
    whole = spark.read.format("kseg").load(str(root / "plain-v2-0")).count()
    df = spark.read.format("kseg").load(str(root))
    marked = spark.read.format("kseg").option("onUnreadable", "rows").load(str(root))
    assert "unreadable" not in df.columns and marked.columns == [*df.columns, "unreadable"]
    gone = sorted((root / "txn-v2-0").glob("*.log"))[0]
    gone.unlink()
    with pytest.raises(Exception, match="No such file|no such file") as failed:
        df.count()
    assert str(gone) in str(failed.value)
    rows = rows_of(marked)
    bad = [r for r in rows if r["unreadable"] is not None]
    assert len(bad) == 1 and str(gone) in bad[0]["unreadable"] and bad[0]["unreadable"].startswith("not read: ")
    assert bad[0]["corruption"] is None and bad[0]["offset"] is None and bad[0]["topic"] == "txn-v2"
    assert bad[0]["segment"] == gone.stem
    assert all(r["corruption"] is None for r in rows if r["unreadable"] is not None)
    assert sum(r["topic"] == "plain-v2" for r in rows) == whole
    assert marked.where("unreadable IS NULL AND corruption IS NULL").count() == len(rows) - 1 - sum(
        r["corruption"] is not None for r in rows
    )
    with pytest.raises(Exception, match="onUnreadable must be fail or rows"):
        spark.read.format("kseg").option("onUnreadable", "skip").load(str(root))


def test_export_on_spark_coalesces_small_segments_into_files_of_the_target_size(tmp_path: Path) -> None:
    """300 one-record partitions and a 3 MiB one (cut in 1 MiB splits): a few files, not one a split, each within
    ``--target-file-size`` but for its footer, every row of the local export there, the summary line only
    after the files were found; a re-run with ``--force`` and another size replaces them (no duplicates)."""
    import shutil

    from kseg.testing.bombs import write_many_partitions

    def place(row: dict) -> tuple:
        return tuple(
            (row[k] is None, row[k] or 0) for k in ("topic", "partition", "segment", "batchPosition", "offset")
        )

    root = write_many_partitions(tmp_path / "root", 300)
    shutil.copytree(CORPUS_DATA / "large-v2-0", root / "large-v2-0")
    local = tmp_path / "local.parquet"
    first = run_cli(["export", str(root), "-o", str(local), "--split-bytes", "1048576"])
    assert first.exit_code == 0 and first.text.endswith(f"splits written to {local}.\n")
    splits = first.text.split(" from ")[1].split(" splits")[0]  # the local export's, with the same cuts
    want = sorted(pq.read_table(local).to_pylist(), key=place)
    out = tmp_path / "out"
    target = 256 << 10
    for size in (target, 64 << 20):
        args = ["export", "--spark", "--master", "local[2]", str(root), "-o", str(out), "--split-bytes", "1048576"]
        r = run_on_spark([*args, "--force", "--target-file-size", str(size)])
        assert r.exit_code == 0, r.errtext[-3000:]
        assert r.text.strip() == f"{len(want)} records from {splits} splits written to {out}."
        files = sorted(out.rglob("*.parquet"))
        assert sorted(p.name for p in out.iterdir()) == sorted(["_SUCCESS", *(f.name for f in files)])
        got = sorted((row for f in files for row in pq.read_table(f).to_pylist()), key=place)
        assert got == want
        data = [f.stat().st_size - pq.ParquetFile(f).metadata.serialized_size for f in files]
        assert all(d <= size for d in data), data
        assert 1 < len(files) <= 12 if size == target else len(files) <= 8, [f.name for f in files]
    r = run_cli(["export", str(root), "-o", str(tmp_path / "x.parquet"), "--target-file-size", "1000"])
    assert r.exit_code == 2 and "--target-file-size is for --spark" in r.errtext
