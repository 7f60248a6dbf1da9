"""Queries on a ``spark.read.format("kseg")`` DataFrame on a real local[2] PySpark (issue 39): a filter
never sticks to the DataFrame, with Spark's Python filter pushdown on or off; the ``topic``/``partition``/
``logDir`` options prune from the listing before any I/O (partitions whose ``.log`` is a dangling link
show it), counted on moto's S3 server; ``toOffset`` is exact inside v0/v1 compressed wrappers; a task
whose first reads all fail the same way stops with that reason; a load error is one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA
from tests.s3server import BUCKET, requests_logged
from tests.spark.shared import shared_session

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
#: the v0/v1 corpus partitions whose batches are compressed wrappers (a wrapper's offset is its last record's)
WRAPPED = ["v0-gzip-0", "v0-snappy-0", "v0-lz4-0", "v1-gzip-0", "v1-logappendtime-gzip-0", "v1-lz4-0", "v1-snappy-0"]


@pytest.fixture(scope="module")
def spark(s3):  # the S3 variables must be set before the JVM (and its Python workers) start
    """The process's shared local[2] session (tests/spark/shared.py), kseg's data source registered: no test
    here is about Spark's start-up."""
    return shared_session()


def offsets_and_times(df) -> list[tuple[int, int]]:
    got = df.select("offset", "timestampMs").collect()
    return sorted((r.offset, r.timestampMs) for r in got if r.offset is not None)


def test_a_filter_never_sticks_to_the_dataframe(spark, s3, tmp_path: Path) -> None:
    """count, filtered count, count -- on a log root, one partition and an S3 prefix, offset and timestamp
    filters, Spark's Python filter pushdown off and on: every count is its own query's."""
    root = tmp_path / "data"
    for name in ("plain-v2-0", "v0-gzip-0"):
        shutil.copytree(CORPUS_DATA / name, root / name)
    s3.upload_tree(root, "sticky/data")
    sources = [str(root), str(root / "v0-gzip-0"), s3.uri("sticky/data")]
    try:
        for pushdown in ("false", "true"):
            spark.conf.set(PUSHDOWN, pushdown)
            for source in sources:
                df = spark.read.format("kseg").load(source)
                seen = df.select("offset", "timestampMs", "topic").collect()  # the reference: one query
                rows = sorted((r.offset, r.timestampMs) for r in seen if r.offset is not None)
                every = df.count()
                t = sorted(ts for _, ts in rows)[len(rows) // 2]
                assert every == len(rows) + df.where("corruption IS NOT NULL").count() > 100
                assert df.where("offset <= 199").count() == sum(o <= 199 for o, _ in rows) < every
                assert df.count() == every, (source, pushdown)
                later = sum(ts >= t for _, ts in rows)  # v0 records have no timestamp (-1): all or none
                assert df.where(f"timestampMs >= {t}").count() == later and (later < every or "v0" in source)
                assert df.count() == every, (source, pushdown)
                assert df.where("offset >= 300").count() == sum(o >= 300 for o, _ in rows)
                assert df.where("topic = 'v0-gzip'").count() == len([1 for r in seen if r.topic == "v0-gzip"])
                assert df.count() == every, (source, pushdown)
    finally:
        spark.conf.set(PUSHDOWN, "false")


#: a task's error on opening a dangling ``.log`` of a partition the options did not choose
DANGLING = r"/(a-0|b-1)/\d{20}\.log: no such file"


def dangling(root: Path, *names: str) -> Path:
    """Partitions of ``plain-v2-0``'s segments under ``root``; in each of ``names`` every ``.log`` is a
    dangling link, so a query that opened one would fail."""
    for name in ("a-0", "a-1", "b-1"):
        shutil.copytree(CORPUS_DATA / "plain-v2-0", root / name)
    for name in names:
        for log in (root / name).glob("*.log"):
            log.unlink()
            log.symlink_to(root / "nowhere" / log.name)
    return root


def test_topic_partition_and_log_dir_options_prune_before_any_io(spark, tmp_path: Path) -> None:
    plain = spark.read.format("kseg").load(str(CORPUS_DATA / "plain-v2-0")).count()
    root = dangling(tmp_path / "b1" / "data", "a-0", "b-1")
    df = spark.read.format("kseg").options(topic="a", partition="1").load(str(root))
    assert df.count() == plain and {(r.topic, r.partition) for r in df.select("topic", "partition").collect()} == {
        ("a", 1)
    }
    with pytest.raises(Exception, match=DANGLING):  # not pruned: a dangling .log is opened
        spark.read.format("kseg").option("partition", "1").load(str(root)).count()
    with pytest.raises(Exception, match=DANGLING):  # a where clause is Spark's filter, after the read
        spark.read.format("kseg").load(str(root)).where("topic = 'a' AND partition = 1").count()
    other = dangling(tmp_path / "b2" / "data")  # a second log directory, readable
    both = f"{root},{other}"
    chosen = spark.read.format("kseg").option("logDir", str(other)).load(both)
    assert chosen.count() == 3 * plain and {r.logDir for r in chosen.select("logDir").distinct().collect()} == {
        str(other)
    }
    several = spark.read.format("kseg").options(topic="a,b", partition="1").load(str(other))
    assert several.count() == 2 * plain
    with pytest.raises(Exception, match="option partition"):
        spark.read.format("kseg").option("partition", "one").load(str(other))


def test_a_pruned_query_on_s3_makes_the_requests_of_its_partition_only(spark, s3) -> None:
    """20 partitions on S3: ``topic``/``partition`` options read one partition's objects -- bounded from above
    by its files -- where the same query as a where clause reads every partition."""
    part = CORPUS_DATA / "plain-v2-0"
    files = len([f for f in part.iterdir() if f.is_file()])
    for topic in ("t", "u"):
        for n in range(10):
            s3.upload_tree(part, f"pruned/data/{topic}-{n}")
    uri = s3.uri("pruned/data")
    with requests_logged() as log:
        df = spark.read.format("kseg").options(topic="t", partition="1").load(uri)
        listed = log.take()
        count = df.count()
        pruned = log.take()
        filtered = spark.read.format("kseg").load(uri).where("topic = 't' AND partition = 1")
        log.take()
        assert filtered.count() == count > 0
        unpruned = log.take()
    assert listed["LIST"] <= 3 and listed["GET"] == 0, listed
    assert pruned["LIST"] == 0 and pruned["HEAD"] <= files and pruned["GET"] <= 2 * files, pruned
    assert unpruned["HEAD"] >= 10 * pruned["HEAD"], (pruned, unpruned)
    assert not [line for line in log.lines if "/pruned/data/u-" in line or "/pruned/data/t-0/" in line]


@pytest.mark.parametrize("name", WRAPPED)
def test_an_offset_range_is_exact_inside_compressed_wrappers(spark, name: str) -> None:
    """The middle third of the offsets, and ``toOffset`` 199 on v0-gzip (a wrapper holding 176-200), select
    every record in range: a wrapper straddling ``toOffset`` is opened, not skipped."""
    path = str(CORPUS_DATA / name)
    every = [o for o, _ in offsets_and_times(spark.read.format("kseg").load(path))]
    lo, hi = every[len(every) // 3], every[2 * len(every) // 3]
    ranged = spark.read.format("kseg").options(fromOffset=str(lo), toOffset=str(hi)).load(path)
    assert [o for o, _ in offsets_and_times(ranged)] == [o for o in every if lo <= o <= hi]
    if name == "v0-gzip-0":
        upto = spark.read.format("kseg").option("toOffset", "199").load(path)
        assert [o for o, _ in offsets_and_times(upto)] == [o for o in every if o <= 199]
        assert max(every) == 200 and len([o for o in every if o <= 199]) == 200


def test_a_task_whose_first_reads_all_fail_the_same_way_stops_with_that_reason(spark, tmp_path: Path) -> None:
    root = tmp_path / "data"
    for n in range(5):
        shutil.copytree(CORPUS_DATA / "plain-v2-0", root / f"p-{n}")
    df = spark.read.format("kseg").option("onUnreadable", "rows").load(str(root))
    for log in root.glob("*/*.log"):
        log.unlink()  # gone after load(): every read fails the same way
    with pytest.raises(Exception, match="stopped: the first 3 reads all failed the same way") as got:
        df.count()
    assert "no such file" in str(got.value)


def test_a_load_error_is_one_line(spark, s3, tmp_path: Path) -> None:
    with pytest.raises(Exception) as got:
        spark.read.format("kseg").load(str(tmp_path / "nowhere"))
    said = str(got.value)
    assert "no such file or directory" in said and "Traceback" not in said and 'File "' not in said, said
    with pytest.raises(Exception, match="no such bucket") as bucket:
        spark.read.format("kseg").load("s3://kseg-no-such-bucket/data")
    assert "Traceback" not in str(bucket.value)
    assert BUCKET not in str(bucket.value)


def test_only_the_first_reads_failing_alike_stop_a_task() -> None:
    """A read that succeeds ends the watch; two different reasons end it; three alike from the start stop."""
    from kseg.errors import InputError
    from kseg.spark.datasource import SameFailures

    gone = InputError("no such file", path="/d/p-0/0.log")
    denied = InputError("access denied (AWS Error ACCESS_DENIED during HeadObject operation)", path="s3://b/p-1/0.log")
    watch = SameFailures(3)
    watch.failed(gone)
    watch.failed(gone)
    with pytest.raises(InputError, match=r"stopped: the first 3 reads all failed the same way \(no such file\)"):
        watch.failed(gone)
    after_a_read = SameFailures(3)
    after_a_read.read()
    for _ in range(5):
        after_a_read.failed(gone)  # once a read succeeded, failures are each the row of their segment
    mixed = SameFailures(3)
    mixed.failed(gone)
    mixed.failed(denied)
    for _ in range(5):
        mixed.failed(gone)
