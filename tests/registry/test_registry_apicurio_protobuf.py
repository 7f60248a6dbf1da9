"""Apicurio-framed Protobuf payloads: the message named by Apicurio's ``Ref`` or type header.

The messages are serialized by protobuf itself from the test's ``.proto``; the framing around them is
built byte by byte as Apicurio's serializers write it (Apicurio/apicurio-registry, docs/schemas.md):
``ProtobufKafkaSerializer`` (2.x) writes, without headers, magic 0, the 8-byte globalId, then a ``Ref``
message (one field, ``string name = 1``: the message's simple name) length-delimited, then the
message; with headers, the id header and ``apicurio.protobuf.type`` naming the message, the payload the
message alone.  3.x's ``ProtobufSerializer`` writes the ``Ref`` in both cases (``send-type-ref``,
default true); its default framing is magic 0 and a 4-byte contentId.  The deserializers read the type
header first, else the ``Ref``; a ``Ref`` that does not parse means the file's first message, read
from the payload's start.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("google.protobuf")
pytest.importorskip("grpc_tools")
pq = pytest.importorskip("pyarrow.parquet")

from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment  # noqa: E402
from tests.conftest import assert_no_traceback, run_cli  # noqa: E402
from tests.registry.build import T0  # noqa: E402

SHOP = """syntax = "proto3";
package shop.proto;

message Receipt {
  int64 id = 1;
  string note = 2;
  repeated Line lines = 3;
  message Line {
    string sku = 1;
    int32 qty = 2;
  }
}

message Refund {
  int64 receipt = 1;
  double amount = 2;
}
"""
# Apicurio's type reference, as its ref.proto states it: one string field, number 1
REF = 'syntax = "proto3";\npackage apicurio.ref;\nmessage Ref {\n  string name = 1;\n}\n'
GLOBAL, CONTENT = 3001, 12  # the schema's Apicurio globalId and contentId
VALUE = "apicurio.value"


def _long(n: int) -> bytes:
    return n.to_bytes(8, "big", signed=True)  # ByteBuffer.putLong


def _int(n: int) -> bytes:
    return n.to_bytes(4, "big", signed=True)  # ByteBuffer.putInt


def _delimited(data: bytes) -> bytes:
    """``writeDelimitedTo``: the message's length as a varint, then the message."""
    n, out = len(data), bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]) + data)


def _messages() -> dict:
    """The messages serialized by protobuf, the Refs naming them, and the JSON each decodes to."""
    from google.protobuf import json_format

    from kseg.decoders.registry.protobuf import ProtobufCodec

    shop, ref = ProtobufCodec(SHOP, {}), ProtobufCodec(REF, {}, "ref.proto")
    receipt = shop.message_named("Receipt")(id=5, note="é", lines=[{"sku": "a-1", "qty": 2}, {"sku": "b"}])
    refund = shop.message_named("Refund")(receipt=5, amount=2.5)
    bare = shop.message_named("Receipt")(id=5)  # 08 05: read as a Ref, its length runs past the end

    def as_json(m) -> dict:
        return json_format.MessageToDict(m, always_print_fields_with_no_presence=True, preserving_proto_field_name=True)

    def named(name: str) -> bytes:
        return _delimited(ref.message_named("Ref")(name=name).SerializeToString())

    return {
        "receipt": receipt.SerializeToString(),
        "refund": refund.SerializeToString(),
        "bare": bare.SerializeToString(),
        "ref_receipt": named("Receipt"),
        "ref_refund": named("Refund"),
        "ref_nope": named("Nope"),
        "json": {"receipt": as_json(receipt), "refund": as_json(refund), "bare": as_json(bare)},
    }


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("apicurio-protobuf")
    m = _messages()
    g = ((f"{VALUE}.globalId", _long(GLOBAL)),)
    records = [
        # 0, 1: 2.x without headers: magic 0, the 8-byte globalId, the Ref, the message
        (b"\0" + _long(GLOBAL) + m["ref_receipt"] + m["receipt"], ()),
        (b"\0" + _long(GLOBAL) + m["ref_refund"] + m["refund"], ()),
        # 2: 2.x's default, headers: the id and the type header, the payload the message alone
        (m["refund"], g + (("apicurio.protobuf.type", b"Refund"), (f"{VALUE}.msgType", b"shop.proto.Shop$Refund"))),
        # 3: 3.x with headers: the type header, and the Ref before the message all the same
        (m["ref_receipt"] + m["receipt"], g + (("apicurio.protobuf.type", b"Receipt"),)),
        # 4: no Ref that parses: the first message, from the payload's start
        (b"\0" + _long(GLOBAL) + m["bare"], ()),
        # 5: a Ref naming no message of the schema
        (b"\0" + _long(GLOBAL) + m["ref_nope"] + m["refund"], ()),
    ]
    specs = [RecordSpec(None, p, T0 + i, headers=h) for i, (p, h) in enumerate(records)]
    write_segment(str(root / "receipts-0"), [[build_v2_batch(specs, base_offset=0)]])
    # 3.x's defaults: no headers, magic 0 and a 4-byte contentId, the Ref, the message
    three = [RecordSpec(None, b"\0" + _int(CONTENT) + m["ref_refund"] + m["refund"], T0)]
    write_segment(str(root / "refunds-0"), [[build_v2_batch(three, base_offset=0)]])
    schemas = root / "schemas"
    schemas.mkdir()
    (schemas / f"receipts-value-1-{GLOBAL}.proto").write_text(SHOP)
    (schemas / f"refunds-value-1-{CONTENT}.proto").write_text(SHOP)
    return root, m["json"]


def _dump(log, *args: str) -> tuple:
    r = run_cli(["dump", "--value-decoder", "registry", "--format", "json", str(log), *args])
    assert_no_traceback(r)
    return r, [row for row in map(json.loads, r.text.splitlines()) if row["type"] == "record"]


def test_the_message_is_the_one_apicurio_names(tree) -> None:
    root, want = tree
    log = root / "receipts-0" / "00000000000000000000.log"
    r, rows = _dump(log, "--framing", "apicurio", "--schemas", str(root / "schemas"))
    assert r.exit_code == 0, r.errtext
    expected = [want["receipt"], want["refund"], want["refund"], want["receipt"], want["bare"]]
    names = ["Receipt", "Refund", "Refund", "Receipt", "Receipt"]
    for row, value, name in zip(rows[:5], expected, names, strict=True):
        assert row["payload"] == value, row
        assert row["payloadSchema"]["message"] == f"shop.proto.{name}" and row["payloadSchema"]["id"] == GLOBAL
        assert row["payloadSchema"]["framing"] == "apicurio"
    assert rows[0]["payload"]["lines"] == [{"sku": "a-1", "qty": 2}, {"sku": "b", "qty": 0}]
    reason = rows[5]["payloadDecodeError"]
    assert reason == "the payload names message 'Nope', not a top-level message of the schema (Receipt, Refund)"
    assert "1 payload printed as hex: the payload names message 'Nope'" in r.errtext


def test_3x_defaults_a_4_byte_content_id_and_the_ref(tree) -> None:
    root, want = tree
    log = root / "refunds-0" / "00000000000000000000.log"
    r, rows = _dump(log, "--framing", "apicurio4-content", "--schemas", str(root / "schemas"))
    assert r.exit_code == 0, r.errtext
    assert rows[0]["payload"] == want["refund"] and rows[0]["payloadSchema"]["message"] == "shop.proto.Refund"
    r = run_cli(["dump", "--value-decoder", "registry", "--print-data-log", str(log),
                 "--framing", "apicurio4-content", "--schemas", str(root / "schemas")])  # fmt: skip
    assert r.exit_code == 0 and ' payload: {"receipt":"5","amount":2.5}' in r.text, r.text


def test_typed_export_reads_the_named_message(tree, tmp_path) -> None:
    """The column is the first message (``Receipt``): records naming it are typed, a ``Refund`` is a
    decode error naming both."""
    root, want = tree
    out = tmp_path / "r.parquet"
    r = run_cli(["export", "--value-decoder", "registry", str(root), "--topic", "receipts", "-o", str(out),
                 "--framing", "apicurio", "--schemas", str(root / "schemas")])  # fmt: skip
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    rows = pq.read_table(out).to_pylist()
    assert rows[0]["valueDecoded"]["id"] == 5 and rows[0]["valueDecoded"]["lines"][0]["sku"] == "a-1"
    assert rows[3]["valueDecoded"]["note"] == "é" and rows[4]["valueDecoded"]["id"] == 5
    assert rows[1]["valueDecodeError"] == "message shop.proto.Refund is not the column's shop.proto.Receipt"
    assert [row["valueSchemaId"] for row in rows] == [GLOBAL] * 6
