"""``--format json`` objects (:mod:`kseg.render.jsonl`): one batch -> dict, records, headers, the sink's rows."""

from __future__ import annotations

import io
import json

from kseg.format import v2
from kseg.format.legacy import LegacyRecord
from kseg.format.v2 import BatchHeader
from kseg.format.v2_records import Record
from kseg.jsonlines import SCHEMA_VERSION
from kseg.render.jsonl import JsonSink, batch_object, dumps, record_object, v2_batch_object
from kseg.render.values import header_objects, string_decoder
from tests.stores import local

HEADER = BatchHeader(
    base_offset=100,
    batch_length=200,
    partition_leader_epoch=7,
    magic=2,
    crc=4242,
    attributes=v2.TRANSACTIONAL_FLAG | v2.DELETE_HORIZON_FLAG | 3,  # lz4
    last_offset_delta=2,
    base_timestamp=1730000999000,
    max_timestamp=1730000000002,
    producer_id=9,
    producer_epoch=1,
    base_sequence=5,
    records_count=3,
)


class V2:
    magic, size, timestamp_type = 2, 261, "CreateTime"
    h = tuple(HEADER)

    def is_valid(self) -> bool:
        return True


class Legacy:
    magic, size, codec, checksum = 1, 53, 1, 679304851
    base_offset, last_offset, timestamp_type, max_timestamp = 0, 0, "LogAppendTime", 1730000000000

    def is_valid(self) -> bool:
        return False


def _rows(sink: JsonSink, out: io.BytesIO) -> list[dict]:
    sink.flush()
    return [json.loads(line) for line in out.getvalue().decode().splitlines()]


def test_one_v2_batch_is_one_dict() -> None:
    assert v2_batch_object(4096, 261, tuple(HEADER), False) == {
        "type": "batch",
        "v": SCHEMA_VERSION,
        "position": 4096,
        "baseOffset": 100,
        "lastOffset": 102,
        "count": 3,
        "baseSequence": 5,
        "lastSequence": 7,
        "producerId": 9,
        "producerEpoch": 1,
        "partitionLeaderEpoch": 7,
        "isTransactional": True,
        "isControl": False,
        "deleteHorizonMs": 1730000999000,
        "timestampType": "CreateTime",
        "maxTimestamp": 1730000000002,
        "size": 261,
        "magic": 2,
        "compression": "lz4",
        "crc": 4242,
        "isValid": False,
    }
    assert batch_object(V2(), 4096) == v2_batch_object(4096, 261, tuple(HEADER), True)


def test_a_legacy_entry_has_no_producer_and_no_count() -> None:
    obj = batch_object(Legacy(), 53)
    assert {k: obj[k] for k in ("baseOffset", "count", "producerId", "baseSequence", "deleteHorizonMs")} == {
        "baseOffset": 0,
        "count": None,
        "producerId": -1,
        "baseSequence": -1,
        "deleteHorizonMs": None,
    }
    assert (obj["timestampType"], obj["compression"], obj["crc"], obj["isValid"], obj["v"]) == (
        "LogAppendTime",
        "gzip",
        679304851,
        False,
        SCHEMA_VERSION,
    )


def test_record_objects_with_headers_control_text_and_legacy_fields() -> None:
    rec = Record(offset=101, timestamp=5, sequence=6, key=b"k", value=None, headers=((b"h", b"\xff"), (b"n", None)))
    assert record_object(V2(), rec, " endTxnMarker: COMMIT coordinatorEpoch: 0", "k", None) == {
        "type": "record",
        "v": SCHEMA_VERSION,
        "offset": 101,
        "timestampType": "CreateTime",
        "timestamp": 5,
        "keySize": 1,
        "valueSize": -1,
        "sequence": 6,
        "headerKeys": ["h", "n"],
        # a value the string decoder cannot represent is base64, and says so; a null value is null
        "headers": [{"key": "h", "value": "/w==", "base64": True}, {"key": "n", "value": None}],
        "control": "endTxnMarker: COMMIT coordinatorEpoch: 0",
        "key": "k",
    }
    old = LegacyRecord(offset=0, timestamp=1, key=None, value=b"vv", crc=12, valid=True)
    assert record_object(Legacy(), old, None, None, "vv") == {
        "type": "record",
        "v": SCHEMA_VERSION,
        "offset": 0,
        "timestampType": "LogAppendTime",
        "timestamp": 1,
        "keySize": -1,
        "valueSize": 2,
        "isValid": True,
        "crc": 12,
        "payload": "vv",
    }


def test_sink_rows_file_batches_records_and_structured_values() -> None:
    out = io.BytesIO()
    sink = JsonSink(out, io.BytesIO())
    sink.dumping("d/00.log", local())
    sink.batch_lines([(0, 261, tuple(HEADER), True), (261, 53, None, Legacy())])
    sink.v2_records(V2(), [(100, 1, -1, 3, 4, ())])
    sink.v2_records(V2(), [(101, 2, -1, b"k", b"v", ((b"h", b"x"),))], string_decoder, string_decoder)
    sink.structured = True  # a topic decoder: key and payload are JSON text
    sink.record(V2(), Record(102, 3, -1, b"k", b"v", ()), None, '{"a":1}', "[1")
    rows = _rows(sink, out)
    assert rows[0] == {"type": "file", "v": SCHEMA_VERSION, "path": "d/00.log"}
    assert [(r["type"], r.get("position"), r.get("offset")) for r in rows[1:]] == [
        ("batch", 0, None),
        ("batch", 261, None),
        ("record", None, 100),
        ("record", None, 101),
        ("record", None, 102),
    ]
    assert (rows[3]["keySize"], rows[3]["valueSize"], rows[3]["headers"]) == (3, 4, [])
    assert (rows[4]["key"], rows[4]["payload"], rows[4]["headers"]) == ("k", "v", [{"key": "h", "value": "x"}])
    assert (rows[5]["key"], rows[5]["payload"]) == ({"a": 1}, "[1")  # JSON text as JSON; the rest a string


def test_sized_record_rows_are_the_text_of_their_objects() -> None:
    """Without decoders (``--deep-iteration``) a record without headers is written from a template: the same
    bytes as its object through ``dumps``, for either timestamp type, null key or value, extreme numbers; a
    record with headers (not UTF-8, null) between them as an object."""
    records = [
        (0, -1, -1, -1, -1, ()),
        (2**63 - 1, -(2**63), 2**31 - 1, 0, 2**31 - 1, ()),
        (7, 1730000000000, 5, 3, 4, ((b"h", b"\xff"), (b"\xe2\x80\xa8", None))),
        (8, 1730000000001, 6, 0, 0, ()),
    ]
    for ts_type in ("CreateTime", "LogAppendTime"):
        batch = type("B", (), {"timestamp_type": ts_type})()
        out = io.BytesIO()
        sink = JsonSink(out, io.BytesIO())
        sink.v2_records(batch, records)
        sink.flush()
        expected = []
        for o, ts, seq, k, v, hs in records:
            obj = {"type": "record", "v": SCHEMA_VERSION, "offset": o, "timestampType": ts_type, "timestamp": ts}
            obj.update(keySize=k, valueSize=v, sequence=seq, headerKeys=[string_decoder(hk) for hk, _ in hs])
            obj["headers"] = header_objects(hs, None) if hs else []
            expected.append(dumps(obj) + "\n")
        assert out.getvalue().decode() == "".join(expected)
        assert "\\u2028" in expected[2]  # the header key's line break escaped, as in every row


def test_problem_rows_one_per_pair_in_kafkas_order() -> None:
    class Problems:
        index_mismatches = {"/abs/00.index": [(10, 11), (30, 31)]}
        time_mismatches = {"/abs/00.timeindex": [(5, 6)]}
        out_of_order = {"/abs/00.timeindex": [(7, 8)]}
        not_found = {"/abs/00.index": [(40, -1)]}
        non_consecutive = {"/abs/00.log": [(2, 4), (5, 7)]}

    out = io.BytesIO()
    sink = JsonSink(out, io.BytesIO())
    sink.problems(Problems())
    base = {"type": "problem", "v": SCHEMA_VERSION}
    assert _rows(sink, out) == [
        {**base, "kind": "index_mismatch", "file": "/abs/00.index", "indexOffset": 30, "logOffset": 31},
        {**base, "kind": "index_mismatch", "file": "/abs/00.index", "indexOffset": 10, "logOffset": 11},
        {**base, "kind": "time_index_mismatch", "file": "/abs/00.timeindex", "indexTimestamp": 5, "logTimestamp": 6},
        {
            **base,
            "kind": "out_of_order_timestamp",
            "file": "/abs/00.timeindex",
            "indexTimestamp": 7,
            "previousTimestamp": 8,
        },
        {**base, "kind": "offset_not_found", "file": "/abs/00.index", "indexOffset": 40, "logOffset": -1},
        {**base, "kind": "non_consecutive_offsets", "file": "/abs/00.log", "offset": 5, "nextOffset": 7},
        {**base, "kind": "non_consecutive_offsets", "file": "/abs/00.log", "offset": 2, "nextOffset": 4},
    ]
