"""Avro values that take no byte (null, an empty record, a zero-size fixed, not chosen by a union): a payload
holding more than 2^20 of them is refused with one reason by either reader, before anything is built (issue
35) -- an array claiming a trillion nulls, or an array of records of many null fields (one byte an item,
each printing every field: 20 KB printed 46 MB).

fastavro would build the whole list (six bytes grew a process past 15 GB), so every test that lets the
Python reader near such a payload runs in a child process with its address space capped: a regression
fails there instead of swapping the machine.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastavro")

from kseg.decoders.registry.avro_bound import MAX_ZERO_WIDTH, REFUSED, needs_bound  # noqa: E402
from kseg.testing.v2 import varint as _varint  # noqa: E402 - Avro longs: zig-zag varints

ROOT = Path(__file__).resolve().parents[2]
CAP = 1 << 30  # the child's address space: a list of 2^40 Nones does not fit
EMPTY = {"type": "record", "name": "Empty", "fields": []}
NULLS = {"type": "record", "name": "N", "fields": [{"name": "n", "type": "null"}]}
ZERO = {"type": "fixed", "name": "Zero", "size": 0}
#: one byte an item (the boolean) and 100 nulls: an array of them is the 20 KB bomb
WIDE = {
    "type": "record",
    "name": "Wide",
    "fields": [{"name": "b", "type": "boolean"}] + [{"name": f"field_{i:03}", "type": "null"} for i in range(100)],
}
SCHEMAS = [
    {"type": "array", "items": "null"},
    {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "s", "type": "string"},
            {"name": "u", "type": ["null", "long"]},
            {"name": "a", "type": {"type": "array", "items": EMPTY}},
            {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        ],
    },
    {"type": "array", "items": {"type": "array", "items": "null"}},
    {"type": "map", "values": {"type": "array", "items": ZERO}},
    ["null", "string", {"type": "array", "items": NULLS}],
    {"type": "array", "items": WIDE},
    {
        "type": "map",
        "values": {
            "type": "record",
            "name": "M",
            "fields": [{"name": "x", "type": ["null", "int"]}, {"name": "n", "type": "null"}],
        },
    },  # fmt: skip
]


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def test_which_schemas_are_walked_first() -> None:
    from fastavro import parse_schema

    for schema in SCHEMAS:
        names: dict = {}
        assert needs_bound(parse_schema(schema, named_schemas=names), names), schema
    for schema in (
        "null",
        {"type": "array", "items": "int"},
        {"type": "array", "items": ["null", "int"]},  # the null a union's index chose took the index's byte
        {"type": "array", "items": ["null", EMPTY]},
        {
            "type": "array",
            "items": {
                "type": "record",
                "name": "One",
                "fields": [{"name": "x", "type": "boolean"}, {"name": "o", "type": ["null", "string"]}],
            },
        },  # fmt: skip
        {"type": "record", "name": "Few", "fields": [{"name": "n", "type": "null"}, {"name": "e", "type": EMPTY}]},
    ):
        names = {}
        assert not needs_bound(parse_schema(schema, named_schemas=names), names), schema


def _payloads(rng: random.Random) -> list[bytes]:
    """Counts around the bound, blocks of negative counts, varints past 64 bits, noise."""
    counts = [0, 1, 3, 10_000, MAX_ZERO_WIDTH // 3 + 1, MAX_ZERO_WIDTH + 1, 2**40, 2**62, -(2**40), -(2**63)]
    pieces = [_varint(c) for c in counts] + [b"\x00", b"\x02", b"\x06abc", b"\xff" * 11 + b"\x01", b"\x01"]
    pieces.append(b"\x01" * 12_000)  # 12,000 items of a byte: Wide's 1.2 million nulls
    out = []
    for _ in range(250):
        out.append(b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 7))))
    out += [_varint(2**40) + _varint(0), _varint(MAX_ZERO_WIDTH) + _varint(0)]
    return out


def fuzz() -> None:
    """Every payload of :func:`_payloads` read by the compiled reader (when built) and by the Python reader
    alone: the same text or the same reason.  Run in a capped child (:func:`test_either_reader_same_outcome`)."""
    from kseg.decoders.registry.avro import AvroCodec

    def outcome(f, payload: bytes) -> str:
        try:
            return f(payload)
        except Exception as exc:  # noqa: BLE001 - the registry decoder's reason for this payload
            return f"!{type(exc).__name__}: {exc}"

    rng = random.Random(35)
    refused = 0
    for schema in SCHEMAS:
        codec = AvroCodec(json.dumps(schema), [])
        for payload in _payloads(rng):
            python = outcome(codec.decode_python, payload)
            assert outcome(codec.decode, payload) == python, (schema, payload)
            refused += python == f"!ValueError: {REFUSED}"
    assert refused > 150, refused
    print("ok", refused)


def test_either_reader_same_outcome() -> None:
    """The compiled reader and the Python reader agree on every payload: text, or reason (the bound's own
    among them, worded as kseg/_avro.c words it)."""
    pytest.importorskip("kseg._avro")
    p = subprocess.run(
        [sys.executable, "-c", "from tests.registry.test_avro_bound import fuzz; fuzz()"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        preexec_fn=_capped,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.startswith("ok")


def test_the_reason_is_the_c_readers() -> None:
    _avro = pytest.importorskip("kseg._avro")
    from kseg.decoders.registry.avro import AvroCodec

    codec = AvroCodec(json.dumps({"type": "array", "items": "null"}), [])
    assert codec.compiled is not None
    with pytest.raises(ValueError) as c:
        codec.compiled.decode(_varint(2**40) + _varint(0))
    assert str(c.value) == REFUSED
    assert _avro.__file__  # the text compared is the built module's


_CHILD = (
    "import re, sys, runpy\n"
    "if sys.argv[1] == 'absent':\n"
    "    sys.modules['kseg._avro'] = None  # as where kseg._avro is not built\n"
    "sys.argv = ['kseg', *sys.argv[2:]]\n"
    "try:\n    runpy.run_module('kseg', run_name='__main__')\n"
    "except SystemExit as e:\n"
    "    sys.stdout.flush()\n"
    "    hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
    "    print('exit', e.code, 'hwm', hwm, file=sys.stderr)\n"
)


def _segment(tmp_path: Path, wide: bool = False) -> tuple[Path, Path]:
    """``nulls-0``: a good payload, then bombs, then one at the bound; a schema directory naming id 7.
    ``wide``: arrays of :data:`WIDE` records (a byte and 100 nulls an item): 20 KB of them, and the most
    items the bound lets through."""
    from kseg.testing.segment import write_segment
    from kseg.testing.v2 import RecordSpec, build_v2_batch

    schemas = tmp_path / "schemas"
    schemas.mkdir()
    items = WIDE if wide else "null"
    schema = {"type": "record", "name": "Nulls", "fields": [{"name": "s", "type": "string"},
              {"name": "a", "type": {"type": "array", "items": items}}]}  # fmt: skip
    (schemas / "nulls-value-1-7.avsc").write_text(json.dumps(schema))
    head = b"\0" + (7).to_bytes(4, "big")
    if wide:
        most = MAX_ZERO_WIDTH // 100  # 5,242 items, 524,200 nulls: read
        values = [
            head + _varint(1) + b"x" + _varint(3) + b"\1\0\1" + _varint(0),
            head + _varint(1) + b"x" + _varint(20_000) + b"\1" * 20_000 + _varint(0),  # the 20 KB bomb
            head + _varint(0) + (_varint(most) + b"\0" * most) * 2 + _varint(0),  # two blocks: past the bound
            head + _varint(0) + _varint(12_000) + b"\0" * 5 + _varint(0),  # claimed, not there: fastavro's reason
            head + _varint(0) + _varint(most) + b"\1" * most + _varint(0),  # at the bound: read
        ]
    else:
        values = [
            head + _varint(1) + b"x" + _varint(3) + _varint(0),
            head + _varint(1) + b"x" + _varint(2**40) + _varint(0),  # a trillion nulls in eight bytes
            head + _varint(0) + _varint(-(2**62)) + _varint(1) + _varint(0),
            head + _varint(0) + (_varint(MAX_ZERO_WIDTH // 2) * 3) + _varint(0),  # three blocks: past the bound
            head + _varint(0) + _varint(MAX_ZERO_WIDTH) + _varint(0),  # at the bound: read
        ]
    specs = [RecordSpec(None, v, 1_730_000_000_000 + i) for i, v in enumerate(values)]
    write_segment(tmp_path / "nulls-0", [[build_v2_batch(specs, base_offset=0)]])
    return tmp_path / "nulls-0" / "00000000000000000000.log", schemas


@pytest.mark.parametrize("wide", [False, True], ids=["nulls", "wide"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_cli_refuses_with_either_reader_in_bounded_memory(tmp_path: Path, fmt: str, wide: bool) -> None:
    """``dump --value-decoder registry`` with the compiled reader, with ``KSEG_ENGINE=python`` and with
    ``kseg._avro`` absent: the same output, the refused records printed as hex with the C reader's
    reason, exit 0, and each child's own peak (VmHWM) under 128 MiB -- the payload at the bound read."""
    log, schemas = _segment(tmp_path, wide)
    args = ["dump", "--print-data-log", "--value-decoder", "registry", "--schemas", str(schemas), str(log)]
    args += ["--format", fmt]
    outputs = []
    for how, env in (("c", {}), ("python", {"KSEG_ENGINE": "python"}), ("absent", {})):
        p = subprocess.run(
            [sys.executable, "-c", _CHILD, how, *args],
            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            capture_output=True,
            preexec_fn=_capped,
            timeout=300,
        )
        last = p.stderr.decode().strip().splitlines()[-1].split()
        assert last[:2] == ["exit", "0"], (how, p.stderr.decode()[-2000:])
        assert int(last[3]) < 128 * 1024, (how, last)
        outputs.append((p.stdout, re.sub(rb"exit 0 hwm \d+\n?", b"", p.stderr)))
    assert outputs[0] == outputs[1] == outputs[2]
    out, err = outputs[0]
    refused = [None, REFUSED, REFUSED, REFUSED, None]
    if wide:
        refused[3] = "the Avro datum runs past the end of the 10 bytes after the id"
    assert f"{refused.count(REFUSED)} payloads printed as hex: {REFUSED}".encode() in err
    if fmt == "json":
        rows = [json.loads(line) for line in out.splitlines() if b'"offset"' in line]
        assert [row.get("payloadDecodeError") for row in rows] == refused
        a = rows[4]["payload"]["a"]
        if wide:
            assert len(a) == MAX_ZERO_WIDTH // 100
            assert a[0] == {"b": True, **{f"field_{i:03}": None for i in range(100)}}
            assert [item["b"] for item in rows[0]["payload"]["a"]] == [True, False, True]
        else:
            assert a == [None] * MAX_ZERO_WIDTH
    else:
        assert out.count(b"payload: {") == 2


def test_typed_export_refuses_in_bounded_memory(tmp_path: Path) -> None:
    """``export`` with typed columns reads with fastavro too: the refused records keep their bytes, a null
    ``valueDecoded`` and the reason; the child's own peak stays under 128 MiB."""
    import pyarrow.parquet as pq

    (tmp_path / "in").mkdir()
    _, schemas = _segment(tmp_path / "in")
    out = tmp_path / "nulls.parquet"
    root = tmp_path / "in"
    args = ["export", "--value-decoder", "registry", "--schemas", str(schemas), str(root), "--topic", "nulls"]
    p = subprocess.run(
        [sys.executable, "-c", _CHILD, "c", *args, "-o", str(out)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        preexec_fn=_capped,
        timeout=300,
    )
    last = p.stderr.decode().strip().splitlines()[-1].split()
    assert last[:2] == ["exit", "0"], p.stderr.decode()[-2000:]
    assert int(last[3]) < 128 * 1024, last
    rows = pq.read_table(out).to_pylist()
    assert [row["valueDecodeError"] for row in rows] == [None, REFUSED, REFUSED, REFUSED, None]
    assert rows[1]["valueDecoded"] is None and rows[4]["valueDecoded"]["a"] == [None] * MAX_ZERO_WIDTH


def test_runs_of_leaf_fields_counted_as_the_c_reader_counts() -> None:
    """A record's run of leaf fields of every kind (null, an empty record, a zero-size fixed, a named
    reference to one) is counted at once by the Python walk: the same payloads read or refused as by the
    compiled reader, at the bound and one item past it."""
    pytest.importorskip("kseg._avro")
    from kseg.decoders.registry.avro import AvroCodec

    mixed = {"type": "record", "name": "Mixed", "fields": [
        {"name": "a", "type": "null"}, {"name": "e", "type": EMPTY}, {"name": "z", "type": ZERO},
        {"name": "b", "type": "boolean"}, {"name": "n", "type": "null"}, {"name": "r", "type": "Empty"}]}  # fmt: skip
    codec = AvroCodec(json.dumps({"type": "array", "items": mixed}), [])
    most = MAX_ZERO_WIDTH // 5  # five leaves an item
    outcomes = []
    for items, data in ((most, most), (most + 1, most + 1), (most + 1, 3), (2, 2)):
        payload = _varint(items) + b"\x01" * data + _varint(0)
        got = []
        for f in (codec.decode_python, codec.decode):
            try:
                got.append(f(payload))
            except ValueError as exc:
                got.append(f"!{exc}")
        assert got[0] == got[1], (items, data)
        outcomes.append(got[0])
    assert outcomes[0].count('"b":true') == most
    assert outcomes[1] == f"!{REFUSED}"
    assert outcomes[2].startswith("!the Avro datum runs past the end")
    assert outcomes[3].count('"b":true') == 2
