"""Protobuf payloads of many empty repeated messages: each takes two bytes yet prints every field of its
type with its default; past 2^19 such fields in a payload it is refused with a reason before protobuf
parses it (issue 35).  The CLI runs in a child with its address space capped and its own peak read."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("google.protobuf")
pytest.importorskip("grpc_tools")

from kseg.decoders.registry.protobuf import ProtobufCodec  # noqa: E402
from kseg.decoders.registry.protobuf_bound import MAX_DEFAULTS, REFUSED  # noqa: E402
from kseg.testing.v2 import uvarint as _varint  # noqa: E402 - protobuf: unsigned varints
from tests.registry.test_avro_bound import _CHILD, ROOT, _capped  # noqa: E402

WIDE = "\n".join(f"  int32 f{i} = {i + 1};" for i in range(50))
PROTO = f"""syntax = "proto3";
message Outer {{
  repeated Inner items = 1;
  string name = 2;
  map<string, Inner> by_name = 3;
}}
message Inner {{
{WIDE}
  repeated Inner children = 51;
}}
"""
EMPTY = b"\x0a\x00"  # items = 1: an Inner of zero bytes


def _item(i: int) -> bytes:
    """An Inner with its 50 int32 fields present: one default printed (``children``)."""
    body = b"".join(_varint((n + 1) << 3) + bytes([(i + n) % 100]) for n in range(50))
    return b"\x0a" + _varint(len(body)) + body


def test_many_empty_messages_are_refused_and_the_rest_read() -> None:
    codec = ProtobufCodec(PROTO, {})
    too_many = MAX_DEFAULTS // 51 + 1  # an empty Inner prints 51 defaults (50 fields and children)
    with pytest.raises(ValueError) as e:
        codec.decode(EMPTY * too_many, [0])
    assert str(e.value) == REFUSED
    text, name = codec.decode(EMPTY * (too_many - 1), [0])
    assert name == "Outer" and json.loads(text)["items"][0] == {**{f"f{i}": 0 for i in range(50)}, "children": []}
    # many present fields are not defaults: a long payload of full items is read
    data = b"".join(_item(i) for i in range(3000))
    items = json.loads(codec.decode(data, [0])[0])["items"]
    assert len(items) == 3000 and items[1]["f49"] == 50


def test_the_walk_goes_through_nesting_and_groups_of_unknown_fields() -> None:
    codec = ProtobufCodec(PROTO, {})
    child = b"\x9a\x03\x00"  # children = 51, length-delimited, empty
    inner = child * (MAX_DEFAULTS // 51 + 1)
    with pytest.raises(ValueError, match="fields that take no byte"):
        codec.decode(b"\x0a" + _varint(len(inner)) + inner, [0])
    unknown_group = b"\xa3\x06" + b"\x08\x01" + b"\xa4\x06"  # field 100: a group, skipped by protobuf
    text, _ = codec.decode(unknown_group + EMPTY, [0])
    assert len(json.loads(text)["items"]) == 1


def test_damaged_payloads_keep_protobufs_own_reason() -> None:
    """The walk stops where the wire data is malformed: protobuf's parser gives the same reason as with
    no walk at all."""
    codec = ProtobufCodec(PROTO, {})
    codec.message_class([0])
    rng = random.Random(35)
    good = b"\x12\x03abc" + b"".join(_item(i) for i in range(1000)) + EMPTY * (MAX_DEFAULTS // 51 + 1)
    plain = ProtobufCodec(PROTO, {})
    plain.message_class([0])
    plain._bounds[(0,)] = None

    def outcome(c: ProtobufCodec, data: bytes) -> str:
        try:
            return c.decode(data, [0])[0]
        except Exception as exc:  # noqa: BLE001 - the registry decoder's reason for this payload
            return f"!{type(exc).__name__}: {exc}"

    assert outcome(codec, good) == f"!ValueError: {REFUSED}"
    for _ in range(60):
        bad = bytearray(good)
        for _ in range(rng.randint(1, 3)):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        bad = bad[: rng.randrange(len(bad) // 2, len(bad) + 1)]
        assert outcome(codec, bytes(bad)) == outcome(plain, bytes(bad))


def test_the_cli_refuses_in_bounded_memory(tmp_path: Path) -> None:
    from kseg.testing.segment import write_segment
    from kseg.testing.v2 import RecordSpec, build_v2_batch

    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "wide-value-1-9.proto").write_text(PROTO)
    head = b"\0" + (9).to_bytes(4, "big") + b"\0"  # id 9, message index path [0]
    values = [head + _item(1), head + EMPTY * 200_000, head + _item(2)]  # 400 KB: ~4 GB as JSON
    specs = [RecordSpec(None, v, 1_730_000_000_000 + i) for i, v in enumerate(values)]
    write_segment(tmp_path / "wide-0", [[build_v2_batch(specs, base_offset=0)]])
    log = tmp_path / "wide-0" / "00000000000000000000.log"
    args = ["dump", "--print-data-log", "--value-decoder", "registry", "--schemas", str(schemas), str(log)]
    p = subprocess.run(
        [sys.executable, "-c", _CHILD, "c", *args, "--format", "json"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        preexec_fn=_capped,
        timeout=300,
    )
    last = p.stderr.decode().strip().splitlines()[-1].split()
    assert last[:2] == ["exit", "0"], p.stderr.decode()[-2000:]
    assert int(last[3]) < 128 * 1024, last
    rows = [json.loads(line) for line in p.stdout.splitlines() if b'"offset"' in line]
    assert [row.get("payloadDecodeError") for row in rows] == [None, REFUSED, None]
    assert re.search(rb"1 payload printed as hex: more than \d+ fields that take no byte", p.stderr)
