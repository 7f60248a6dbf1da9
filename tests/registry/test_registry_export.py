"""``kseg export --value-decoder registry``: typed Parquet columns for payloads written by
confluent-kafka's own serializers (Avro, Protobuf, JSON Schema), the real CLI, real files."""

from __future__ import annotations

import datetime

import pytest

pytest.importorskip("confluent_kafka.schema_registry.avro")
pytest.importorskip("fastavro")
pytest.importorskip("grpc_tools")
pq = pytest.importorskip("pyarrow.parquet")
pa = pytest.importorskip("pyarrow")

from tests.conftest import assert_no_traceback, run_cli  # noqa: E402
from tests.registry import build as orders_build  # noqa: E402
from tests.registry.typed_build import build  # noqa: E402


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("typed")
    return root, build(str(root))


def export(root, tmp_path, topic: str, *more: str):
    out = tmp_path / f"{topic}.parquet"
    r = run_cli(["export", "--value-decoder", "registry", str(root), "--topic", topic, "-o", str(out), *more])
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    return pq.read_table(out), r


def test_avro_values_are_typed_columns_of_the_latest_version(tree, tmp_path) -> None:
    root, written = tree
    table, r = export(root, tmp_path, "shop")
    t = table.schema.field("valueDecoded").type
    line = pa.struct([("sku", pa.string()), ("qty", pa.int32())])
    assert t == pa.struct(
        [
            ("id", pa.int64()),
            ("price", pa.decimal128(12, 3)),
            ("day", pa.date32()),
            ("open", pa.time32("ms")),
            ("close", pa.time64("us")),
            ("at", pa.timestamp("us", tz="UTC")),
            ("local", pa.timestamp("ms")),
            ("uid", pa.string()),
            ("hash", pa.binary(4)),
            ("kind", pa.string()),
            ("code", pa.struct([("int", pa.int32()), ("string", pa.string())])),  # a branch per type
            ("lines", pa.list_(line)),
            ("by_store", pa.map_(pa.string(), line)),
            ("maybe", line),  # null and one type: that type, nullable
            ("ratio", pa.float32()),
            ("ok", pa.bool_()),
            ("channel", pa.string()),  # version 2's
        ]
    )
    assert table.schema.field("valueSchemaId").type == pa.int32()
    rows = table.to_pylist()
    shop = [w for w in written if w.topic == "shop"]
    assert [r["offset"] for r in rows] == [w.offset for w in shop]
    for row, w in zip(rows, shop, strict=True):
        assert row["valueSchemaId"] == w.schema_id
        assert row["value"] is not None  # the raw bytes are kept
        if w.value is None:
            assert row["valueDecoded"] is None and "runs past the end" in row["valueDecodeError"]
            continue
        assert row["valueDecodeError"] is None
        expected = dict(w.value)
        expected["uid"] = str(expected["uid"])
        code = expected["code"]
        expected["code"] = None if code is None else {"int": code, "string": None} if isinstance(code, int) else {
            "int": None, "string": code}  # fmt: skip
        expected["by_store"] = list(expected["by_store"].items())
        expected.setdefault("channel", "web")  # a version 1 record: the default of the field added
        got = dict(row["valueDecoded"])
        got["at"] = got["at"].astimezone(datetime.timezone.utc)
        assert got == expected
    assert rows[0]["valueSchemaId"] != rows[2]["valueSchemaId"]  # two versions in one column


def test_protobuf_messages_are_typed_columns(tree, tmp_path) -> None:
    root, _ = tree
    table, _ = export(root, tmp_path, "parcels")
    t = table.schema.field("valueDecoded").type
    assert t.field("big").type == pa.decimal128(20, 0) and t.field("speed").type == pa.string()
    assert t.field("counts").type == pa.map_(pa.string(), pa.int32())
    assert t.field("sent").type == pa.timestamp("us", tz="UTC") and t.field("maybe").type == pa.int64()
    rows = table.to_pylist()
    first, second, bad = (r["valueDecoded"] for r in rows)
    assert first["id"] == "A" and first["weight"] == -5 and int(first["big"]) == (1 << 64) - 1
    assert first["speed"] == "FAST" and first["items"] == [{"sku": "i1", "price": 2.5}]
    assert first["counts"] == [("x", 3)] and first["maybe"] == 7
    assert first["sent"] == datetime.datetime.fromtimestamp(1_700_000_000, datetime.timezone.utc)
    assert first["note"] is None and first["courier"] == ""  # no presence: null; version 1: proto3's default
    assert second["note"] == "fragile" and second["courier"] == "DHL" and second["raw"] == b"\x00\xff"
    assert second["sent"] is None and second["maybe"] is None
    assert bad is None and "Wire format was corrupt" in rows[2]["valueDecodeError"]
    assert rows[0]["valueSchemaId"] != rows[1]["valueSchemaId"]


def test_json_schema_payloads_are_typed_columns(tree, tmp_path) -> None:
    root, _ = tree
    table, _ = export(root, tmp_path, "people")
    assert table.schema.field("valueDecoded").type == pa.struct(
        [
            ("name", pa.string()),
            ("age", pa.int64()),
            ("score", pa.float64()),
            ("tags", pa.list_(pa.string())),
            ("home", pa.struct([("city", pa.string())])),  # through $ref
            ("extra", pa.string()),  # no type: its JSON text
        ]
    )
    ada, bob, bad = table.to_pylist()
    assert ada["valueDecoded"] == {
        "name": "Ada", "age": 36, "score": 2.5, "tags": ["x"], "home": {"city": "London"}, "extra": '{"a":[1]}'
    }  # fmt: skip
    assert bob["valueDecoded"] == {"name": "Bob", "age": 7, "score": None, "tags": None, "home": None, "extra": None}
    assert bad["valueDecoded"] is None and bad["valueDecodeError"] == "$.name: a string expected, found a number"
    assert bad["valueText"] == '{"name":5}'  # the text column: the payload, compact


def test_keys_values_header_framing_and_soft_deleted_versions(tmp_path) -> None:
    written = orders_build.build(str(tmp_path))
    out = tmp_path / "o.parquet"
    r = run_cli(["export", "--key-decoder", "registry", "--value-decoder", "registry",
                 str(tmp_path / "orders-0"), "-o", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.errtext
    assert "schemas from" in r.errtext  # found beside the data, said
    rows = pq.read_table(out).to_pylist()
    for row, w in zip(rows, written, strict=True):
        if w.subject == "orders-value":  # version 1 soft-deleted, the GUID in a header: all decode
            got = row["valueDecoded"]
            assert got["id"] == w.value["id"] and got["amount"] == w.value["amount"]
            assert got["note"] == w.value.get("note", "")
            assert row["valueSchemaId"] == w.schema_id
            assert row["valueText"].startswith('{"id":')  # the console consumer's text, header framing too
        else:  # other subjects' records: not the column's schema, said per record
            assert row["valueDecoded"] is None and row["valueDecodeError"], row
        assert row["keyDecoded"] == w.key


def test_typed_columns_need_each_topics_subject(tree, tmp_path) -> None:
    root, _ = tree
    r = run_cli(["export", "--value-decoder", "registry", str(root), "-o", str(tmp_path / "x.parquet")])
    assert_no_traceback(r)  # _schemas-0 is a topic of the root too: it has no subject
    assert r.exit_code == 2 and "no subject _schemas-value" in r.errtext and "--topic" in r.errtext
    args = ["export", "--key-decoder", "registry", str(root), "--topic", "shop", "-o", str(tmp_path / "x.parquet")]
    r = run_cli(args)
    assert r.exit_code == 2 and "no subject shop-key" in r.errtext
    assert not (tmp_path / "x.parquet").exists()
    r = run_cli(["export", "--value-decoder", "registry", str(root), "--spark", "-o", str(tmp_path / "d")])
    assert r.exit_code == 2 and "need --topic" in r.errtext


def test_several_topics_type_a_struct_of_their_columns(tree, tmp_path) -> None:
    root, _ = tree
    both = tmp_path / "both.parquet"
    r = run_cli(["export", "--value-decoder", "registry", str(root), "--topic", "shop", "--topic", "people",
                 "-o", str(both)])  # fmt: skip
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    table = pq.read_table(both)
    decoded = table.schema.field("valueDecoded").type
    assert [f.name for f in decoded] == ["people", "shop"]  # one field per topic, by name
    alone = {}
    for topic in ("shop", "people"):
        out = tmp_path / f"{topic}.parquet"
        assert (
            run_cli(["export", "--value-decoder", "registry", str(root), "--topic", topic, "-o", str(out)]).exit_code
            == 0
        )
        one = pq.read_table(out)
        assert decoded.field(topic).type == one.schema.field("valueDecoded").type  # each topic's own type
        alone[topic] = one.select(["offset", "valueDecoded", "valueSchemaId", "valueDecodeError"]).to_pylist()
    rows = table.select(["topic", "offset", "valueDecoded", "valueSchemaId", "valueDecodeError"]).to_pylist()
    assert {row["topic"] for row in rows} == {"shop", "people"}
    for row in rows:
        want = alone[row["topic"]][row["offset"]]
        other = "people" if row["topic"] == "shop" else "shop"
        if want["valueDecoded"] is None:
            assert row["valueDecoded"] is None
        else:  # its own topic's field set, the other's null
            assert row["valueDecoded"] == {row["topic"]: want["valueDecoded"], other: None}
        assert (row["valueSchemaId"], row["valueDecodeError"]) == (want["valueSchemaId"], want["valueDecodeError"])
