"""Distinctive sample values for any kseg schema at any version (test helper).

``sample(struct, version, rng)`` fills every field the version carries with
a non-default value (so tagged fields are written too), nulls nullable ones
now and then, and leaves the others at their defaults -- the dict a decoder
must give back after a round trip.
"""

from __future__ import annotations

import random

from kseg.decoders.schema import Field, FieldType, Struct
from kseg.decoders.versions import branch

_RANGES = {
    "int8": (-128, 127),
    "int16": (-32768, 32767),
    "uint16": (1, 65535),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (1, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_TEXT = 'abc-\u00fc\u4e2d\U0001f600"\\/\n\t'


def present(field: Field, struct: Struct, version: int) -> bool:
    return branch(field.versions, struct.current, version)[0]


def nullable(field: Field, version: int) -> bool:
    return field.nullable.contains(version)


def _scalar(ftype: FieldType, rng: random.Random, struct: Struct | None, version: int, avoid=None):
    kind = ftype.kind
    for _ in range(20):
        if kind in _RANGES:
            lo, hi = _RANGES[kind]
            v = rng.choice([lo, hi, rng.randint(lo, hi), 7])
        elif kind == "bool":
            v = not avoid if avoid is not None else rng.random() < 0.5
        elif kind == "float64":
            v = rng.choice([0.5, -1.25e10, 1048576.0, float("inf")])
        elif kind == "uuid":
            v = bytes(rng.randrange(256) for _ in range(16))
        elif kind == "string":
            v = "".join(rng.choice(_TEXT) for _ in range(rng.randint(1, 6)))
        elif kind in ("bytes", "records"):
            v = bytes(rng.randrange(256) for _ in range(rng.randint(1, 5)))
        elif kind == "struct":
            v = sample(struct, version, rng)
        else:  # array
            v = [_scalar(ftype.elem, rng, struct, version) for _ in range(rng.randint(1, 3))]
        if v != avoid:
            return v
    raise AssertionError("no non-default value")  # pragma: no cover


def sample(struct: Struct, version: int, rng: random.Random, null_rate: float = 0.2) -> dict:
    out = struct.default_value()
    for f in struct.fields:
        if not present(f, struct, version):
            continue
        if (
            nullable(f, version)
            and rng.random() < null_rate
            and f.default_text != "null"
            or (nullable(f, version) and f.default_text == "null" and rng.random() < null_rate / 2)
        ):
            out[f.name] = None
            continue
        if f.type.kind == "records":
            out[f.name] = b""
            continue
        out[f.name] = _scalar(f.type, rng, f.struct, version, avoid=f.default())
    return out
