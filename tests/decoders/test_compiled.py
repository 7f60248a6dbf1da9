"""The compiled read plans give what the interpreted ones give: the same dict, the same position, the same
Java exception -- for every schema at every version, on well-formed, truncated and mutated bytes."""

from __future__ import annotations

import random

import pytest

from kseg.decoders import schema
from kseg.decoders.compiled import compiled_plan
from kseg.decoders.decode import interpreted_plan, read, whole_reader
from kseg.decoders.encode import write
from kseg.decoders.jvm import JavaException
from kseg.decoders.wire import Reader
from tests.decoders.samples import sample
from tests.decoders.test_roundtrip import CASES


def _outcome(plan, data: bytes, end: int | None = None):
    """(repr of the dict, keys in order, and the position after it) or the exception's text."""
    r = Reader(data, 0, end)
    try:
        value = plan(r)
    except JavaException as exc:
        return "raised", type(exc).__name__, exc.to_string()
    return repr(value), r.pos


def _variants(data: bytes, rng: random.Random):
    yield data
    yield data + b"\x00\x07"  # bytes left after it
    for cut in sorted({0, 1, len(data) // 2, max(len(data) - 1, 0)}):
        yield data[:cut]
    for _ in range(6):
        b = bytearray(data or b"\x00")
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        yield bytes(b)


@pytest.mark.parametrize("name,version", CASES)
def test_compiled_plan_agrees_with_the_interpreted_one(name: str, version: int) -> None:
    struct = schema.message(name).struct
    interpreted = interpreted_plan(struct, version)
    compiled = compiled_plan(struct, version, interpreted)
    assert compiled is not None, "every kseg schema is compiled"
    plan, whole = compiled
    for seed in range(4):
        rng = random.Random(f"{name}/{version}/{seed}")
        value = sample(struct, version, rng, null_rate=0.0 if seed == 0 else 0.3)
        data = write(struct, value, version)
        fast = whole(data, 0)
        assert fast is not None, "a well-formed value takes the fast road"
        assert repr(fast) == repr(interpreted(Reader(data)))
        for variant in _variants(data, rng):
            assert _outcome(plan, variant) == _outcome(interpreted, variant)
            assert _outcome(plan, variant, max(len(variant) - 1, 0)) == _outcome(
                interpreted, variant, max(len(variant) - 1, 0)
            )
            off = whole(variant, 0)
            if off is not None:  # the fast road only when the whole value is read
                assert (repr(off), len(variant)) == _outcome(interpreted, variant)


def test_read_and_the_whole_reader_go_through_the_compiled_plan() -> None:
    struct = schema.message("RemoteLogSegmentMetadataUpdateRecord").struct
    value = sample(struct, 0, random.Random(1), null_rate=0.0)
    data = write(struct, value, 0)
    assert read(struct, data, 0) == value
    whole = whole_reader(struct, 0)
    assert whole is not None
    assert whole(data, 0) == value
    assert whole(data + b"\x00", 0) is None  # a byte left: the interpreted plan says what
    assert whole(data[:-1], 0) is None


def test_an_unknown_tag_leaves_the_fast_road_and_is_kept_aside() -> None:
    struct = schema.message("RemotePartitionDeleteMetadataRecord").struct
    value = sample(struct, 0, random.Random(2), null_rate=0.0)
    data = write(struct, value, 0)
    assert data[-1] == 0  # no tagged fields
    tagged = data[:-1] + bytes([1, 9, 2, 0xAB, 0xCD])  # one unknown tag (9) of two bytes
    whole = whole_reader(struct, 0)
    assert whole is not None and whole(tagged, 0) is None
    assert read(struct, tagged, 0)["_unknownTaggedFields"] == [(9, b"\xab\xcd")]
