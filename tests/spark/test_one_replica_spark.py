"""One copy per topic-partition on a real local[2] PySpark: the data source's ``replicas=one`` (local
disk and moto's S3) and ``export --spark --one-replica`` keep the replicas ``export --one-replica`` keeps
(``kseg diff``'s reading), and say which."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_export_one_replica import make_fleet
from tests.conftest import run_cli
from tests.spark.shared import run_on_spark, shared_session

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (the test extra)")

WHERE = ("topic", "partition", "segment", "batchPosition", "offset")


@pytest.fixture(scope="module")
def spark(s3):  # the S3 variables must be set before the JVM (and its Python workers) start
    """The process's shared local[2] session (tests/spark/shared.py), kseg's data source registered."""
    return shared_session()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("fleet")
    return root, make_fleet(root)


def rows(table_rows) -> list[tuple]:
    return sorted(((r["logDir"], *(r[k] for k in WHERE)) for r in table_rows), key=repr)


def local_one(root: Path, tmp_path: Path) -> tuple[list[dict], str]:
    out = tmp_path / "one.parquet"
    r = run_cli(["export", "--one-replica", *(str(root / f"b{n}" / "data") for n in (1, 2, 3)), "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    return pq.read_table(out).to_pylist(), r.text


def test_data_source_replicas_one_is_the_local_choice(spark, fleet, s3, tmp_path: Path) -> None:
    root, kept = fleet
    want, _ = local_one(root, tmp_path)
    paths = ",".join(str(root / f"b{n}" / "data") for n in (1, 2, 3))
    df = spark.read.format("kseg").option("replicas", "one").load(paths)
    got = [r.asDict() for r in df.select("logDir", *WHERE).collect()]
    assert rows(got) == rows(want) and {r["logDir"] for r in got} == {str(p.parent) for p in kept.values()}
    assert df.count() == df.count() == len(want)  # the choice is the load's: every query's
    every = spark.read.format("kseg").load(paths)
    assert every.count() > len(want) + 100  # replicas=all (default): every copy
    with pytest.raises(Exception, match="replicas must be all or one"):
        spark.read.format("kseg").option("replicas", "two").load(paths)
    s3.upload_tree(root, "one-replica")  # the same fleet as objects: the same choice
    remote = spark.read.format("kseg").option("replicas", "one").load(s3.uri("one-replica"))
    strip = lambda rs: sorted((tuple(r[k] for k in WHERE) for r in rs), key=repr)  # noqa: E731
    on_s3 = [r.asDict() for r in remote.select("logDir", *WHERE).collect()]
    assert strip(on_s3) == strip(want)
    assert {r["logDir"] for r in on_s3} == {s3.uri(f"one-replica/{p.parent.parent.name}/data") for p in kept.values()}


def test_export_spark_one_replica_is_the_local_choice_and_says_it(spark, fleet, tmp_path: Path) -> None:
    root, _ = fleet
    want, text = local_one(root, tmp_path)
    out = tmp_path / "spark-out"
    r = run_on_spark(
        ["export", "--spark", "--one-replica", *(str(root / f"b{n}" / "data") for n in (1, 2, 3)), "-o", str(out)]
    )
    assert r.exit_code == 0, r.errtext[-3000:]
    got = [row for f in sorted(out.glob("*.parquet")) for row in pq.read_table(f).to_pylist()]
    assert rows(got) == rows(want)
    said = [line for line in r.text.splitlines() if line.startswith("replica: ")]
    assert said == [line for line in text.splitlines() if line.startswith("replica: ")] and len(said) == 4
