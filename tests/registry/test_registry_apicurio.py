"""``--framing apicurio...``: payloads framed as Apicurio Registry's serdes frame them, decoded from a
directory of schema files named by Apicurio's ids and from a registry URL answering its ccompat API.

The serialized data (the Avro datum, the JSON document) is written by confluent-kafka's own
serializers against its ``mock://`` registry, its Confluent prefix taken off; the Apicurio framing
around it is built byte by byte from Apicurio's serializer (Apicurio/apicurio-registry,
``serdes/serde-common``): ``AbstractKafkaSerializer.serialize`` writes, with headers enabled (2.x's
default), ``DefaultHeadersHandler.writeHeaders``' header ``apicurio.value.globalId`` (or
``apicurio.value.contentId``) holding the id as an 8-byte big-endian long and the data alone as the
payload; without headers, ``MAGIC_BYTE`` (0), ``DefaultIdHandler.writeId``'s 8-byte long (or
``Legacy4ByteIdHandler``'s 4-byte int), then the data.  ``AvroKafkaSerializer`` adds the header
``apicurio.value.encoding`` (``BINARY``) beside the id header.
"""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer

import pytest

pytest.importorskip("confluent_kafka.schema_registry.avro")
pytest.importorskip("fastavro")
pq = pytest.importorskip("pyarrow.parquet")

from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment  # noqa: E402
from tests.conftest import assert_no_traceback, run_cli  # noqa: E402
from tests.registry.build import T0  # noqa: E402

ITEM_V1 = {
    "type": "record",
    "name": "Item",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}],
}
TAGS = {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []}  # added with a default
ITEM_V2 = {**ITEM_V1, "fields": ITEM_V1["fields"] + [TAGS]}
PERSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
}
GLOBAL_V1, GLOBAL_V2, GLOBAL_PERSON = 1001, (1 << 32) + 5, 1002  # Apicurio globalIds (longs)
CONTENT_V1 = 7  # the contentId of ITEM_V1's text


def _long(n: int) -> bytes:
    return n.to_bytes(8, "big", signed=True)  # ByteBuffer.putLong


def _int(n: int) -> bytes:
    return n.to_bytes(4, "big", signed=True)  # ByteBuffer.putInt


def _data() -> tuple[bytes, bytes, bytes, dict, dict, dict]:
    """Avro datums of both versions and a JSON document, as confluent-kafka's serializers write them
    (without their 5-byte Confluent prefix), and the values they hold."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient.new_client({"url": "mock://kseg-apicurio"})
    v1 = {"id": 21, "name": "pen"}
    v2 = {"id": 22, "name": "ink", "tags": ["blue", "x"]}
    person = {"name": "Ada", "age": 36}
    ctx = SerializationContext("items", MessageField.VALUE)
    a1 = AvroSerializer(client, json.dumps(ITEM_V1))(v1, ctx)
    a2 = AvroSerializer(client, json.dumps(ITEM_V2))(v2, ctx)
    js = JSONSerializer(json.dumps(PERSON), client)(person, SerializationContext("people", MessageField.VALUE))
    assert a1[:1] == a2[:1] == js[:1] == b"\0"
    return a1[5:], a2[5:], js[5:], v1, v2, person


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("apicurio")
    a1, a2, js, v1, v2, person = _data()
    value = "apicurio.value"
    records = [
        # 0: headers disabled, DefaultIdHandler: magic 0, 8-byte globalId, the datum
        (b"\0" + _long(GLOBAL_V1) + a1, (), v1),
        # 1: 2.x's default: the globalId header and the encoding header, the payload the datum alone
        (a1, ((f"{value}.globalId", _long(GLOBAL_V1)), (f"{value}.encoding", b"BINARY")), v1),
        # 2: a globalId past 32 bits, in the payload
        (b"\0" + _long(GLOBAL_V2) + a2, (), v2),
        # 3: JSON Schema (JsonSchemaKafkaSerializer writes the document's bytes), id in the header
        (js, ((f"{value}.globalId", _long(GLOBAL_PERSON)),), person),
        # 4: apicurio.registry.use-id=contentId: the contentId header
        (a1, ((f"{value}.contentId", _long(CONTENT_V1)), (f"{value}.encoding", b"BINARY")), v1),
        # 5: a globalId no schema file has
        (b"\0" + _long(999) + a1, (), None),
    ]
    specs = [RecordSpec(None, p, T0 + i, headers=tuple((k, v) for k, v in h)) for i, (p, h, _) in enumerate(records)]
    write_segment(str(root / "items-0"), [[build_v2_batch(specs, base_offset=0)]])
    legacy = [RecordSpec(None, b"\0" + _int(GLOBAL_V1) + a1, T0)]  # Legacy4ByteIdHandler: 4-byte globalId
    write_segment(str(root / "legacy-0"), [[build_v2_batch(legacy, base_offset=0)]])
    by_global = root / "by-global"
    by_global.mkdir()
    (by_global / f"items-value-1-{GLOBAL_V1}.avsc").write_text(json.dumps(ITEM_V1))
    (by_global / f"items-value-2-{GLOBAL_V2}.avsc").write_text(json.dumps(ITEM_V2))
    (by_global / f"people-value-1-{GLOBAL_PERSON}.json").write_text(json.dumps(PERSON))
    by_content = root / "by-content"
    by_content.mkdir()
    (by_content / f"items-value-1-{CONTENT_V1}.avsc").write_text(json.dumps(ITEM_V1))
    return root, [value for _, _, value in records]


def _dump(log, *args: str) -> tuple:
    r = run_cli(["dump", "--value-decoder", "registry", "--format", "json", str(log), *args])
    assert_no_traceback(r)
    return r, [row for row in map(json.loads, r.text.splitlines()) if row["type"] == "record"]


def test_apicurio_framings_decode_what_was_serialized(tree) -> None:
    root, values = tree
    r, rows = _dump(root / "items-0" / "00000000000000000000.log", "--framing", "apicurio",
                    "--schemas", str(root / "by-global"))  # fmt: skip
    assert r.exit_code == 0, r.errtext
    for row, want in zip(rows[:4], values, strict=False):
        assert row["payload"] == want, row
        assert row["payloadSchema"]["framing"] == "apicurio"
    assert [row["payloadSchema"]["id"] for row in rows[:4]] == [GLOBAL_V1, GLOBAL_V1, GLOBAL_V2, GLOBAL_PERSON]
    assert rows[2]["payloadSchema"]["version"] == 2 and rows[3]["payloadSchema"]["type"] == "JSON"
    # the contentId header under a globalId framing: the reason names both, never a guess
    assert "apicurio.value.contentId" in rows[4]["payloadDecodeError"]
    assert "--framing apicurio reads globalIds" in rows[4]["payloadDecodeError"]
    assert rows[5]["payloadDecodeError"] == (
        "unknown schema Apicurio globalId 999 (magic 0 + 8-byte id, --framing apicurio) in context ."
    )
    assert "payloadSchema" not in rows[5] and rows[5]["payload"].startswith("00")  # the fallback: hex
    assert "1 payload printed as hex: unknown schema Apicurio globalId 999" in r.errtext
    # the contentId framing reads the contentId header, with schema files named by contentIds
    r, rows = _dump(root / "items-0" / "00000000000000000000.log", "--framing", "apicurio-content",
                    "--schemas", str(root / "by-content"))  # fmt: skip
    assert rows[4]["payload"] == values[4] and rows[4]["payloadSchema"]["framing"] == "apicurio-content"
    assert "apicurio.value.globalId" in rows[1]["payloadDecodeError"]
    assert "Apicurio contentId 1001 (magic 0 + 8-byte id" in rows[0]["payloadDecodeError"]


def test_a_4_byte_apicurio_id_is_read_by_the_framing_named(tree) -> None:
    root, values = tree
    log = root / "legacy-0" / "00000000000000000000.log"
    r, rows = _dump(log, "--framing", "apicurio4", "--schemas", str(root / "by-global"))
    assert r.exit_code == 0 and rows[0]["payload"] == values[0], r.errtext
    assert rows[0]["payloadSchema"]["framing"] == "apicurio4"
    _, rows = _dump(log, "--framing", "apicurio", "--schemas", str(root / "by-global"))  # 8 bytes: not this one
    assert "payloadSchema" not in rows[0] and "8-byte id, --framing apicurio" in rows[0]["payloadDecodeError"]


def test_confluent_framing_says_when_a_record_looks_apicurio_framed(tree) -> None:
    root, _ = tree
    r, rows = _dump(root / "items-0" / "00000000000000000000.log", "--schemas", str(root / "by-global"))
    assert r.exit_code == 0, r.errtext
    assert rows[0]["payloadDecodeError"].endswith("(an Apicurio 8-byte id? --framing apicurio)")
    assert (
        "the record carries Apicurio's header apicurio.value.globalId: --framing apicurio"
        in (rows[1]["payloadDecodeError"])
    )


def test_apicurio_ids_are_not_a_schemas_log_ids(tmp_path, tree) -> None:
    from tests.registry.build import build

    build(str(tmp_path))
    r, _ = _dump(tmp_path / "orders-0" / "00000000000000000000.log", "--framing", "apicurio")
    assert r.exit_code == 2 and "Apicurio's ids are not the ids of a _schemas log" in r.errtext
    assert len(r.errtext.strip().splitlines()) == 1
    root, _ = tree
    r, _ = _dump(root / "items-0" / "00000000000000000000.log", "--framing", "kafka")
    assert r.exit_code == 2 and "--framing" in r.errtext


@pytest.fixture
def ccompat(tree):
    """Apicurio's ccompat API (``/apis/ccompat/v7``) in legacy id mode: its ids are globalIds."""
    from tests.registry.test_registry_sources import Registry

    answers = [
        {"subject": "items-value", "version": 1, "id": GLOBAL_V1, "schema": json.dumps(ITEM_V1)},
        {"subject": "items-value", "version": 2, "id": GLOBAL_V2, "schema": json.dumps(ITEM_V2)},
        {"subject": "people-value", "version": 1, "id": GLOBAL_PERSON, "schema": json.dumps(PERSON),
         "schemaType": "JSON"},
    ]  # fmt: skip
    Registry.answers, Registry.fail, Registry.asked = answers, set(), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_ccompat_url_decodes_as_the_files(tree, ccompat) -> None:
    root, _ = tree
    log = root / "items-0" / "00000000000000000000.log"
    _, by_url = _dump(log, "--framing", "apicurio", "--schemas", ccompat)
    _, by_files = _dump(log, "--framing", "apicurio", "--schemas", str(root / "by-global"))
    assert [r["payload"] for r in by_url] == [r["payload"] for r in by_files]
    ids = [r.get("payloadSchema", {}).get("id") for r in by_url]
    assert ids[:4] == [GLOBAL_V1, GLOBAL_V1, GLOBAL_V2, GLOBAL_PERSON]


def test_export_typed_columns_with_an_apicurio_framing(tree, tmp_path) -> None:
    root, values = tree
    out = tmp_path / "items.parquet"
    r = run_cli(["export", "--value-decoder", "registry", "--framing", "apicurio", "--schemas",
                 str(root / "by-global"), str(root), "--topic", "items", "-o", str(out)])  # fmt: skip
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    table = pq.read_table(out)
    assert str(table.schema.field("valueSchemaId").type) == "int64"  # Apicurio's ids are longs
    rows = table.select(["valueDecoded", "valueSchemaId", "valueDecodeError"]).to_pylist()
    assert [row["valueSchemaId"] for row in rows] == [GLOBAL_V1, GLOBAL_V1, GLOBAL_V2, GLOBAL_PERSON, None, 999]
    # version 1's records resolved to the column's version 2 (its field added with a default: [] for them)
    decoded = [row["valueDecoded"] for row in rows[:3]]
    assert decoded == [{**values[0], "tags": []}, {**values[1], "tags": []}, values[2]]
    assert "is JSON" in rows[3]["valueDecodeError"] and "globalIds" in rows[4]["valueDecodeError"]


def test_grep_searches_apicurio_framed_payloads_decoded(tree) -> None:
    root, _ = tree
    args = ["grep", str(root / "items-0"), "--value-decoder", "registry", "--schemas", str(root / "by-global")]
    r = run_cli([*args, "--framing", "apicurio", "--value-regex", '"name":"ink"', "--format", "json"])
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    rows = [row for row in map(json.loads, r.text.splitlines()) if row["type"] == "record"]
    assert [row["offset"] for row in rows] == [2] and rows[0]["payloadSchema"]["id"] == GLOBAL_V2
    r = run_cli([*args, "--value-regex", '"name":"ink"'])  # Confluent's framing: no payload decodes
    assert r.exit_code == 1, r.errtext
