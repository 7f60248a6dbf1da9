"""A tiny, test-only reader of uncompressed magic-2 segments.

Enough to pull every record's offset, key and value (and whether its batch is
a control batch) out of the corpus files, independently of kseg's own
segment reader.  Layout: ``DefaultRecordBatch`` (61-byte header) and
``DefaultRecord`` (zig-zag varints).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Rec:
    offset: int
    key: bytes | None
    value: bytes | None
    control: bool


def _varint(b: bytes, p: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        c = b[p]
        p += 1
        result |= (c & 0x7F) << shift
        if c < 0x80:
            break
        shift += 7
    return (result >> 1) ^ -(result & 1), p


def records(path: Path) -> list[Rec]:
    data = path.read_bytes()
    out: list[Rec] = []
    pos = 0
    while pos + 61 <= len(data):
        base_offset, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        attrs = struct.unpack_from(">h", data, pos + 21)[0]
        assert attrs & 0x07 == 0, "compressed batches are not supported here"
        count = struct.unpack_from(">i", data, pos + 57)[0]
        p = pos + 61
        for _ in range(count):
            _, p = _varint(data, p)
            p += 1  # attributes
            _, p = _varint(data, p)  # timestamp delta
            delta, p = _varint(data, p)
            klen, p = _varint(data, p)
            key = None if klen < 0 else data[p : p + klen]
            p += max(klen, 0)
            vlen, p = _varint(data, p)
            value = None if vlen < 0 else data[p : p + vlen]
            p += max(vlen, 0)
            nh, p = _varint(data, p)
            for _ in range(nh):
                hk, p = _varint(data, p)
                p += hk
                hv, p = _varint(data, p)
                p += max(hv, 0)
            out.append(Rec(base_offset + delta, key, value, bool(attrs & 0x20)))
        pos = end
    return out
