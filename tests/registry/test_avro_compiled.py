"""The compiled Avro reader (``kseg._avro``) against the Python reference path (fastavro's reader and the
generated renderer): the same text, byte for byte, on payloads written by confluent-kafka's own
``AvroSerializer`` across every type and logical type, schema evolution and recursion; on damaged
payloads the compiled reader hands the payload back, so the text or the reason is the Python path's."""

from __future__ import annotations

import datetime
import decimal
import json
import math
import random
import struct
import sys
import uuid

import pytest

pytest.importorskip("confluent_kafka.schema_registry.avro")
pytest.importorskip("fastavro")
_avro = pytest.importorskip("kseg._avro")

from kseg.decoders.registry.avro import AvroCodec, java_float_text  # noqa: E402
from kseg.jsonlines import Raw, dumps  # noqa: E402
from tests.conftest import run_cli, run_cli_many  # noqa: E402
from tests.registry.build import ORDER_V1, ORDER_V2, build  # noqa: E402

EVERY = {
    "type": "record",
    "name": "Every",
    "namespace": "t",
    "fields": [
        {"name": "n", "type": "null"},
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "y", "type": "bytes"},
        {"name": "fx", "type": {"type": "fixed", "name": "Four", "size": 4}},
        {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 3}},
        {
            "name": "decf",
            "type": {"type": "fixed", "name": "D8", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 2},
        },
        {"name": "date", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tms", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tus", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "tsms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tsus", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "lts", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "arr", "type": {"type": "array", "items": {"type": "map", "values": ["null", "double"]}}},
        {"name": "nested", "type": {"type": "array", "items": {"type": "array", "items": "t.Four"}}},
        {
            "name": "inner",
            "type": {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": ["null", "t.Color"]}]},
        },
        {"name": "u", "type": ["null", "string", "t.Inner", "t.Four", "t.Color", {"type": "array", "items": "int"}]},
        {"name": "il", "type": ["int", "long"]},
        {"name": "li", "type": ["null", "long", "int"]},
        {"name": "fd", "type": ["float", "double"]},
        {"name": "df", "type": ["double", "float"]},
        {"name": "bm", "type": ["boolean", "bytes", {"type": "map", "values": "string"}]},
        {"name": "empty", "type": {"type": "record", "name": "Empty", "fields": []}},
        {"name": "nulls", "type": {"type": "array", "items": "null"}},
    ],
}
NODE = {
    "type": "record",
    "name": "Node",
    "fields": [
        {"name": "v", "type": "int"},
        {"name": "next", "type": ["null", "Node"]},
        {"name": "kids", "type": {"type": "array", "items": "Node"}},
    ],
}


def _every(i: int, rng: random.Random) -> dict:
    text = "".join(
        rng.choice(["a", "é", "\n", '"', "\\", "\x01", "\x7f", "€", "𝄞", "\t", "\u2028"]) for _ in range(i % 9)
    )
    return {
        "n": None,
        "b": bool(i % 2),
        "i": rng.randint(-(2**31), 2**31 - 1),
        "l": rng.choice([0, -1, 2**63 - 1, -(2**63), rng.randint(-(2**40), 2**40)]),
        "f": rng.choice([0.0, -0.0, 0.1, 1e-7, 3.4e38, 1e7, 123456.7, float("inf"), float("nan"), rng.random()]),
        "d": rng.choice([0.0, -0.0, 1e-3, 9.9999999e-4, 1e16, 5e-324, -1e300, float("-inf"), rng.random() * 1e9]),
        "s": text,
        "y": bytes(rng.randrange(256) for _ in range(i % 7)),
        "fx": bytes([0, 0x22, 0x5C, 0xFF - i % 200]),
        "e": ["RED", "GREEN", "BLUE"][i % 3],
        "dec": decimal.Decimal(f"{rng.randint(-(10**8), 10**8)}.{i % 1000:03d}"),
        "decf": decimal.Decimal(f"-{i}.25"),
        "date": datetime.date(1970, 1, 1) + datetime.timedelta(days=rng.randint(-1000, 30000)),
        "tms": datetime.time(1, 2, 3, 4000),
        "tus": datetime.time(23, 59, 59, 999999),
        "tsms": datetime.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=datetime.timezone.utc),
        "tsus": datetime.datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=datetime.timezone.utc),
        "lts": datetime.datetime(2024, 1, 2, 3, 4, 5),
        "uid": uuid.UUID(int=rng.getrandbits(128)),
        "arr": [{"k": None, "é\n": 2.5}, {}] if i % 2 else [],
        "nested": [[b"abcd"], [], [b"\0\0\0\0", b"\xff\xfe\xfd\xfc"]],
        "inner": {"x": None if i % 2 else "GREEN"},
        "u": [None, "str", ("t.Inner", {"x": "RED"}), ("t.Four", b"wxyz"), ("t.Color", "RED"), [1, -2]][i % 6],
        "il": ("long", 2**40) if i % 2 else ("int", -5),
        "li": [None, ("long", -(2**50)), ("int", 7)][i % 3],
        "fd": ("double", 0.1 + i) if i % 2 else ("float", 0.5),
        "df": ("float", 0.1) if i % 2 else ("double", 1e-300),
        "bm": [True, b"\x00\x80", {"a": "b", "": "é"}][i % 3],
        "empty": {},
        "nulls": [None] * (i % 4),
    }


def _node(depth: int) -> dict:
    if depth == 0:
        return {"v": 0, "next": None, "kids": []}
    return {"v": depth, "next": _node(depth - 1), "kids": [_node(depth - 1), {"v": -1, "next": None, "kids": []}]}


def _serialize(schema: dict, values: list) -> tuple[AvroCodec, list[bytes]]:
    """Payloads written by confluent-kafka's AvroSerializer (mock registry); the codec of their schema."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    client = SchemaRegistryClient.new_client({"url": f"mock://avroc-{schema['name']}"})
    ser = AvroSerializer(client, json.dumps(schema))
    ctx = SerializationContext("t", MessageField.VALUE)
    payloads = [ser(v, ctx)[5:] for v in values]  # after magic 0 and the id
    return AvroCodec(json.dumps(schema), []), payloads


def _same(codec: AvroCodec, payload: bytes) -> str:
    """The compiled reader took ``payload`` and wrote exactly the Python path's text, and, for a JSON row,
    exactly what the row held of that text parsed."""
    text = codec.compiled.decode(payload)
    assert text is not None, payload
    assert text == codec.decode_python(payload)
    _same_row(codec, payload, text)
    return text


def _same_row(codec: AvroCodec, payload: bytes, text: str) -> None:
    """The JSON row's value written by the compiled reader (a :class:`Raw`) is the row the Python path's
    ``text`` parsed gives, byte for byte."""
    row = codec.decode_json(payload)
    assert row is not None, payload
    assert dumps({"payload": Raw(row), "n": 1}) == dumps({"payload": json.loads(text), "n": 1}), payload


def _either(codec: AvroCodec, payload: bytes) -> tuple[str, str]:
    """What ``decode`` gives (compiled first) and what the Python path gives: text or ``!`` + reason."""

    def outcome(f) -> str:
        try:
            return f(payload)
        except Exception as exc:  # noqa: BLE001 - the registry decoder's reason for this payload
            return f"!{type(exc).__name__}: {exc}"

    compiled = outcome(codec.decode)
    if "values that take no byte" in compiled:  # refused: fastavro would build the whole list
        return compiled, compiled
    return compiled, outcome(codec.decode_python)


def test_every_type_and_logical_type_byte_identical() -> None:
    rng = random.Random(35)
    codec, payloads = _serialize(EVERY, [_every(i, rng) for i in range(300)])
    assert codec.compiled is not None
    texts = [_same(codec, p) for p in payloads]
    assert '{"t.Four":"wxyz"}' in "".join(texts) and '{"t.Inner":{"x":{"t.Color":"RED"}}}' in "".join(texts)
    assert '"il":{"int":1099511627776}' in texts[1]  # the renderer's union quirk, kept: an int-typed branch first


def test_orders_of_the_registry_fixture_and_evolution(tmp_path) -> None:
    """The Order records confluent-kafka wrote with both versions of the subject, and the referencing
    Payment schema, decoded from the data segment through the registry decoder's own codecs."""
    from kseg.decoders.registry import open_registry
    from kseg.storage.records import FileRecords  # noqa: F401 - the data is read by the CLI below

    build(str(tmp_path))
    registry, _ = open_registry(str(tmp_path / "_schemas-0"))
    entries = [e for e in registry.store.schemas.values() if e.schema_type == "AVRO"]
    assert len(entries) >= 5
    rng = random.Random(1)
    for version, schema in ((1, ORDER_V1), (2, ORDER_V2)):
        values = []
        for i in range(50):
            o = {
                "id": rng.randint(-(2**62), 2**62),
                "name": f"o{i}é",
                "amount": decimal.Decimal(f"{i}.5{i % 10}"),
                "day": datetime.date(2024, 1, 1),
                "at": datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc),
                "uid": uuid.UUID(int=i),
                "tags": [f"t{j}" for j in range(i % 5)],
                "attrs": {f"k{j}": j * i for j in range(i % 4)},
                "status": "PAID",
                "coupon": None if i % 2 else "c",
                "blob": bytes(range(i % 30)),
                "ratio": rng.random(),
                "score": rng.random() * 10 ** rng.randint(-10, 20),
            }
            if version == 2:
                o["note"] = "n"
            values.append(o)
        codec, payloads = _serialize({**schema, "name": f"Order{version}"}, values)
        for p in payloads:
            _same(codec, p)


def test_recursive_schema() -> None:
    codec, payloads = _serialize(NODE, [_node(d) for d in range(5)])
    for p in payloads:
        _same(codec, p)


def test_float_text_matches_the_renderer() -> None:
    """Java's text of floats and doubles, random bit patterns (every exponent) and edges, in both the
    float and the double form (a union's double may print as a float: the renderer's quirk)."""
    rng = random.Random(7)
    singles = [struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0] for _ in range(4000)]
    doubles = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(4000)]
    edges = [0.0, -0.0, 1e-3, 9.999999e-4, 1e7, 9999999.0, 1e16, 5e-324, 1.7976931348623157e308, 3.4028235e38]
    edges += [9.9999999e-4, 99999999.9, 0.1, 1 / 3, float("nan"), float("inf"), -float("inf")]
    for x in singles + [struct.unpack("<f", struct.pack("<f", x))[0] for x in edges if abs(x) < 3.4e38]:
        assert _avro.float_text(x, True) == java_float_text(x, True), x
    for x in doubles + edges:
        assert _avro.float_text(x, False) == java_float_text(x, False), x
        try:
            expected = java_float_text(x, True)
        except OverflowError:
            expected = None  # the renderer raises: the compiled reader hands the payload back
        assert _avro.float_text(x, True) == expected, x


def test_json_rows_floats_are_the_parsed_texts() -> None:
    """In a JSON row a float is Python's text of the value Java's text reads as (1.0E10 is 10000000000.0):
    random bit patterns of floats and doubles, and doubles printed as floats (the union quirk)."""
    rng = random.Random(8)
    singles = [struct.pack("<I", rng.getrandbits(32)) for _ in range(3000)]
    doubles = [struct.pack("<Q", rng.getrandbits(64)) for _ in range(3000)]
    edges = [0.0, -0.0, 1e-3, 9.999999e-4, 1e7, 1e16, 5e-324, 0.1, float("nan"), float("inf"), -float("inf")]
    for schema, payloads in (
        ("float", singles + [struct.pack("<f", x) for x in edges]),
        ("double", doubles + [struct.pack("<d", x) for x in edges]),
        (["float", "double"], [b"\2" + p for p in doubles[:1000]]),  # the double branch prints as a float
    ):
        codec = AvroCodec(json.dumps(schema), [])
        for p in payloads:
            try:
                text = codec.decode_python(p)
            except (ValueError, OverflowError):
                continue  # the renderer refuses it: the compiled reader hands it back (tested above)
            _same_row(codec, p, text)


def test_the_exponent_is_the_shortest_digits_own() -> None:
    # Java: Double.toString(9.9999999E-4) is "9.9999999E-4" (formatting the exponent from 7 rounded digits
    # gave E-3)
    assert java_float_text(9.9999999e-4, False) == "9.9999999E-4"
    assert java_float_text(99999999.9, False) == "9.99999999E7"
    assert java_float_text(1.5e-5, False) == "1.5E-5"
    assert java_float_text(12345678.0, False) == "1.2345678E7"
    assert java_float_text(0.000512, False) == "5.12E-4"


def _damaged(rng: random.Random, p: bytes) -> bytes:
    b = bytearray(p)
    kind = rng.randrange(6)
    if kind == 0 and b:
        return bytes(b[: rng.randrange(len(b))])  # truncated
    if kind == 1 and b:
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)  # bytes flipped (lengths, varints, indexes)
        return bytes(b)
    if kind == 2:
        return bytes(b) + bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))  # trailing bytes
    if kind == 3 and b:
        i = rng.randrange(len(b))
        return bytes(b[:i]) + b"\xff" * rng.randint(1, 12) + bytes(b[i:])  # a varint past 64 bits
    if kind == 4 and b:
        i = rng.randrange(len(b))
        return bytes(b[:i]) + bytes([rng.choice([0x01, 0x7F, 0x81, 0xFE])]) + bytes(b[i + 1 :])  # negative lengths
    return bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))  # noise


@pytest.mark.parametrize("schema", [EVERY, NODE, ORDER_V2], ids=["every", "recursive", "order"])
def test_damaged_payloads_same_text_or_same_reason(schema) -> None:
    rng = random.Random(len(schema["fields"]))
    if schema is EVERY:
        values = [_every(i, rng) for i in range(40)]
    elif schema is NODE:
        values = [_node(d) for d in range(4)]
    else:
        values = [{**_order_value(i), "note": "x"} for i in range(20)]
    codec, payloads = _serialize(schema, values)
    handed_back = 0
    for n in range(3000):
        bad = _damaged(rng, payloads[n % len(payloads)])
        compiled, python = _either(codec, bad)
        assert compiled == python, bad
        handed_back += not _taken(codec, bad)
        if codec.decode_json(bad) is not None:  # taken for a JSON row too: the same value
            _same_row(codec, bad, python)
    assert handed_back > 500  # the damage reached the reader, and it handed those payloads back


def _taken(codec: AvroCodec, payload: bytes) -> bool:
    """Whether the compiled reader read ``payload`` itself (its text, or its own refusal)."""
    try:
        return codec.compiled.decode(payload) is not None
    except ValueError:
        return True


def _order_value(i: int) -> dict:
    return {
        "id": i,
        "name": "n",
        "amount": decimal.Decimal("1.25"),
        "day": datetime.date(2024, 1, 1),
        "at": datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc),
        "uid": uuid.UUID(int=i),
        "tags": ["a"] * (i % 3),
        "attrs": {"z": i},
        "status": "NEW",
        "coupon": "c",
        "blob": b"\x00\xff",
        "ratio": 0.25,
        "score": math.pi * i,
    }


def _varint(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        if z < 0x80:
            return bytes(out + bytes([z]))
        out.append((z & 0x7F) | 0x80)
        z >>= 7


@pytest.mark.parametrize(
    ("schema", "payload"),
    [
        (
            {"type": "map", "values": "int"},
            _varint(2) + _varint(1) + b"a" + _varint(1) + _varint(1) + b"a" + _varint(2) + _varint(0),
        ),
        ({"type": "array", "items": "null"}, _varint(3) + _varint(0)),
        ("string", _varint(2) + b"\xc3\x28"),  # invalid UTF-8: Python's replacement characters
        ("string", _varint(3) + b"\xed\xa0\x80"),  # a surrogate
        ("string", _varint(-1)),
        ({"type": "array", "items": "int"}, _varint(-2) + _varint(99) + _varint(1) + _varint(2) + _varint(0)),
        ("boolean", b"\x02"),  # fastavro: any byte but 0 is true
        ("int", _varint(2**40)),  # an int past 32 bits: fastavro reads it as a long
        ({"type": "enum", "name": "E", "symbols": ["A"]}, _varint(1)),
        (["null", "int"], _varint(2)),
        (["null", "int"], _varint(-1)),
        ({"type": "fixed", "name": "F", "size": 3}, b"ab"),
    ],
    ids=lambda v: "" if isinstance(v, bytes) else json.dumps(v)[:30],
)
def test_edge_payloads(schema, payload) -> None:
    codec = AvroCodec(json.dumps(schema), [])
    assert codec.compiled is not None
    compiled, python = _either(codec, payload)
    assert compiled == python


def test_items_of_no_byte_are_bounded() -> None:
    """A count of a trillion nulls in six bytes: refused with a reason (fastavro would build the list)."""
    codec = AvroCodec(json.dumps({"type": "array", "items": "null"}), [])
    with pytest.raises(ValueError, match="more than 524288 values that take no byte"):
        codec.decode(_varint(2**40) + _varint(0))
    assert codec.decode(_varint(2**19) + _varint(0)).count("null") == 2**19


def test_the_cli_prints_the_same_with_either_reader(tmp_path) -> None:
    """``dump --value-decoder registry`` on the fixture's data: the compiled reader's text is the Python
    reader's (``KSEG_ENGINE=python``), text and JSON rows."""
    build(str(tmp_path))
    args = ["dump", "--print-data-log", "--key-decoder", "registry", "--value-decoder", "registry"]
    args += ["--schemas", str(tmp_path / "_schemas-0"), str(tmp_path / "orders-0" / "00000000000000000000.log")]
    runs = [[*args, *extra] for extra in ([], ["--format", "json"])]
    for run, p in zip(runs, run_cli_many(runs, env={"KSEG_ENGINE": "python"}), strict=True):
        c = run_cli(run)
        assert c.exit_code == p.exit_code == 0
        assert c.stdout == p.stdout and c.stderr == p.stderr
        assert b"payload: {" in c.stdout or b'"payload":{' in c.stdout


def test_the_cli_damaged_payloads_of_a_known_id(tmp_path) -> None:
    """Payloads of an id the compiled reader already reads, damaged every way: each record's text and the
    summary of reasons on stderr are the Python reader's."""
    from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment

    written = build(str(tmp_path))
    good = next(w for w in written if w.kind == "AVRO" and w.subject == "orders-value" and w.version == 2)
    payload = _record_value(tmp_path / "orders-0", good.offset)
    rng = random.Random(3)
    values = [payload] + [payload[:5] + _damaged(rng, payload[5:]) for _ in range(400)] + [payload]
    specs = [RecordSpec(None, v, 1_730_000_000_000 + i) for i, v in enumerate(values)]
    write_segment(
        tmp_path / "damaged-0", [[build_v2_batch(specs[i : i + 50], base_offset=i)] for i in range(0, 402, 50)]
    )
    args = ["dump", "--print-data-log", "--value-decoder", "registry", "--schemas", str(tmp_path / "_schemas-0")]
    args.append(str(tmp_path / "damaged-0" / "00000000000000000000.log"))
    runs = [[*args, *extra] for extra in ([], ["--format", "json"])]
    for run, p in zip(runs, run_cli_many(runs, env={"KSEG_ENGINE": "python"}), strict=True):
        c = run_cli(run)
        assert c.exit_code == p.exit_code == 0
        assert c.stdout == p.stdout and c.stderr == p.stderr
        assert b"printed as hex" in c.stderr


def _record_value(partition, offset: int) -> bytes:
    """The value of the record at ``offset`` in the partition's first segment, as written."""
    r = run_cli(["dump", "--print-data-log", "--value-decoder", "hex", "--format", "json"]
                       + [str(partition / "00000000000000000000.log")])  # fmt: skip
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    return bytes.fromhex(next(row["payload"] for row in rows if row.get("offset") == offset))


def test_version_says_which_avro_reader_runs() -> None:
    assert "avro reader: c" in run_cli(["--version"]).text
    assert "avro reader: python (KSEG_ENGINE=python)" in run_cli(["--version"], env={"KSEG_ENGINE": "python"}).text


def test_not_built_or_foreign_runs_the_python_reader(monkeypatch) -> None:
    """Where ``kseg._avro`` is not built, belongs to another install or implements another program layout,
    the Python reader runs and ``--version``'s line says why; the text is the same."""
    import types

    from kseg import avro_engine

    codec_c = AvroCodec(json.dumps(NODE), [])
    payload = _serialize(NODE, [_node(2)])[1][0]
    monkeypatch.setitem(sys.modules, "kseg._avro", None)
    assert avro_engine.description().startswith("python (kseg._avro is not built")
    codec = AvroCodec(json.dumps(NODE), [])
    assert codec.compiled is None and codec.decode(payload) == codec_c.decode(payload)
    elsewhere = types.ModuleType("kseg._avro")
    elsewhere.__file__ = "/elsewhere/kseg/_avro.so"
    elsewhere.ABI = avro_engine.ABI  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kseg._avro", elsewhere)
    assert "belongs to another install of kseg" in avro_engine.description()
    older = types.ModuleType("kseg._avro")
    older.__file__ = _avro.__file__
    older.ABI = avro_engine.ABI - 1  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kseg._avro", older)
    assert f"implements ABI {avro_engine.ABI - 1}, this kseg needs {avro_engine.ABI}" in avro_engine.description()
    assert AvroCodec(json.dumps(NODE), []).compiled is None


def test_large_payloads_past_the_buffer() -> None:
    """A string and bytes of megabytes (every escape, every byte value), read three times: the output
    buffer grows past 1 MiB and is given back between payloads."""
    fields = [{"name": "s", "type": "string"}, {"name": "b", "type": "bytes"}]
    codec = AvroCodec(json.dumps({"type": "record", "name": "Big", "fields": fields}), [])
    s = ('é"\\\n\x01𝄞' * 300_000).encode()
    b = bytes(range(256)) * 4000
    payload = _varint(len(s)) + s + _varint(len(b)) + b
    text = _same(codec, payload)
    assert text.startswith('{"s":"é\\"\\\\\\n\\u0001𝄞')
    row = dumps({"payload": json.loads(text), "n": 1})
    for _ in range(2):  # again: the same text and row (the Python path's taken once: it keeps no state)
        assert codec.compiled.decode(payload) == text
        again = codec.decode_json(payload)
        assert again is not None and dumps({"payload": Raw(again), "n": 1}) == row
