"""``spark.read.format("kseg").option("valueDecoder", "registry")``: typed columns on a real local[2]
PySpark, for payloads written by confluent-kafka's own serializers; the rows are ``kseg export``'s."""

from __future__ import annotations

import datetime

import pytest

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")
pytest.importorskip("confluent_kafka.schema_registry.avro")
pytest.importorskip("fastavro")
pytest.importorskip("grpc_tools")
pq = pytest.importorskip("pyarrow.parquet")

from tests.conftest import run_cli  # noqa: E402
from tests.registry.typed_build import build  # noqa: E402
from tests.spark.shared import shared_session  # noqa: E402


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("typed-spark")
    answers: list[dict] = []
    return root, build(str(root), answers), answers


def test_data_source_typed_columns_are_the_export_columns(tree, tmp_path) -> None:
    root = tree[0]
    spark = shared_session()
    for topic in ("shop", "parcels", "people"):
        df = spark.read.format("kseg").options(valueDecoder="registry", topic=topic).load(str(root))
        got = sorted((r.asDict(recursive=True) for r in df.collect()), key=lambda r: r["offset"])
        out = tmp_path / f"{topic}.parquet"
        r = run_cli(["export", "--value-decoder", "registry", str(root), "--topic", topic, "-o", str(out)])
        assert r.exit_code == 0, r.errtext
        want = pq.read_table(out).to_pylist()
        assert [g["valueSchemaId"] for g in got] == [w["valueSchemaId"] for w in want]
        assert [g["valueDecodeError"] for g in got] == [w["valueDecodeError"] for w in want]
        assert [g["valueText"] for g in got] == [w["valueText"] for w in want]
        for g, w in zip(got, want, strict=True):
            assert _spark_value(w["valueDecoded"]) == _plain(g["valueDecoded"]), topic


def test_data_source_typed_column_types(tree) -> None:
    root = tree[0]
    spark = shared_session()
    df = spark.read.format("kseg").options(valueDecoder="registry", topic="shop").load(str(root))
    types = {f.name: f.dataType.simpleString() for f in df.schema["valueDecoded"].dataType.fields}
    assert types["price"] == "decimal(12,3)" and types["day"] == "date" and types["at"] == "timestamp"
    assert types["local"] == "timestamp_ntz" and types["open"] == "int" and types["close"] == "bigint"
    assert types["hash"] == "binary" and types["code"] == "struct<int:int,string:string>"
    assert types["by_store"] == "map<string,struct<sku:string,qty:int>>"
    names = df.columns
    assert names[-3:] == ["valueDecoded", "valueSchemaId", "valueDecodeError"]
    assert df.where("valueDecoded.channel = 'web'").count() == 2  # version 1 records: the added field's default


def test_data_source_registry_option_errors(tree) -> None:
    root = tree[0]
    spark = shared_session()
    with pytest.raises(Exception, match="no subject _schemas-value"):  # every topic typed: _schemas has none
        spark.read.format("kseg").options(valueDecoder="registry").load(str(root))
    with pytest.raises(Exception, match="no subject shop-key"):
        spark.read.format("kseg").options(keyDecoder="registry", topic="shop").load(str(root))


MAPS = ("by_store", "counts")  # the map columns (pyarrow gives a map as a list of pairs, Spark a dict)


def _spark_value(v, key: str = ""):
    """An export value as Spark gives it: maps as dicts, zoned timestamps as the session's local time
    (naive), times as their Avro numbers (time-millis ``open`` in ms, time-micros ``close`` in us)."""
    if isinstance(v, dict):
        return {k: _spark_value(x, k) for k, x in v.items()}
    if isinstance(v, list):
        if key in MAPS:
            return {k: _spark_value(x) for k, x in v}
        return [_spark_value(x) for x in v]
    if isinstance(v, datetime.time):
        us = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
        return us // 1000 if key == "open" else us
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone().replace(tzinfo=None)
    return v


def _plain(v):
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, bytearray):
        return bytes(v)
    return v


def test_data_source_other_decoders_still_give_text_columns_only(tree, tmp_path) -> None:
    root = tree[0]
    spark = shared_session()
    df = spark.read.format("kseg").options(valueDecoder="hex", topic="people").load(str(root))
    assert "valueDecoded" not in df.columns
    out = tmp_path / "hex.parquet"
    r = run_cli(["export", "--value-decoder", "hex", str(root), "--topic", "people", "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    want = [row["valueText"] for row in pq.read_table(out).to_pylist()]
    assert [row["valueText"] for row in df.orderBy("offset").collect()] == want


def test_export_on_spark_writes_the_local_export_typed_columns(tree, tmp_path) -> None:
    from tests.spark.shared import run_on_spark

    root = tree[0]
    out = tmp_path / "spark-out"
    r = run_on_spark(["export", "--spark", "--value-decoder", "registry", str(root), "--topic", "shop",
                      "-o", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.errtext
    got = sorted(pq.read_table(str(out)).to_pylist(), key=lambda row: row["offset"])
    local = tmp_path / "local.parquet"
    r = run_cli(["export", "--value-decoder", "registry", str(root), "--topic", "shop", "-o", str(local)])
    assert r.exit_code == 0, r.errtext
    want = pq.read_table(local).to_pylist()
    cols = ("offset", "value", "valueText", "valueDecoded", "valueSchemaId", "valueDecodeError")
    assert [{c: row[c] for c in cols} for row in got] == [{c: row[c] for c in cols} for row in want]
    assert any(row["valueDecoded"] is not None for row in got)


def test_data_source_several_topics_type_a_struct_per_topic(tree) -> None:
    root = tree[0]
    spark = shared_session()
    df = spark.read.format("kseg").options(valueDecoder="registry", topic="shop,people").load(str(root))
    assert [f.name for f in df.schema["valueDecoded"].dataType.fields] == ["people", "shop"]
    one = spark.read.format("kseg").options(valueDecoder="registry", topic="people").load(str(root))
    assert df.schema["valueDecoded"].dataType["people"].dataType == one.schema["valueDecoded"].dataType
    people = [r.valueDecoded for r in df.where("topic = 'people'").orderBy("offset").collect()]
    want = [r.valueDecoded for r in one.orderBy("offset").collect()]
    assert [None if p is None else p["people"] for p in people] == want
    assert all(p is None or p["shop"] is None for p in people)
    assert df.where("valueDecoded.shop.channel = 'web'").count() == 2


def test_export_on_spark_validate_as_the_local_export(tree, tmp_path) -> None:
    from tests.spark.shared import run_on_spark

    root = tree[0]
    out = tmp_path / "spark-out"
    r = run_on_spark(["export", "--spark", "--validate", "--value-decoder", "registry", str(root),
                      "--topic", "people", "--topic", "shop", "-o", str(out)])  # fmt: skip
    assert r.exit_code == 1, r.errtext  # the tasks' counts reach the driver: its notes and exit code
    assert "1 payload not matching its schema: $.name: 5 is not of type 'string'" in r.errtext
    got = sorted(pq.read_table(str(out)).to_pylist(), key=lambda row: (row["topic"], row["offset"]))
    local = tmp_path / "local.parquet"
    r = run_cli(["export", "--validate", "--value-decoder", "registry", str(root), "--topic", "people",
                 "--topic", "shop", "-o", str(local)])  # fmt: skip
    assert r.exit_code == 1, r.errtext
    want = sorted(pq.read_table(local).to_pylist(), key=lambda row: (row["topic"], row["offset"]))
    cols = ("topic", "offset", "valueDecoded", "valueSchemaId", "valueDecodeError", "valueInvalid")
    assert [{c: row[c] for c in cols} for row in got] == [{c: row[c] for c in cols} for row in want]
    assert [row["valueInvalid"] for row in got if row["valueInvalid"]] == ["$.name: 5 is not of type 'string'"]


def test_data_source_schemas_option_a_directory_of_schema_files_on_an_object_store(tree, tmp_path, s3) -> None:
    """``.option("schemas", "s3://bucket/schemas/")``: the driver lists and reads the schema files through the
    store of that prefix; the typed rows are those of the ``_schemas-0`` beside the data."""
    import json

    root, _, answers = tree
    (tmp_path / "rest").mkdir()
    (tmp_path / "rest" / "all.json").write_text(json.dumps(answers), encoding="utf-8")  # a saved GET /schemas
    s3.upload_tree(tmp_path / "rest", "datasource-schemas")
    spark = shared_session()

    def rows(**options: str) -> list:
        df = spark.read.format("kseg").options(valueDecoder="registry", topic="shop", **options).load(str(root))
        return [r.asDict(recursive=True) for r in df.orderBy("offset").collect()]

    got = rows(schemas=s3.uri("datasource-schemas/"))
    assert got == rows() and any(r["valueDecoded"] is not None for r in got)
