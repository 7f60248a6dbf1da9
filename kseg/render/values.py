"""Values as Kafka's tool prints them, shared by the text and JSON forms (a leaf of ``kseg.render``)."""

from __future__ import annotations

from typing import Callable

from kseg.errors import KsegError
from kseg.format import control
from kseg.format.strings import string_decoder  # noqa: F401 - Kafka's default decoder, re-exported

#: ``(type id, key, value) -> text or None``: the KRaft control records' text
#: (:func:`kseg.decoders.control.control_record_text`), handed in by the CLI:
#: render does not import the decoders, its sibling layer.
KRaftText = Callable[[int, bytes, "bytes | None"], "str | None"]

#: control types whose text ``kraft_text`` may give (LEADER_CHANGE: from Kafka 4.1, else None)
KRAFT_TYPES = (
    control.LEADER_CHANGE,
    control.SNAPSHOT_HEADER,
    control.SNAPSHOT_FOOTER,
    control.KRAFT_VERSION,
    control.KRAFT_VOTERS,
)


def bool_text(b) -> str:
    """Java's ``Boolean.toString``."""
    return "true" if b else "false"


def optional_long(value: int | None) -> str:
    """Java's ``OptionalLong.toString``."""
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


def control_text(batch, key, value, kraft_text: KRaftText | None = None) -> str:
    """What Kafka's tool prints after a control record's metadata (``DumpLogSegments.dumpLog``).

    ``kraft_text`` prints the KRaft types (3-6); without it they print as
    any other type (`` controlType: NAME(id)``).
    """
    try:
        return " " + control_description(key, value, kraft_text).lstrip()
    except KsegError as exc:
        raise exc.at(batch.file.path) from None  # the key/value are slices: no position in the file


def control_description(key, value, kraft_text: KRaftText | None = None) -> str:
    """:func:`control_text` without the leading space (``endTxnMarker: COMMIT coordinatorEpoch: 8``);
    :class:`KsegError` for a key or value that does not parse."""
    type_id = control.parse_type_id(key)
    if type_id in (control.ABORT, control.COMMIT):
        epoch = control.parse_end_txn_marker(value)
        return f"endTxnMarker: {control.type_name(type_id)} coordinatorEpoch: {epoch}"
    if kraft_text is not None and type_id in KRAFT_TYPES:
        text = kraft_text(type_id, bytes(key), None if value is None else bytes(value))
        if text is not None:
            return text
    return f"controlType: {control.type_name(type_id)}({type_id})"


def control_type(key) -> str | None:
    """A control record's type name (``ABORT``, ``COMMIT``, ``LEADER_CHANGE`` ...), None if its key does
    not parse."""
    try:
        return control.type_name(control.parse_type_id(key))
    except KsegError:
        return None


def header_objects(headers, value_decoder=None) -> list[dict]:
    """A v2 record's headers as JSON objects, in order: ``{"key": k, "value": v}``.

    A header (Kafka's ``RecordHeader``) is a String key and a nullable byte-array value
    (``DefaultRecord``: varint key length, UTF-8 key, varint value length, -1 for null, value).
    The value is decoded with ``value_decoder`` (None: Kafka's string decoder); ``null`` for a null
    value; when the decoder cannot represent it (bytes that are not UTF-8 for the string decoder, a
    decoder that raises or gives no string) the value is base64 and the object says so
    (``"base64": true``), so every header value reads back to its bytes.  Keys as ``headerKeys``.
    """
    out = []
    for key, value in headers:
        obj: dict = {"key": string_decoder(key)}
        if value is None:
            obj["value"] = None
        else:
            obj.update(_header_value(bytes(value), value_decoder))
        out.append(obj)
    return out


def _header_value(value: bytes, decoder) -> dict:
    if decoder is None or decoder is string_decoder:
        try:
            return {"value": value.decode("utf-8")}
        except UnicodeDecodeError:
            pass
    else:
        try:
            text = decoder(value)
        except Exception:  # noqa: BLE001 - any decoder's failure on a header value: the bytes as base64
            text = None
        if isinstance(text, str):
            return {"value": text}
    import base64

    return {"value": base64.b64encode(value).decode("ascii"), "base64": True}
