"""Test data for the typed columns of ``export`` and the DataFrame source: three topics written by
confluent-kafka's own serializers against a ``mock://`` registry -- ``shop`` (Avro, two versions of
one subject, a field added with a default; unions, logical types, fixed, maps of records), ``parcels``
(Protobuf, two versions, a field added; nested messages, a map, an enum, well-known types) and
``people`` (JSON Schema) -- each with a payload no decoder can read, and ``_schemas-0`` as the
registry writes it (:mod:`tests.registry.build`'s rules).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import os
import uuid
from dataclasses import dataclass

from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment
from tests.registry.build import T0, _schema_key, _schema_value

SHOP_V1 = {
    "type": "record",
    "name": "Sale",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 3}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "open", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "close", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["IN", "OUT"]}},
        {"name": "code", "type": ["null", "int", "string"], "default": None},
        {
            "name": "lines",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Line",
                    "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}],
                },
            },
        },
        {"name": "by_store", "type": {"type": "map", "values": "shop.Line"}},
        {"name": "maybe", "type": ["null", "shop.Line"], "default": None},
        {"name": "ratio", "type": "float"},
        {"name": "ok", "type": "boolean"},
    ],
}
SHOP_V2 = {**SHOP_V1, "fields": SHOP_V1["fields"] + [{"name": "channel", "type": "string", "default": "web"}]}

PEOPLE = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Person",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "score": {"type": ["number", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "home": {"$ref": "#/definitions/Address"},
        "extra": {},
    },
    "definitions": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
}

PARCEL_V1 = """syntax = "proto3";
package typed;

import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

enum Speed {
  SLOW = 0;
  FAST = 1;
}

message Parcel {
  string id = 1;
  int64 weight = 2;
  uint64 big = 3;
  Speed speed = 4;
  repeated Item items = 5;
  map<string, int32> counts = 6;
  google.protobuf.Timestamp sent = 7;
  google.protobuf.Int64Value maybe = 8;
  optional string note = 9;
  bytes raw = 10;
  message Item {
    string sku = 1;
    double price = 2;
  }
}
"""
PARCEL_V2 = PARCEL_V1.replace("  bytes raw = 10;\n", "  bytes raw = 10;\n  string courier = 11;\n")


@dataclass
class Typed:
    topic: str
    offset: int
    value: object  # what the producer serialized; None for the payload no decoder reads
    schema_id: int | None


def _client():
    from confluent_kafka.schema_registry import SchemaRegistryClient

    return SchemaRegistryClient.new_client({"url": "mock://kseg-typed"})


def _sale(i: int, v2: bool) -> dict:
    s = {
        "id": i,
        "price": decimal.Decimal(f"{i}1.25{i}"),
        "day": datetime.date(2024, 1, 1 + i),
        "open": datetime.time(8, 30, i),
        "close": datetime.time(17, 0, 0, 123456),
        "at": datetime.datetime(2024, 5, 1, 12, 0, i, 654321, tzinfo=datetime.timezone.utc),
        "local": datetime.datetime(2024, 5, 1, 14, 0, i, 5000),
        "uid": uuid.UUID(int=100 + i),
        "hash": bytes([i, 1, 2, 3]),
        "kind": "OUT" if i % 2 else "IN",
        "code": [None, 42, "X9"][i % 3],
        "lines": [{"sku": f"s{i}", "qty": i + 1}],
        "by_store": {"paris": {"sku": "p", "qty": 2}},
        "maybe": None if i % 2 else {"sku": "m", "qty": 1},
        "ratio": 0.5,
        "ok": bool(i % 2),
    }
    if v2:
        s["channel"] = f"app{i}"
    return s


def compile_parcels(tmp: str, text: str, name: str):
    """The ``Parcel`` class of ``text``, in a descriptor pool of its own (two versions of one file)."""
    import importlib.resources

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from grpc_tools import protoc

    src = os.path.join(tmp, name)
    os.makedirs(src, exist_ok=True)
    with open(os.path.join(src, "parcel.proto"), "w") as f:
        f.write(text)
    include = str(importlib.resources.files("grpc_tools") / "_proto")
    out = os.path.join(src, "set.pb")
    args = ["protoc", f"-I{src}", f"-I{include}", "--include_imports", f"--descriptor_set_out={out}", "parcel.proto"]
    assert protoc.main(args) == 0
    fds = descriptor_pb2.FileDescriptorSet()
    with open(out, "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fdp in fds.file:
        pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("typed.Parcel"))


def build(root: str, answers: list | None = None) -> list[Typed]:
    """Write ``root/{shop,parcels,people}-0`` and ``root/_schemas-0``; return what was serialized.
    ``answers``: filled with the registry's ``GET /subjects/{s}/versions/{v}`` answers, one a schema."""
    import tempfile

    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = _client()
    out: list[Typed] = []

    def topic(name: str, payloads: list[tuple[bytes, object]]) -> None:
        specs = [RecordSpec(None, p, T0 + i) for i, (p, _) in enumerate(payloads)]
        write_segment(os.path.join(root, f"{name}-0"), [[build_v2_batch(specs, base_offset=0)]])
        for i, (p, v) in enumerate(payloads):
            sid = int.from_bytes(p[1:5], "big") if p[:1] == b"\0" and len(p) >= 5 else None
            out.append(Typed(name, i, v, sid))

    ctx = SerializationContext("shop", MessageField.VALUE)
    v1, v2 = AvroSerializer(client, json.dumps(SHOP_V1)), AvroSerializer(client, json.dumps(SHOP_V2))
    sales = [_sale(0, False), _sale(1, False), _sale(2, True), _sale(3, True)]
    shop = [((v2 if "channel" in s else v1)(s, ctx), s) for s in sales]
    shop.append((shop[0][0][:5] + b"\x02", None))  # a datum cut short: no decoder reads it
    topic("shop", shop)

    tmp = tempfile.mkdtemp(prefix="kseg-typed-")
    parcel1, parcel2 = compile_parcels(tmp, PARCEL_V1, "v1"), compile_parcels(tmp, PARCEL_V2, "v2")
    conf = {"use.deprecated.format": False}
    pctx = SerializationContext("parcels", MessageField.VALUE)
    p1 = parcel1(id="A", weight=-5, big=(1 << 64) - 1, speed=1, counts={"x": 3})
    p1.items.add(sku="i1", price=2.5)
    p1.sent.FromSeconds(1_700_000_000)
    p1.maybe.value = 7
    p2 = parcel2(id="B", note="fragile", courier="DHL", raw=b"\x00\xff")
    parcels = [(ProtobufSerializer(parcel1, client, conf)(p1, pctx), p1)]
    parcels.append((ProtobufSerializer(parcel2, client, conf)(p2, pctx), p2))
    parcels.append((parcels[0][0][:6] + b"\xff\xff", None))  # a corrupt message
    topic("parcels", parcels)

    js = JSONSerializer(json.dumps(PEOPLE), client)
    jctx = SerializationContext("people", MessageField.VALUE)
    ada = {"name": "Ada", "age": 36, "score": 2.5, "tags": ["x"], "home": {"city": "London"}, "extra": {"a": [1]}}
    bob = {"name": "Bob", "age": 7}
    people = [(js(ada, jctx), ada), (js(bob, jctx), bob)]
    people.append((people[0][0][:5] + b'{"name": 5}', None))  # does not fit its schema (a hand-framed payload)
    topic("people", people)

    made = _schemas(root, client, {"v1": PARCEL_V1, "v2": PARCEL_V2})
    if answers is not None:
        answers.extend(made)
    return out


def _schemas(root: str, client, protos: dict[str, str]) -> list[dict]:
    from google.protobuf import descriptor_pb2

    texts = iter(protos.values())
    records, answers = [], []
    for rs in sorted(client._store.schema_id_index.values(), key=lambda r: r.schema_id):
        text = rs.schema.schema_str
        if rs.schema.schema_type == "PROTOBUF":  # the registry keeps .proto text: the versions in order
            fdp = descriptor_pb2.FileDescriptorProto()
            fdp.ParseFromString(base64.b64decode(text))
            text = next(texts)
        records.append((_schema_key(rs.subject, rs.version), _schema_value(rs, text)))
        answer = {"subject": rs.subject, "version": rs.version, "id": rs.schema_id, "schema": text}
        if rs.schema.schema_type != "AVRO":
            answer["schemaType"] = rs.schema.schema_type
        answers.append(answer)
    specs = [RecordSpec(k, v, T0 + i) for i, (k, v) in enumerate(records)]
    write_segment(os.path.join(root, "_schemas-0"), [[build_v2_batch(specs, base_offset=0)]])
    return answers
