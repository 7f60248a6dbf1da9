"""A record's line in Kafka's dump text: the one Python text of it (``DumpLogSegments.dumpLog``).

A v2 record (Kafka 3.0+; 2.8's variant is :mod:`kseg.render.text28`)::

    | offset: O <TimestampType>: T keySize: K valueSize: S sequence: Q headerKeys: [h1,h2]

then the control record's text, `` key: <key>`` and `` payload: <value>`` when printed.  A v0/v1
record (``AbstractLegacyRecordBatch``'s records)::

    | offset: O <TimestampType>: T keySize: K valueSize: S isValid: V crc: C}

(the ``}`` is the Scala tool's, up to Kafka 4.2).  With ``--skip-record-metadata`` only the key and
payload remain (:func:`skip_metadata_line`).  :func:`record_head` is the one text of a v2 line's
fields; :meth:`kseg.render.text.TextSink.v2_records` calls it on its hot paths and the compiled
engine (``_engine.c``'s ``record_lines``) writes the same bytes, checked record for record by
``tests/render/test_text_engine.py``.
"""

from __future__ import annotations

from typing import Callable

from kseg.format import v2_records
from kseg.format.strings import decode_text, string_decoder

#: A key or value decoder (``--key-decoder``/``--value-decoder``): the bytes (or a view of them) -> the text.
Decoder = Callable[[bytes | memoryview], str]


def record_head(
    ts_type: str, offset: int, timestamp: int, sequence: int, key_size: int, value_size: int, keys: str
) -> str:
    """A v2 record line's fields, up to ``headerKeys: [...]`` (``keys``: the header keys, comma-joined)."""
    return (
        f"| offset: {offset} {ts_type}: {timestamp} keySize: {key_size} valueSize: {value_size} "
        f"sequence: {sequence} headerKeys: [{keys}]"
    )


def key_payload(key_text: str | None, payload_text: str | None) -> str:
    """A record line's end: `` key: K`` and `` payload: V``, each when printed."""
    if key_text is None:
        return "" if payload_text is None else f" payload: {payload_text}"
    return f" key: {key_text}" if payload_text is None else f" key: {key_text} payload: {payload_text}"


def record_line(
    ts_type: str,
    offset: int,
    timestamp: int,
    sequence: int,
    key_size: int,
    value_size: int,
    headers: tuple,
    extra: str | None,
    key_text: str | None,
    payload_text: str | None,
) -> str:
    """The line of a v2 record as ``DumpLogSegments.dumpLog`` prints it; ``extra``: a control record's text.

    Header keys are decoded as Kafka's ``new String(bytes, UTF_8)``."""
    keys = ",".join([string_decoder(k) for k, _ in headers]) if headers else ""
    head = record_head(ts_type, offset, timestamp, sequence, key_size, value_size, keys)
    return f"{head}{'' if extra is None else extra}{key_payload(key_text, payload_text)}\n"


def json_fields(decoder: Decoder, name: str, data: bytes | memoryview, headers: tuple) -> dict:
    """A JSON row's ``name`` (``key``/``payload``) field, and the fields a structured decoder adds (one with
    ``json_fields``: the registry decoder's decoded value and schema, or its reason)."""
    fields = getattr(decoder, "json_fields", None)
    return {name: decoder(data)} if fields is None else fields(data, headers)


def decoded_line(
    ts_type: str,
    o: int,
    ts: int,
    seq: int,
    k: bytes | memoryview | None,
    v: bytes | memoryview | None,
    hs: tuple,
    key_decoder: Decoder,
    value_decoder: Decoder,
) -> str:
    """:func:`record_line` of a ``--print-data-log`` record (no control text), key then value decoded."""
    key_text = None if k is None else decode_text(key_decoder, k, hs)
    payload_text = None if v is None else decode_text(value_decoder, v, hs)
    return record_line(
        ts_type, o, ts, seq, -1 if k is None else len(k), -1 if v is None else len(v), hs, None, key_text, payload_text
    )


def sliced(mv: memoryview, rec: tuple) -> tuple:
    """A record of spans in ``mv`` as the same record of slices (:data:`kseg.format.v2_records.SPANS`)."""
    o, ts, seq, k, v, hs = rec
    return o, ts, seq, v2_records.span_slice(mv, k), v2_records.span_slice(mv, v), hs


def legacy_line(rec, ts_type: str, java_tool: bool, key_text: str | None, payload_text: str | None) -> str:
    """The line of a v0/v1 record (a :class:`kseg.format.legacy.LegacyRecord`) of Kafka 3.0+; the Scala
    tool (up to 4.2) closes the crc with a stray ``}``."""
    key, value = rec.key, rec.value
    return (
        f"| offset: {rec.offset} {ts_type}: {rec.timestamp} "
        f"keySize: {-1 if key is None else len(key)} valueSize: {-1 if value is None else len(value)} "
        f"isValid: {'true' if rec.valid else 'false'} crc: {rec.crc}{'' if java_tool else '}'}"
        f"{key_payload(key_text, payload_text)}\n"
    )


def skip_metadata_line(key_text: str | None, payload_text: str | None, java_tool: bool = False) -> str:
    """A record line with ``--skip-record-metadata``: Kafka prints ``| key: K payload: V``; with
    no key, `` payload: V`` (a leading space, no ``|``; 4.3+: ``| payload: V``); with neither, an
    empty line."""
    if key_text is not None:
        if payload_text is not None:
            return f"| key: {key_text} payload: {payload_text}\n"
        return f"| key: {key_text}\n"
    if payload_text is not None:
        return f"| payload: {payload_text}\n" if java_tool else f" payload: {payload_text}\n"
    return "\n"
