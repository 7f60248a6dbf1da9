"""Test data for ``--value-decoder registry``: payloads written by confluent-kafka's own serializers
against its ``mock://`` registry, and the ``_schemas`` partition that registry's state would be,
written as Schema Registry writes it (``SchemaRegistrySerializer``: JSON keys and values), into real
segments by :mod:`kseg.testing.writer`.

:func:`build` writes ``<root>/orders-0`` (the data) and ``<root>/_schemas-0`` (the registry's topic)
and returns what was serialized, record by record, for the round-trip checks.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any

from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment

T0 = 1_730_000_000_000

ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "coupon", "type": ["null", "string"], "default": None},
        {"name": "blob", "type": "bytes"},
        {"name": "ratio", "type": "float"},
        {"name": "score", "type": "double"},
    ],
}
ORDER_V2 = {**ORDER_V1, "fields": ORDER_V1["fields"] + [{"name": "note", "type": "string", "default": ""}]}
CUSTOMER = {"type": "record", "name": "Customer", "namespace": "shop", "fields": [{"name": "email", "type": "string"}]}
PAYMENT = {
    "type": "record",
    "name": "Payment",
    "namespace": "shop",
    "fields": [{"name": "payer", "type": "shop.Customer"}, {"name": "cents", "type": "int"}],
}
GONE = {"type": "record", "name": "Gone", "fields": [{"name": "x", "type": "int"}]}
PERSON_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Person",
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "score": {"type": "number"}},
}

COMMON_PROTO = """syntax = "proto3";
package shop.common;

message Address {
  string street_name = 1;
  int32 zip = 2;
}
"""
ORDER_PROTO = """syntax = "proto3";
package shop.proto;

import "common.proto";
import "google/protobuf/timestamp.proto";

message Parcel {
  string parcel_id = 1;
  shop.common.Address ship_to = 2;
  google.protobuf.Timestamp sent_at = 3;
  message Item {
    string sku = 1;
    int64 count = 2;
    repeated string labels = 3;
  }
  repeated Item items = 4;
}

message Receipt {
  int64 total_cents = 1;
}
"""


@dataclass
class Written:
    """One data record: what was serialized and how kseg should see it."""

    offset: int
    value: Any  # what the producer serialized (a dict, or a protobuf message as its JSON dict)
    kind: str  # AVRO, PROTOBUF, JSON, or "unknown" (no schema left: the fallback)
    subject: str | None = None
    version: int | None = None
    schema_id: int | None = None
    key: Any = None
    headers: tuple = ()
    extra: dict = field(default_factory=dict)


def _registry():
    from confluent_kafka.schema_registry import SchemaRegistryClient

    return SchemaRegistryClient.new_client({"url": "mock://kseg-tests"})


def compile_protos(tmp: str):
    """Python classes for :data:`COMMON_PROTO` and :data:`ORDER_PROTO`, compiled by grpc_tools at test time."""
    import importlib.resources

    from grpc_tools import protoc

    src = os.path.join(tmp, "proto")
    os.makedirs(src, exist_ok=True)
    for name, text in (("common.proto", COMMON_PROTO), ("order.proto", ORDER_PROTO)):
        with open(os.path.join(src, name), "w") as f:
            f.write(text)
    include = str(importlib.resources.files("grpc_tools") / "_proto")
    code = protoc.main(["protoc", f"-I{src}", f"-I{include}", f"--python_out={src}", "common.proto", "order.proto"])
    assert code == 0
    sys.path.insert(0, src)
    try:
        for name in ("common_pb2", "order_pb2"):
            sys.modules.pop(name, None)
        importlib.import_module("common_pb2")
        return importlib.import_module("order_pb2")
    finally:
        sys.path.remove(src)


def _schema_key(subject: str, version: int) -> bytes:
    # SchemaKey: @JsonPropertyOrder({"keytype", "subject", "version", "magic"}), magic 1
    return json.dumps({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}).encode()


def _schema_value(rs, schema_text: str, deleted: bool = False) -> bytes:
    s = rs.schema
    value: dict = {"subject": rs.subject, "version": rs.version, "id": rs.schema_id}
    if rs.guid:
        value["md5"] = base64.b64encode(uuid.UUID(rs.guid).bytes).decode()
    if s.schema_type and s.schema_type != "AVRO":
        value["schemaType"] = s.schema_type
    if s.references:
        value["references"] = [{"name": r.name, "subject": r.subject, "version": r.version} for r in s.references]
    value["schema"] = schema_text
    value["deleted"] = deleted
    return json.dumps(value).encode()


def build(root: str) -> list[Written]:
    """Write ``root/orders-0`` and ``root/_schemas-0``; return the data records as serialized."""
    from confluent_kafka.schema_registry import Schema, SchemaReference, header_schema_id_serializer
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = _registry()
    topic = "orders"
    value_ctx = SerializationContext(topic, MessageField.VALUE)
    key_ctx = SerializationContext(topic, MessageField.KEY)
    out: list[Written] = []
    specs: list[RecordSpec] = []

    def add(key: bytes | None, value: bytes, w: Written, headers: tuple = ()) -> None:
        w.offset = len(specs)
        w.headers = headers
        specs.append(RecordSpec(key, value, T0 + len(specs), headers=headers))
        out.append(w)

    import datetime
    import decimal

    def order(i: int, v2: bool) -> dict:
        o = {
            "id": i,
            "name": f"order é{i}",
            "amount": decimal.Decimal(f"{i}12.5{i}"),
            "day": datetime.date(2024, 10, 1 + i),
            "at": datetime.datetime(2024, 10, 27, 3, 33, 20, 100000 + i * 1000, tzinfo=datetime.timezone.utc),
            "uid": uuid.UUID(int=i + 1),
            "tags": ["a", f"t{i}"],
            "attrs": {"n": i, "m": -i},
            "status": "PAID" if i % 2 else "NEW",
            "coupon": None if i % 2 else f"C{i}",
            "blob": bytes([0, 1, 0xFF, i]),
            "ratio": 0.1 * (i + 1),
            "score": 1e10 / (i + 1),
        }
        if v2:
            o["note"] = f"n{i}"
        return o

    key_ser = AvroSerializer(client, '"string"')
    v1 = AvroSerializer(client, json.dumps(ORDER_V1))
    v2 = AvroSerializer(client, json.dumps(ORDER_V2))
    for i in range(2):
        o = order(i, False)
        add(key_ser(f"k{i}", key_ctx), v1(o, value_ctx), Written(0, o, "AVRO", "orders-value", 1, key=f"k{i}"))
    for i in range(2, 4):
        o = order(i, True)
        add(key_ser(f"k{i}", key_ctx), v2(o, value_ctx), Written(0, o, "AVRO", "orders-value", 2, key=f"k{i}"))
    # the id in a header (magic 1 + GUID), the payload bare
    hv2 = AvroSerializer(client, json.dumps(ORDER_V2), conf={"schema.id.serializer": header_schema_id_serializer})
    o = order(4, True)
    hctx = SerializationContext(topic, MessageField.VALUE, [])
    payload = hv2(o, hctx)
    add(None, payload, Written(0, o, "AVRO", "orders-value", 2, extra={"header": True}), tuple(hctx.headers))

    # references across subjects: shop.Payment uses shop.Customer of subject "customer"
    client.register_schema("customer", Schema(json.dumps(CUSTOMER), "AVRO"))
    client.register_schema(
        "payments-value",
        Schema(json.dumps(PAYMENT), "AVRO", [SchemaReference("shop.Customer", "customer", 1)]),
    )
    pay = AvroSerializer(client, None, conf={"auto.register.schemas": False, "use.latest.version": True})
    p = {"payer": {"email": "a@b.c"}, "cents": 1234}
    add(None, pay(p, SerializationContext("payments", MessageField.VALUE)), Written(0, p, "AVRO", "payments-value", 1))

    # a subject hard-deleted later: its records have no schema left
    gone = AvroSerializer(client, json.dumps(GONE))
    add(None, gone({"x": 7}, SerializationContext("gone", MessageField.VALUE)), Written(0, {"x": 7}, "unknown"))

    # JSON Schema
    js = JSONSerializer(json.dumps(PERSON_JSON), client)
    person = {"name": "Ada", "age": 36, "score": 2.5}
    add(
        None,
        js(person, SerializationContext("people", MessageField.VALUE)),
        Written(0, person, "JSON", "people-value", 1),
    )

    # Protobuf, compiled at test time; nested message (index path [0, 0]) and the file's second message
    import tempfile

    from google.protobuf import json_format

    tmp = tempfile.mkdtemp(prefix="kseg-pb-")
    pb = compile_protos(tmp)
    parcel = pb.Parcel(parcel_id="P1", items=[pb.Parcel.Item(sku="S", count=3, labels=["x"])])
    parcel.ship_to.street_name = "Main"
    parcel.ship_to.zip = 12345
    parcel.sent_at.FromSeconds(1_700_000_000)
    conf = {"use.deprecated.format": False}
    for msg in (parcel, parcel.items[0], pb.Receipt(total_cents=0)):
        ser = ProtobufSerializer(type(msg), client, conf)
        ctx = SerializationContext("parcels", MessageField.VALUE)
        expected = json_format.MessageToDict(
            msg, always_print_fields_with_no_presence=True, preserving_proto_field_name=True
        )
        add(None, ser(msg, ctx), Written(0, expected, "PROTOBUF", "parcels-value", None,
                                          extra={"message": msg.DESCRIPTOR.full_name}))  # fmt: skip

    # the GUID and the message-index path in the header, the payload bare
    msg = parcel.items[0]
    ser = ProtobufSerializer(type(msg), client, {**conf, "schema.id.serializer": header_schema_id_serializer})
    hctx = SerializationContext("parcels", MessageField.VALUE, [])
    payload = ser(msg, hctx)
    expected = json_format.MessageToDict(
        msg, always_print_fields_with_no_presence=True, preserving_proto_field_name=True
    )
    w = Written(0, expected, "PROTOBUF", "parcels-value", None, extra={"message": msg.DESCRIPTOR.full_name})
    add(None, payload, w, tuple(hctx.headers))

    data_dir = os.path.join(root, f"{topic}-0")
    write_segment(data_dir, [[build_v2_batch(specs, base_offset=0)]])
    _write_schemas(root, client, out)
    return out


def _write_schemas(root: str, client, written: list[Written]) -> None:
    """``_schemas-0`` from the mock registry's state, as Schema Registry writes the topic."""
    store = client._store  # the mock's in-memory state: every RegisteredSchema by id
    proto_text = {"common.proto": COMMON_PROTO, "order.proto": ORDER_PROTO}
    config = json.dumps({"keytype": "CONFIG", "subject": None, "magic": 0}).encode()
    mode = json.dumps({"keytype": "MODE", "subject": None, "magic": 0}).encode()
    records: list[tuple[bytes, bytes | None]] = [
        (json.dumps({"keytype": "NOOP", "magic": 0}).encode(), None),
        (config, json.dumps({"compatibilityLevel": "BACKWARD"}).encode()),
        (mode, json.dumps({"mode": "READWRITE"}).encode()),
    ]
    by_subject: dict[str, list] = {}
    for rs in sorted(store.schema_id_index.values(), key=lambda r: r.schema_id):
        s = rs.schema
        text = s.schema_str
        if s.schema_type == "PROTOBUF":  # the registry stores the canonical .proto text, not a descriptor
            from google.protobuf import descriptor_pb2

            fdp = descriptor_pb2.FileDescriptorProto()
            fdp.ParseFromString(base64.b64decode(text))
            text = proto_text[fdp.name]
        records.append((_schema_key(rs.subject, rs.version), _schema_value(rs, text)))
        by_subject.setdefault(rs.subject, []).append((rs, text))
    # versions and ids the data records were written with
    ids = {(rs.subject, rs.version): rs.schema_id for rs in store.schema_id_index.values()}
    for w in written:
        if w.kind != "unknown":
            if w.version is None:
                w.version = max(v for (s, v) in ids if s == w.subject)
            w.schema_id = ids[(w.subject, w.version)]
    # orders-value version 1 soft-deleted (its records still decode), then a DELETE_SUBJECT of gone-value
    # and its hard delete (tombstones), and a CLEAR_SUBJECT
    rs1, text1 = by_subject["orders-value"][0]
    records.append((_schema_key("orders-value", 1), _schema_value(rs1, text1, deleted=True)))
    records.append((json.dumps({"keytype": "DELETE_SUBJECT", "subject": "gone-value", "magic": 0}).encode(),
                    json.dumps({"subject": "gone-value", "version": 1}).encode()))  # fmt: skip
    records.append((_schema_key("gone-value", 1), None))
    records.append((json.dumps({"keytype": "CLEAR_SUBJECT", "subject": "gone-value", "magic": 0}).encode(),
                    json.dumps({"subject": "gone-value"}).encode()))  # fmt: skip
    # a context: the same id names another schema in ".staging"
    records.append((json.dumps({"keytype": "CONTEXT", "tenant": "default", "context": ".staging"}).encode(),
                    json.dumps({"tenant": "default", "context": ".staging"}).encode()))  # fmt: skip
    staged = {"subject": ":.staging:orders-value", "version": 1, "id": 1, "schema": '"int"', "deleted": False}
    records.append((_schema_key(":.staging:orders-value", 1), json.dumps(staged).encode()))
    specs = [RecordSpec(k, v, T0 + i) for i, (k, v) in enumerate(records)]
    write_segment(os.path.join(root, "_schemas-0"), [[build_v2_batch(specs, base_offset=0)]])
