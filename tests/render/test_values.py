"""Values as Kafka's tool prints them (:mod:`kseg.render.values`)."""

from __future__ import annotations

import struct

import pytest

from kseg.errors import KsegError
from kseg.format import control
from kseg.render.values import bool_text, control_text, header_objects, optional_long


class _Batch:
    class file:  # noqa: N801 - the batch's file, as storage.batch has it
        path = "/d/00.log"


def _key(type_id: int) -> bytes:
    return struct.pack(">hh", 0, type_id)  # ControlRecordType's key: version, type


def test_java_booleans_and_optional_longs() -> None:
    assert (bool_text(1), bool_text(0)) == ("true", "false")
    assert (optional_long(None), optional_long(-5)) == ("OptionalLong.empty", "OptionalLong[-5]")


def test_control_text_of_markers_kraft_records_and_other_types() -> None:
    marker = struct.pack(">hi", 0, 17)  # EndTransactionMarker: version, coordinator epoch
    assert control_text(_Batch(), _key(control.COMMIT), marker) == " endTxnMarker: COMMIT coordinatorEpoch: 17"
    assert control_text(_Batch(), _key(control.ABORT), marker) == " endTxnMarker: ABORT coordinatorEpoch: 17"
    seen = []

    def kraft(type_id: int, key: bytes, value: bytes | None) -> str | None:
        seen.append((type_id, key, value))
        return " SnapshotHeader: {...}" if type_id == control.SNAPSHOT_HEADER else None

    assert control_text(_Batch(), _key(control.SNAPSHOT_HEADER), b"x", kraft) == " SnapshotHeader: {...}"
    # no KRaft text (an older release, or none given): the type's name and id
    assert control_text(_Batch(), _key(control.LEADER_CHANGE), b"x", kraft) == " controlType: LEADER_CHANGE(2)"
    assert control_text(_Batch(), _key(control.SNAPSHOT_FOOTER), b"x") == " controlType: SNAPSHOT_FOOTER(4)"
    assert seen == [(3, _key(3), b"x"), (2, _key(2), b"x")]


def test_a_control_key_too_short_is_an_error_anchored_in_the_file() -> None:
    with pytest.raises(KsegError) as info:
        control_text(_Batch(), b"\x00", b"")
    assert info.value.path == "/d/00.log"


def test_header_objects_decode_or_say_base64() -> None:
    headers = ((b"a", b"text"), (b"b", None), (b"c", b"\xff\xfe"), (b"\xff", b"x"))
    assert header_objects(headers) == [
        {"key": "a", "value": "text"},
        {"key": "b", "value": None},
        {"key": "c", "value": "//4=", "base64": True},
        {"key": "\ufffd", "value": "x"},
    ]

    def hexed(b: bytes) -> str:
        if b == b"x":
            raise ValueError("no")
        return b.hex()

    assert header_objects(((b"a", b"\x01"), (b"b", b"x")), hexed) == [
        {"key": "a", "value": "01"},
        {"key": "b", "value": "eA==", "base64": True},  # the decoder failed: the bytes, as base64
    ]
