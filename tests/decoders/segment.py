"""A tiny, test-only reader of uncompressed magic-2 segments.

Enough to pull every record's offset, key and value (and whether its batch is
a control batch) out of the corpus files, independently of kseg's own
segment reader: the batches are cut and parsed by :mod:`tests.testing._kparse`,
the writer tests' independent parser (``DefaultRecordBatch``, 61-byte header;
``DefaultRecord``, zig-zag varints).  Control batches carry attribute bit 0x20.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.testing._kparse import parse_v2, walk


@dataclass
class Rec:
    offset: int
    key: bytes | None
    value: bytes | None
    control: bool


def records(path: Path) -> list[Rec]:
    out: list[Rec] = []
    for raw in walk(path.read_bytes()):
        batch = parse_v2(raw)
        assert batch.attributes & 0x07 == 0, "compressed batches are not supported here"
        control = bool(batch.attributes & 0x20)
        out.extend(Rec(batch.base_offset + r.offset_delta, r.key, r.value, control) for r in batch.records)
    return out
