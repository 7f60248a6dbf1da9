"""JSON Schema ``$ref`` s to other subjects (the registry's ``references``) and Protobuf typed columns of a
message other than the file's first: payloads written by confluent-kafka's own serializers against its
``mock://`` registry, ``_schemas-0`` written as the registry writes it."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("confluent_kafka.schema_registry.json_schema")
pytest.importorskip("jsonschema")
pytest.importorskip("grpc_tools")
pq = pytest.importorskip("pyarrow.parquet")

from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment  # noqa: E402
from tests.conftest import assert_no_traceback, run_cli  # noqa: E402
from tests.registry.build import COMMON_PROTO, ORDER_PROTO, T0, _schema_key, _schema_value  # noqa: E402

ADDRESS = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"street": {"type": "string"}, "zip": {"$ref": "#/definitions/Zip"}},
    "required": ["zip"],
    "definitions": {"Zip": {"type": "integer"}},
}
CUSTOMER = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "home": {"$ref": "address.json"},
        "zips": {"type": "array", "items": {"$ref": "address.json#/definitions/Zip"}},
    },
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple:
    from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    root = tmp_path_factory.mktemp("refs")
    client = SchemaRegistryClient.new_client({"url": "mock://kseg-refs"})
    client.register_schema("address", Schema(json.dumps(ADDRESS), "JSON"))
    refs = [SchemaReference("address.json", "address", 1)]
    client.register_schema("customers-value", Schema(json.dumps(CUSTOMER), "JSON", refs))
    ser = JSONSerializer(None, client, conf={"auto.register.schemas": False, "use.latest.version": True})
    ctx = SerializationContext("customers", MessageField.VALUE)
    good = {"name": "Ada", "home": {"street": "Main", "zip": 12345}, "zips": [1, 2]}
    payloads = [ser(good, ctx)]
    # the serializer validates (against address.json too): a payload breaking the referenced schema is
    # framed by hand with the id the serializer wrote
    payloads.append(payloads[0][:5] + json.dumps({"name": "Bob", "home": {"zip": "x"}}).encode())
    specs = [RecordSpec(None, p, T0 + i) for i, p in enumerate(payloads)]
    write_segment(str(root / "customers-0"), [[build_v2_batch(specs, base_offset=0)]])
    receipts = _protobuf(client, root, str(tmp_path_factory.mktemp("pb")))
    records = [(_schema_key(rs.subject, rs.version), _schema_value(rs, _text(rs))) for rs in _registered(client)]
    schema_specs = [RecordSpec(k, v, T0 + i) for i, (k, v) in enumerate(records)]
    write_segment(str(root / "_schemas-0"), [[build_v2_batch(schema_specs, base_offset=0)]])
    return root, good, receipts


def _registered(client) -> list:
    return sorted(client._store.schema_id_index.values(), key=lambda r: r.schema_id)


def _text(rs) -> str:
    """The schema text the registry stores: a Protobuf schema as its ``.proto`` text (the mock keeps the
    descriptor the Python serializer sent)."""
    if rs.schema.schema_type != "PROTOBUF":
        return rs.schema.schema_str
    import base64

    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto()
    fdp.ParseFromString(base64.b64decode(rs.schema.schema_str))
    return {"common.proto": COMMON_PROTO, "order.proto": ORDER_PROTO}[fdp.name]


def _protobuf(client, root, tmp: str) -> list:
    """``receipts-0``: records of three messages of one file -- ``Receipt`` (index path [1]),
    ``Parcel.Item`` ([0, 0]) and ``Parcel`` ([0]) -- by confluent-kafka's ``ProtobufSerializer``."""
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from google.protobuf import json_format

    from tests.registry.build import compile_protos

    pb = compile_protos(tmp)
    ctx = SerializationContext("receipts", MessageField.VALUE)
    msgs = [pb.Receipt(total_cents=1250), pb.Parcel.Item(sku="S", count=3, labels=["x"]), pb.Parcel(parcel_id="P")]
    msgs.append(pb.Receipt(total_cents=-7))
    conf = {"use.deprecated.format": False}
    payloads = [ProtobufSerializer(type(m), client, conf)(m, ctx) for m in msgs]
    specs = [RecordSpec(None, p, T0 + i) for i, p in enumerate(payloads)]
    write_segment(str(root / "receipts-0"), [[build_v2_batch(specs, base_offset=0)]])
    return [json_format.MessageToDict(m, preserving_proto_field_name=True) for m in msgs]


def test_validate_follows_refs_to_other_subjects(tree) -> None:
    root, good, _ = tree
    log = str(root / "customers-0" / "00000000000000000000.log")
    r = run_cli(["dump", "--value-decoder", "registry", "--format", "json", "--validate", log])
    assert_no_traceback(r)
    assert r.exit_code == 1, r.errtext
    rows = [row for row in map(json.loads, r.text.splitlines()) if row["type"] == "record"]
    assert rows[0]["payload"] == good and "payloadInvalid" not in rows[0]
    # the error is inside the referenced subject's schema: $ref resolved, its own local $ref too
    assert rows[1]["payloadInvalid"] == "$.home.zip: 'x' is not of type 'integer'", rows[1]
    assert "1 payload not matching its schema: $.home.zip: 'x' is not of type 'integer'" in r.errtext


def test_typed_columns_follow_refs_to_other_subjects(tree, tmp_path) -> None:
    root, good, _ = tree
    out = tmp_path / "customers.parquet"
    r = run_cli(["export", "--value-decoder", "registry", str(root), "--topic", "customers", "-o", str(out)])
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    table = pq.read_table(out)
    home = table.schema.field("valueDecoded").type.field("home").type
    assert str(home) == "struct<street: string, zip: int64>"  # the referenced subject's object, typed
    assert str(table.schema.field("valueDecoded").type.field("zips").type) == "list<element: int64>"
    rows = table.select(["valueDecoded", "valueDecodeError"]).to_pylist()
    assert rows[0] == {"valueDecoded": good, "valueDecodeError": None}
    assert (
        rows[1]["valueDecoded"] is None
        and rows[1]["valueDecodeError"] == "$.home.zip: an integer expected, found a string"
    )


def _export(root, out, *args: str):
    r = run_cli(["export", "--value-decoder", "registry", str(root), "--topic", "receipts", "-o", str(out), *args])
    assert_no_traceback(r)
    return r


def test_a_protobuf_column_of_another_message_than_the_first(tree, tmp_path) -> None:
    root, _, receipts = tree
    out = tmp_path / "receipts.parquet"
    r = _export(root, out, "--value-message", "shop.proto.Receipt")  # index path [1]
    assert r.exit_code == 0, r.errtext
    table = pq.read_table(out)
    assert str(table.schema.field("valueDecoded").type) == "struct<total_cents: int64>"
    rows = table.select(["valueDecoded", "valueDecodeError"]).to_pylist()
    assert [row["valueDecoded"] for row in rows] == [{"total_cents": 1250}, None, None, {"total_cents": -7}]
    assert rows[1]["valueDecodeError"] == "message shop.proto.Parcel.Item is not the column's shop.proto.Receipt"
    # a nested message ([0, 0]), named relative to the file's package
    r = _export(root, out, "--value-message", "Parcel.Item", "--force")
    assert r.exit_code == 0, r.errtext
    rows = pq.read_table(out).select(["valueDecoded"]).to_pylist()
    assert rows[1]["valueDecoded"] == {"sku": "S", "count": 3, "labels": ["x"]} == {**receipts[1], "count": 3}
    assert [row["valueDecoded"] for row in rows[::2]] == [None, None]
    # the default stays the file's first message ([0])
    r = _export(root, out, "--force")
    rows = pq.read_table(out).select(["valueDecoded"]).to_pylist()
    assert rows[2]["valueDecoded"]["parcel_id"] == "P" and rows[0]["valueDecoded"] is None
    r = _export(root, out, "--force", "--value-message", "Nope")
    assert r.exit_code == 2 and "no message Nope in the schema" in r.errtext and "shop.proto.Receipt" in r.errtext
    r = _export(root, out, "--force", "--key-message", "Receipt")
    assert r.exit_code == 2 and "--key-message is for --key-decoder registry" in r.errtext
