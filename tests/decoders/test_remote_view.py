"""``kseg.decoders.remote_view.view`` against ``kseg.decoders.remote.read_record`` (the reference): where the
view reads a record, the reference reads it too and gives the same values; the view reads the usual records
(the fast road is taken); its fixed layout is the storage module's schemas'."""

from __future__ import annotations

import random

import pytest

from kseg.decoders import schema
from kseg.decoders.remote import read_record
from kseg.decoders.remote_view import view
from kseg.errors import DecoderError
from kseg.format.strings import java_utf8
from kseg.ops.tiered.state import ADD, UPDATE
from kseg.testing import remote_metadata as rm
from tests.ops.tiered.varied import TOPICS, varied_values

_SEGMENT = rm.SegmentId(*TOPICS[0], "AAAAAAAAAAAAAAAAAAAAAQ")


def _topic(entry: dict, raw: bytes) -> bool:
    """Whether ``raw``, the view's topic bytes, are the entry the reference read (the name as Java decodes it)."""
    name, rest = raw[1:-20], raw[-20:]
    return (
        raw[0] == len(name) + 1
        and java_utf8(name) == entry["name"]
        and rest == entry["id"] + entry["partition"].to_bytes(4, "big", signed=True)
    )


def _agree(value: bytes | None) -> bool:
    """Whether the view read ``value``; asserts its values are the reference's when it did."""
    found = None if value is None else view(b"\x01\x01\x00\x07" + value + b"\x00" * 99, 4, 4 + len(value))
    try:
        name, m = read_record(value)
    except DecoderError:
        assert found is None, value
        return False
    if found is None:
        return False
    sid = m["remoteLogSegmentId"]
    assert (found[0], found[2]) == (
        {"RemoteLogSegmentMetadataRecord": ADD, "RemoteLogSegmentMetadataUpdateRecord": UPDATE}[name],
        sid["id"],
    )
    assert _topic(sid["topicIdPartition"], found[1])
    assert found[3:7] == (m["remoteLogSegmentState"], m["brokerId"], m["eventTimestampMs"], m["customMetadata"])
    if found[0] == ADD:
        epochs: dict[int, int] = {}
        for e in m["segmentLeaderEpochs"]:
            epochs[e["leaderEpoch"]] = e["offset"]
        assert found[7:] == (
            m["startOffset"],
            m["endOffset"],
            dict(sorted(epochs.items())),
            m["segmentSizeInBytes"],
            m["maxTimestampMs"],
            bool(m.get("txnIndexEmpty")),
        )
        assert list(found[9]) == sorted(found[9])
    return True


@pytest.mark.parametrize("seed", range(6))
def test_the_view_agrees_with_the_reference(seed: int) -> None:
    values = varied_values(seed)
    taken = [_agree(v) for v in values]
    assert sum(taken) > len(values) / 2


@pytest.mark.parametrize(
    "value",
    [
        rm.segment_metadata(_SEGMENT, 0, 9),
        rm.segment_metadata(_SEGMENT, 0, 9, epochs={4: 5, 2: 0, 3: 1}, custom=b"", txn_index_empty=True),
        rm.segment_metadata(_SEGMENT, 0, 9, custom=rm.aiven_custom_metadata(10, "p/", "k")),
        rm.segment_update(_SEGMENT, rm.COPY_SEGMENT_FINISHED),
        rm.segment_update(_SEGMENT, rm.DELETE_SEGMENT_FINISHED, custom=b""),
        rm.segment_update(_SEGMENT, rm.COPY_SEGMENT_FINISHED, custom=rm.aiven_custom_metadata(10)),
        rm.segment_update(rm.SegmentId(TOPICS[0][0], "x" * 126, 7, "AAAAAAAAAAAAAAAAAAAAAQ"), 1),  # length 127
    ],
)
def test_the_usual_records_take_the_fast_road(value: bytes) -> None:
    assert _agree(value)


@pytest.mark.parametrize(
    "value",
    [
        rm.segment_metadata(_SEGMENT, 5, 4),  # end before start: Java's message
        rm.segment_metadata(_SEGMENT, -1, 4),
        rm.segment_metadata(_SEGMENT, 0, 4, epochs={}),
        rm.segment_metadata(_SEGMENT, 0, 4, state=9),
        rm.segment_update(_SEGMENT, 4),
        rm.segment_update(rm.SegmentId(TOPICS[0][0], "x" * 127, 7, "AAAAAAAAAAAAAAAAAAAAAQ"), 1),  # two-byte length
        rm.segment_update(_SEGMENT, 1, custom=bytes(127)),  # two-byte length
        rm.segment_update(_SEGMENT, 1)[:-1] + b"\x01\x00\x01\x07",  # an unknown tag: Kafka skips it
        rm.segment_metadata(_SEGMENT, 0, 9)[:-1] + b"\x01\x00\x01\x02",  # txnIndexEmpty neither 0 nor 1
        rm.partition_delete(*TOPICS[0], 1),
    ],
)
def test_others_take_the_general_road(value: bytes) -> None:
    assert view(value, 0, len(value)) is None


def test_cut_short_or_longer_every_way() -> None:
    rng = random.Random(31)
    for value in (rm.segment_metadata(_SEGMENT, 0, 9, epochs={1: 0, 2: 5}), rm.segment_update(_SEGMENT, 2)):
        for cut in range(len(value)):
            assert view(value[:cut], 0, cut) is None
            assert view(value, 0, cut) is None  # the bytes past the value's end are not its own
            _agree(value[:cut])
        for _ in range(300):
            b = bytearray(value)
            b[rng.randrange(len(b))] = rng.randrange(256)
            _agree(bytes(b))
        assert view(value + b"\x00", 0, len(value) + 1) is None


def _layout(struct: schema.Struct) -> list[tuple]:
    """Each field's name, type, tag and (a struct's, an array of structs') fields."""
    out = []
    for f in struct.fields:
        inner = f.type.elem if f.type.elem is not None else f.type
        nested = _layout(struct.message.structs[inner.struct_name]) if inner.struct_name else None
        out.append((f.name, f.type.kind, f.tag, nested))
    return out


def test_the_layout_read_is_the_schemas() -> None:
    """The fixed road's layout (the module's docstring and structs): a schema change must change the view."""
    topic = [("name", "string", None, None), ("id", "uuid", None, None), ("partition", "int32", None, None)]
    segment_id = [("topicIdPartition", "struct", None, topic), ("id", "uuid", None, None)]
    epochs = [("leaderEpoch", "int32", None, None), ("offset", "int64", None, None)]
    add = schema.message("RemoteLogSegmentMetadataRecord")
    update = schema.message("RemoteLogSegmentMetadataUpdateRecord")
    assert (add.api_key, update.api_key) == (ADD, UPDATE)
    assert str(add.valid) == str(update.valid) == "0" and str(add.flexible) == str(update.flexible) == "0+"
    assert _layout(update.struct) == [
        ("remoteLogSegmentId", "struct", None, segment_id),
        ("brokerId", "int32", None, None),
        ("eventTimestampMs", "int64", None, None),
        ("customMetadata", "bytes", None, None),
        ("remoteLogSegmentState", "int8", None, None),
    ]
    assert _layout(add.struct) == [
        ("remoteLogSegmentId", "struct", None, segment_id),
        ("startOffset", "int64", None, None),
        ("endOffset", "int64", None, None),
        ("brokerId", "int32", None, None),
        ("maxTimestampMs", "int64", None, None),
        ("eventTimestampMs", "int64", None, None),
        ("segmentLeaderEpochs", "array", None, epochs),
        ("segmentSizeInBytes", "int32", None, None),
        ("customMetadata", "bytes", None, None),
        ("remoteLogSegmentState", "int8", None, None),
        ("txnIndexEmpty", "bool", 0, None),
    ]
