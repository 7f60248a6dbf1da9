"""Every kseg schema at every valid version: encode a known value, decode it back, convert to JSON.

The JSON check is independent of kseg's converter: fields present in the
version are expected in order, with uuids as URL-safe base64 without padding
and bytes as standard base64 (Kafka's ``JsonConverter`` + Jackson).
"""

from __future__ import annotations

import base64
import json
import random
from importlib import resources

import pytest

from kseg.decoders import schema
from kseg.decoders.decode import read
from kseg.decoders.encode import write
from kseg.decoders.jsonconv import dumps, to_tree
from tests.decoders.samples import present, sample

NAMES = sorted(
    p.name[:-5]
    for p in resources.files("kseg.decoders").joinpath("schemas").iterdir()
    if p.name.endswith(".json") and p.name != "index.json"
)
CASES = [(n, v) for n in NAMES for v in range(schema.message(n).valid.lowest, schema.message(n).valid.highest + 1)]


def expected_json(struct, value, version):
    out = {}
    for f in struct.fields:
        if not present(f, struct, version):
            continue
        v = value[f.name]
        if f.tagged.contains(version) and v == f.default():
            continue
        out[f.name] = _expected_value(f.type, f.struct, v, version)
    return out


def _expected_value(ftype, struct, v, version):
    if v is None:
        return None
    kind = ftype.kind
    if kind == "uuid":
        return base64.urlsafe_b64encode(v).decode().rstrip("=")
    if kind == "bytes":
        return base64.b64encode(v).decode()
    if kind == "records":
        return ""
    if kind == "struct":
        return expected_json(struct, v, version)
    if kind == "array":
        return [_expected_value(ftype.elem, struct, x, version) for x in v]
    if kind == "float64" and v in (float("inf"), float("-inf")):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def test_every_kafka_message_kseg_needs_is_there() -> None:
    assert len(NAMES) == 95  # 89 of Kafka 4.4 + 6 of 4.0 kept as <Name>@4.0
    assert len(CASES) >= 99


@pytest.mark.parametrize("name,version", CASES)
def test_round_trip(name: str, version: int) -> None:
    struct = schema.message(name).struct
    for seed in range(4):
        rng = random.Random(f"{name}/{version}/{seed}")
        value = sample(struct, version, rng, null_rate=0.0 if seed == 0 else 0.3)
        data = write(struct, value, version)
        assert read(struct, data, version) == value
        text = dumps(to_tree(struct, value, version))
        assert json.loads(text) == expected_json(struct, value, version)


@pytest.mark.parametrize("name,version", CASES)
def test_defaults_round_trip_and_omit_tagged_fields(name: str, version: int) -> None:
    struct = schema.message(name).struct
    value = struct.default_value()
    assert read(struct, write(struct, value, version), version) == value
    tree = to_tree(struct, value, version)
    tagged = {f.name for f in struct.fields if f.tagged.contains(version)}
    assert not tagged & set(tree)
