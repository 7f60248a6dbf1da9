"""A record's line (:mod:`kseg.render.record_line`): exact strings for values built by hand."""

from __future__ import annotations

from kseg.format.legacy import LegacyRecord
from kseg.render import text28
from kseg.render.record_line import (
    decoded_line,
    key_payload,
    legacy_line,
    record_head,
    record_line,
    skip_metadata_line,
    sliced,
)
from kseg.render.values import string_decoder

_LEGACY = LegacyRecord(
    offset=0, timestamp=1730000000000, key=None, value=b"value-with-null-key", crc=679304851, valid=True
)


def test_record_head_is_the_line_up_to_the_header_keys() -> None:
    assert record_head("CreateTime", 5, 1730000000000, 3, 2, 4, "a,b") == (
        "| offset: 5 CreateTime: 1730000000000 keySize: 2 valueSize: 4 sequence: 3 headerKeys: [a,b]"
    )


def test_record_line_headers_control_text_key_and_payload() -> None:
    headers = ((b"h1", b"x"), (b"h\xc3\xa9", None))
    assert record_line("LogAppendTime", -1, -1, -1, -1, -1, (), None, None, None) == (
        "| offset: -1 LogAppendTime: -1 keySize: -1 valueSize: -1 sequence: -1 headerKeys: []\n"
    )
    assert record_line("CreateTime", 5, 1, 3, 2, 4, headers, None, "k", "v") == (
        "| offset: 5 CreateTime: 1 keySize: 2 valueSize: 4 sequence: 3 headerKeys: [h1,h\u00e9] key: k payload: v\n"
    )
    # a control record: Kafka prints its type (and KRaft text) after the header keys, before key/payload
    assert record_line("CreateTime", 9, 1, -1, 4, 6, (), " endTxnMarker: COMMIT coordinatorEpoch: 0", None, None) == (
        "| offset: 9 CreateTime: 1 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
        "endTxnMarker: COMMIT coordinatorEpoch: 0\n"
    )


def test_key_payload_each_when_printed() -> None:
    assert key_payload(None, None) == ""
    assert key_payload("k", None) == " key: k"
    assert key_payload(None, "v") == " payload: v"
    assert key_payload("k", "v") == " key: k payload: v"


def test_decoded_line_decodes_key_then_value() -> None:
    seen: list[bytes] = []

    def decoder(b: bytes | memoryview) -> str:
        seen.append(bytes(b))
        return string_decoder(b)

    assert decoded_line("CreateTime", 1, 2, 3, b"key", None, (), decoder, decoder) == (
        "| offset: 1 CreateTime: 2 keySize: 3 valueSize: -1 sequence: 3 headerKeys: [] key: key\n"
    )
    decoded_line("CreateTime", 1, 2, 3, b"k", b"v", (), decoder, decoder)
    assert seen == [b"key", b"k", b"v"]


def test_sliced_turns_spans_into_slices() -> None:
    buf = memoryview(b"..key..value")
    rec = (4, 5, 6, (2 << 32) | 3, (7 << 32) | 5, ())
    o, ts, seq, k, v, hs = sliced(buf, rec)
    assert (o, ts, seq, bytes(k), bytes(v), hs) == (4, 5, 6, b"key", b"value", ())
    assert sliced(buf, (4, 5, 6, None, None, ()))[3:5] == (None, None)  # a null key or value stays null


def test_legacy_line_scala_and_java_tools() -> None:
    """The corpus golden ``v1-none-0 .log.data`` (Kafka's Scala tool) has the stray ``}``; 4.3+ has not."""
    assert legacy_line(_LEGACY, "CreateTime", False, None, "value-with-null-key") == (
        "| offset: 0 CreateTime: 1730000000000 keySize: -1 valueSize: 19 isValid: true crc: 679304851} "
        "payload: value-with-null-key\n"
    )
    assert legacy_line(_LEGACY._replace(valid=False), "NoTimestampType", True, "k", None) == (
        "| offset: 0 NoTimestampType: 1730000000000 keySize: -1 valueSize: 19 isValid: false crc: 679304851 key: k\n"
    )


def test_legacy_line_of_kafka_2_8() -> None:
    class Entry:
        offset, size, magic, codec = 3, 80, 1, 2

    fields = text28.legacy_batch_fields(Entry(), 1, 160)
    assert text28.legacy_line(_LEGACY, "CreateTime", fields, None, "v") == (
        "| offset: 0 isValid: true crc: 679304851 keySize: -1 valueSize: 19 CreateTime: 1730000000000 "
        "baseOffset: 1 lastOffset: 3 baseSequence: -1 lastSequence: -1 producerEpoch: -1 "
        "partitionLeaderEpoch: -1 batchSize: 80 magic: 1 compressType: SNAPPY position: 160 "
        "crc: 679304851 isvalid: true payload: v\n"
    )


def test_skip_metadata_lines_of_the_scala_and_java_tools() -> None:
    assert skip_metadata_line("k", "v") == "| key: k payload: v\n"
    assert skip_metadata_line("k", None) == "| key: k\n"
    assert skip_metadata_line(None, "v") == " payload: v\n"
    assert skip_metadata_line(None, "v", java_tool=True) == "| payload: v\n"
    assert skip_metadata_line(None, None) == "\n"
