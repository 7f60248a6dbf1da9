"""``--key-decoder registry`` / ``--value-decoder registry`` end to end: payloads written by
confluent-kafka's own serializers, the ``_schemas`` topic as the registry writes it, the real CLI."""

from __future__ import annotations

import io
import json
import struct

import pytest

pytest.importorskip("confluent_kafka.schema_registry.avro")
pytest.importorskip("fastavro")
pytest.importorskip("grpc_tools")

from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment  # noqa: E402
from tests.conftest import assert_no_traceback, run_cli  # noqa: E402
from tests.registry.build import GONE, ORDER_V1, ORDER_V2, T0, Written, build  # noqa: E402
from tests.stores import local


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("registry")
    written = build(str(root))
    return root, written


def _rows(out: str, kind: str = "record") -> list[dict]:
    return [r for r in map(json.loads, out.splitlines()) if r["type"] == kind]


def _avro_back(payload, schema: dict) -> dict:
    """kseg's Avro JSON encoding read back by fastavro's JSON reader (logical types converted)."""
    import fastavro

    return next(iter(fastavro.json_reader(io.StringIO(json.dumps(payload)), fastavro.parse_schema(schema))))


def _float32(x: float) -> float:
    return struct.unpack(">f", struct.pack(">f", x))[0]


def _check(row: dict, w: Written) -> None:
    if w.kind == "unknown":
        assert "payloadSchema" not in row and "unknown schema id" in row["payloadDecodeError"], row
        return
    schema = row["payloadSchema"]
    assert (schema["id"], schema["subject"], schema["version"], schema["type"]) == (
        w.schema_id,
        w.subject,
        w.version,
        w.kind,
    ), row
    if w.kind == "AVRO" and w.subject == "orders-value":
        back = _avro_back(row["payload"], ORDER_V2 if w.version == 2 else ORDER_V1)
        # a float prints as Java's Float.toString: the shortest text that reads back to the same float32
        assert _float32(back.pop("ratio")) == _float32(w.value["ratio"])
        assert back == {k: v for k, v in w.value.items() if k != "ratio"}
        assert ("note" in row["payload"]) == (w.version == 2)  # each record read with its writer schema
    elif w.kind == "PROTOBUF":
        assert row["payload"] == w.value and schema["message"] == w.extra["message"]
    else:
        assert row["payload"] == w.value


def test_dump_json_decodes_every_payload_as_serialized(data) -> None:
    root, written = data
    r = run_cli(["dump", "--key-decoder", "registry", "--value-decoder", "registry", "--format", "json",
                 str(root / "orders-0" / "00000000000000000000.log")])  # fmt: skip
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    rows = _rows(r.text)
    assert [row["offset"] for row in rows] == [w.offset for w in written]
    validator = _record_validator()
    for row, w in zip(rows, written, strict=True):
        _check(row, w)
        assert not [e.message for e in validator.iter_errors(row)], row
        if w.key is not None:
            assert row["key"] == w.key and row["keySchema"]["subject"] == "orders-key"
    # soft-deleted orders-value version 1 still decodes its records; the header framing decodes too
    assert rows[0]["payloadSchema"]["deleted"] is True and "deleted" not in rows[2]["payloadSchema"]
    assert rows[4]["headers"][0]["key"] == "__value_schema_id" and rows[4]["payloadSchema"]["version"] == 2
    # the hard-deleted subject's record: the bytes as hex, the reason in the row and in one note
    gone = next(w for w in written if w.kind == "unknown")
    assert rows[gone.offset]["payload"] == _raw_value(root, gone.offset).hex()
    assert "1 payload printed as hex: unknown schema id" in r.errtext
    assert "schemas from " in r.errtext and "_schemas-0 (beside the data" in r.errtext


def _record_validator():
    """dump's record rows as kseg.schema.json describes them."""
    from importlib import resources

    import jsonschema

    schema = json.loads(resources.files("kseg").joinpath("kseg.schema.json").read_text())
    return jsonschema.Draft202012Validator({**schema, "anyOf": [{"$ref": "#/$defs/dump.record"}]})


def _raw_value(root, offset: int) -> bytes:
    from kseg.storage.records import FileRecords

    with FileRecords(str(root / "orders-0" / "00000000000000000000.log"), store=local()) as f:
        for batch in f.batches():
            for rec in batch.records(1 << 20):
                if rec.offset == offset:
                    return bytes(rec.value)
    raise AssertionError(offset)


def test_dump_text_prints_the_console_consumers_json(data) -> None:
    root, written = data
    r = run_cli(["dump", "--value-decoder", "registry", "--key-decoder", "registry",
                 "--schemas", str(root), str(root / "orders-0" / "00000000000000000000.log")])  # fmt: skip
    assert_no_traceback(r)
    assert r.exit_code == 0
    lines = [ln for ln in r.text.splitlines() if ln.startswith("| offset:")]
    assert len(lines) == len(written)
    assert ' key: "k0" payload: {"id":0,"name":"order é0","amount":"\\u0004â","day":19997,' in lines[0]
    assert '"coupon":{"string":"C0"},"blob":"\\u0000\\u0001ÿ\\u0000","ratio":0.1,"score":1.0E10}' in lines[0]
    assert lines[5].endswith(' payload: {"payer":{"email":"a@b.c"},"cents":1234}')
    assert lines[7].endswith(' payload: {"name":"Ada","age":36,"score":2.5}')
    assert '"sent_at":"2023-11-14T22:13:20Z","items":[{"sku":"S","count":"3","labels":["x"]}]}' in lines[8]
    assert lines[10].endswith(' payload: {"total_cents":"0"}')  # proto3 defaults printed, as the console's
    assert lines[11].endswith(' payload: {"sku":"S","count":"3","labels":["x"]}')  # GUID and index path in a header
    assert "beside the data" not in r.errtext  # --schemas given: no note about finding it


def test_lookups_decode_the_record_they_find(data) -> None:
    root, written = data
    r = run_cli(["lookup-offset", "9", str(root / "orders-0"), "--value-decoder", "registry", "--format", "json"])
    assert r.exit_code == 0, r.errtext
    rec = json.loads(r.text)["record"]
    assert rec["payload"] == written[9].value and rec["payloadSchema"]["message"] == "shop.proto.Parcel.Item"
    r = run_cli(["lookup-time", str(T0 + 4), str(root / "orders-0"), "--value-decoder", "registry"])
    assert r.exit_code == 0 and '"note":"n4"}' in r.text  # the GUID in a header


def test_schemas_context_picks_the_ids_of_another_context(data) -> None:
    root, _ = data
    r = run_cli(["dump", "--key-decoder", "registry", "--value-decoder", "registry", "--schemas-context", ".staging",
                 "--format", "json", str(root / "orders-0" / "00000000000000000000.log")])  # fmt: skip
    assert_no_traceback(r)
    assert r.exit_code == 0
    row = _rows(r.text)[0]
    # id 1 is "int" in .staging: the key "k0" is not an int datum; id 2 lives in the default context only
    assert row["keyDecodeError"] == "2 bytes left after the Avro datum"
    assert (
        row["payloadDecodeError"] == "unknown schema id 2 in context .staging (it is in context .: --schemas-context)"
    )


def test_bad_payloads_fall_back_with_their_reason(data, tmp_path) -> None:
    root, written = data
    avro_id = written[0].schema_id
    proto_id = written[8].schema_id
    values = [
        b"",  # nothing
        b"\x07abc",  # an unknown magic byte
        b"\x00\x00\x00",  # a short id
        bytes([0]) + avro_id.to_bytes(4, "big") + b"\x02",  # a truncated Avro datum
        bytes([0]) + proto_id.to_bytes(4, "big") + b"\x02\x0a",  # index path [5]: no such message
        bytes([0]) + (999).to_bytes(4, "big") + b"{}",  # the broken schema's id
        bytes([0]) + proto_id.to_bytes(4, "big") + b"\x00\x0a\xff",  # a Protobuf field running past the end
        bytes([0]) + written[7].schema_id.to_bytes(4, "big") + b'{"name": ',  # truncated JSON
    ]
    log_dir = tmp_path / "logs"
    import shutil

    shutil.copytree(root / "_schemas-0", log_dir / "_schemas-0")
    broken = {"subject": "broken-value", "version": 1, "id": 999, "schema": '{"type": "record"', "deleted": False}
    key = json.dumps({"keytype": "SCHEMA", "subject": "broken-value", "version": 1, "magic": 1}).encode()
    write_segment(log_dir / "_schemas-0", [[build_v2_batch([RecordSpec(key, json.dumps(broken).encode(), T0)],
                                                           base_offset=100)]], base_offset=100)  # fmt: skip
    specs = [RecordSpec(None, v, T0 + i) for i, v in enumerate(values)]
    write_segment(log_dir / "bad-0", [[build_v2_batch(specs)]])
    r = run_cli(["dump", "--value-decoder", "registry", "--format", "json",
                 str(log_dir / "bad-0" / "00000000000000000000.log")])  # fmt: skip
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    rows = _rows(r.text)
    reasons = [row["payloadDecodeError"] for row in rows]
    assert [row["payload"] for row in rows] == [v.hex() for v in values]
    assert reasons[0] == "empty payload: no schema id"
    assert reasons[1] == "unknown magic byte 7 in the payload (expected 0 or 1: no registry framing)"
    assert reasons[2] == "payload of 3 bytes: magic 0 needs a 4-byte schema id"
    assert reasons[3] == "the Avro datum runs past the end of the 1 bytes after the id"
    assert reasons[4] == "message index path [5] names no message of the schema"
    assert reasons[5].startswith("schema id 999 (AVRO) does not parse: ")
    assert reasons[6].startswith("DecodeError: "), reasons[6]
    assert reasons[7] == "the JSON payload does not parse: Expecting value: line 1 column 10 (char 9)"
    assert r.errtext.count("printed as hex") == 8


@pytest.mark.parametrize(
    "schemas,expected",
    [
        ("missing", "no such file or directory"),
        ("orders-0", "is a schema registry record: not a _schemas log"),
        ("file", "not a directory"),
    ],
)
def test_unreadable_schemas_is_exit_2_with_the_reason(data, schemas: str, expected: str) -> None:
    root, _ = data
    source = {"missing": root / "nope", "orders-0": root / "orders-0",
              "file": root / "orders-0" / "00000000000000000000.log"}[schemas]  # fmt: skip
    r = run_cli(["dump", "--value-decoder", "registry", "--schemas", str(source),
                 str(root / "orders-0" / "00000000000000000000.log")])  # fmt: skip
    assert_no_traceback(r)
    assert r.exit_code == 2 and expected in r.errtext, r.errtext
    assert r.text == ""


def test_registry_without_schemas_anywhere_is_a_usage_error(tmp_path) -> None:
    write_segment(tmp_path / "t-0", [[build_v2_batch([RecordSpec(None, b"\x00\x00\x00\x00\x01", T0)])]])
    r = run_cli(["dump", "--value-decoder", "registry", str(tmp_path / "t-0" / "00000000000000000000.log")])
    assert_no_traceback(r)
    assert r.exit_code == 2 and "needs --schemas" in r.errtext


def test_unknown_hard_deleted_id_named_in_the_note(data) -> None:
    root, written = data
    gone_id = 6  # the mock registry's id of the hard-deleted subject (GONE)
    assert GONE["name"] == "Gone"
    r = run_cli(["lookup-offset", "6", str(root / "orders-0"), "--value-decoder", "registry"])
    assert r.exit_code == 0
    assert f"1 payload printed as hex: unknown schema id {gone_id} in context ." in r.errtext


def test_skip_record_metadata_decodes_with_the_headers_too(data) -> None:
    root, _ = data
    r = run_cli(["dump", "--value-decoder", "registry", "--skip-record-metadata",
                 str(root / "orders-0" / "00000000000000000000.log")])  # fmt: skip
    lines = [ln for ln in r.text.splitlines() if "payload:" in ln]
    assert r.exit_code == 0 and len(lines) == 12
    assert lines[4].startswith('| payload: {"id":4,') or lines[4].startswith(' payload: {"id":4,')  # GUID header


def test_only_what_the_schemas_need_is_imported(tmp_path) -> None:
    """JSON Schema payloads import neither fastavro nor protobuf; a dump without the registry decoder
    imports nothing of it (fast start)."""
    import subprocess
    import sys

    key = json.dumps({"keytype": "SCHEMA", "subject": "p-value", "version": 1, "magic": 1}).encode()
    value = json.dumps({"subject": "p-value", "version": 1, "id": 3, "schemaType": "JSON", "schema": "{}"}).encode()
    write_segment(tmp_path / "_schemas-0", [[build_v2_batch([RecordSpec(key, value, T0)])]])
    write_segment(tmp_path / "p-0", [[build_v2_batch([RecordSpec(None, b'\x00\x00\x00\x00\x03{"a": 1}', T0)])]])
    log = str(tmp_path / "p-0" / "00000000000000000000.log")
    heavy = ("fastavro", "google", "grpc_tools", "kseg.decoders.registry")
    for decoder, expected in (("registry", ["kseg.decoders.registry"]), ("hex", [])):
        code = (
            "import sys, runpy\n"
            f"sys.argv = ['kseg', 'dump', '--value-decoder', {decoder!r}, {log!r}]\n"
            "try:\n    runpy.run_module('kseg', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            f"print(sorted({{m.partition('.')[0] if not m.startswith('kseg') else '.'.join(m.split('.')[:3])"
            f" for m in sys.modules if m.startswith({heavy!r})}}), file=sys.stderr)\n"
        )
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert p.stderr.strip().splitlines()[-1] == repr(expected), p.stderr
        assert ('payload: {"a":1}' in p.stdout) == (decoder == "registry"), p.stdout


def test_schemas_and_data_on_an_object_store(data, s3) -> None:
    """The data and the _schemas topic in a bucket: found beside the data, or named as the log dir's prefix."""
    root, written = data
    s3.upload_tree(root / "orders-0", "registry/b1/data/orders-0")
    s3.upload_tree(root / "_schemas-0", "registry/b1/data/_schemas-0")
    log = s3.uri("registry/b1/data/orders-0/00000000000000000000.log")
    for extra in ([], ["--schemas", s3.uri("registry/b1/data")]):
        r = run_cli(["dump", "--value-decoder", "registry", "--format", "json", *extra, log])
        assert_no_traceback(r)
        assert r.exit_code == 0, r.errtext
        rows = _rows(r.text)
        assert rows[7]["payload"] == written[7].value and rows[8]["payloadSchema"]["type"] == "PROTOBUF"
        assert ("beside the data" in r.errtext) == (not extra)
    r = run_cli(["dump", "--value-decoder", "registry", "--schemas", s3.uri("registry/nothing"), log])
    assert r.exit_code == 2 and "no such prefix" in r.errtext


def test_grep_matches_the_decoded_payload(data) -> None:
    """``kseg grep --value-decoder registry --value-regex``: the regular expression searches the payload as the
    registry decoder prints it (Avro records as JSON), and the rows carry what dump's carry."""
    root, written = data
    expected = [
        w.offset for w in written if w.kind == "AVRO" and isinstance(w.value, dict) and w.value.get("status") == "PAID"
    ]
    assert expected
    r = run_cli(["grep", "--value-decoder", "registry", "--value-regex", '"status":"PAID"', "--format", "json",
                 str(root / "orders-0")])  # fmt: skip
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    rows = _rows(r.text)
    assert [row["offset"] for row in rows] == expected
    assert all(row["payload"]["status"] == "PAID" and row["payloadSchema"]["type"] == "AVRO" for row in rows)
    r = run_cli(["grep", "--value-decoder", "registry", "--value-regex", '"status":"PAID"', str(root / "orders-0")])
    assert r.exit_code == 0 and len(r.text.splitlines()) == len(expected)


def test_grep_where_on_the_decoded_fields(data) -> None:
    """``kseg grep --value-decoder registry --where``: the condition reads the Avro record decoded (its fields by
    name, typed: the long ``id`` a number)."""
    root, written = data
    avro = [w for w in written if w.kind == "AVRO" and isinstance(w.value, dict) and "status" in w.value]
    pick = avro[len(avro) // 2].value["id"]
    expected = [w.offset for w in avro if w.value["status"] == "PAID" or w.value["id"] == pick]
    assert expected
    where = f'value.status == "PAID" or value.id == {pick}'
    r = run_cli(["grep", "--value-decoder", "registry", "--where", where, "--format", "json", str(root / "orders-0")])
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    assert [row["offset"] for row in _rows(r.text)] == expected


def _records_of(log) -> list[tuple]:
    from kseg.storage.records import FileRecords

    with FileRecords(str(log), store=local()) as f:
        return [
            (rec.offset, rec.key, None if rec.value is None else bytes(rec.value), rec.headers)
            for batch in f.batches()
            for rec in batch.records(1 << 20)
        ]


def test_v1_records_and_skip_record_metadata_carry_the_decoded_value_in_json(data, tmp_path) -> None:
    """A 0.10-era producer's records (magic 1, no headers: the id in the payload's framing) and
    ``--skip-record-metadata`` rows carry the decoded value and its schema, as v2 rows do."""
    from kseg.testing.legacy import build_legacy
    from kseg.testing.v2 import RecordSpec as Spec

    root, _ = data
    log = root / "orders-0" / "00000000000000000000.log"
    args = ["--key-decoder", "registry", "--value-decoder", "registry", "--format", "json"]
    schemas = ["--schemas", str(root / "_schemas-0")]
    v2 = {row["offset"]: row for row in _rows(run_cli(["dump", *args, str(log)]).text)}
    plain = [(o, k, v) for o, k, v, hs in _records_of(log) if not hs]
    assert len(plain) >= 8
    old = tmp_path / "orders-0"
    old.mkdir()
    specs = [Spec(None if k is None else bytes(k), v, T0 + i) for i, (_, k, v) in enumerate(plain)]
    (old / "00000000000000000000.log").write_bytes(build_legacy(specs, magic=1))
    decoded = ("key", "keySchema", "keyDecodeError", "payload", "payloadSchema", "payloadDecodeError")

    r = run_cli(["dump", *args, *schemas, str(old / "00000000000000000000.log")])
    assert r.exit_code == 0, r.errtext
    rows = _rows(r.text)
    assert len(rows) == len(plain) and any("payloadSchema" in row for row in rows)
    validator = _record_validator()
    for row, (offset, _, _) in zip(rows, plain, strict=True):
        assert {f: row.get(f) for f in decoded} == {f: v2[offset].get(f) for f in decoded}, row
        assert not [e.message for e in validator.iter_errors(row)], row

    skipped = _rows(run_cli(["dump", *args, "--skip-record-metadata", str(log)]).text)
    assert len(skipped) == len(v2)
    for row in skipped:
        assert {f: row.get(f) for f in decoded} == {f: v2[row["offset"]].get(f) for f in decoded}, row

    found = run_cli(["lookup-offset", "3", str(old), *args, *schemas])
    assert found.exit_code == 0, found.errtext
    record = json.loads(found.text.splitlines()[0])["record"]
    assert {f: record.get(f) for f in decoded} == {f: v2[plain[3][0]].get(f) for f in decoded}, record
