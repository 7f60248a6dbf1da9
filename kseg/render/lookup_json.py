"""``kseg lookup-offset --format json`` and ``lookup-time --format json``: one object per lookup (schema in
``docs/lookup.md``); its ``batch`` and ``record`` objects are those of ``kseg dump --format json``.  Apart from
the text of :mod:`kseg.render.lookup` so that a lookup printing text loads no JSON sink."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.lookup.offset import NEXT, OffsetLookup
from kseg.render.jsonl import batch_object, dumps, record_object
from kseg.render.lookup import offset_reason, record_texts, time_reason
from kseg.render.record_line import json_fields
from kseg.render.values import KRaftText, string_decoder

if TYPE_CHECKING:
    from kseg.ops.lookup.time import TimeLookup


def batch_and_record_json(
    batch, rec, key_decoder=string_decoder, value_decoder=string_decoder, kraft_text: KRaftText | None = None
) -> tuple[dict, dict]:
    """The ``batch`` and ``record`` objects of ``kseg dump --format json``, without their ``type``."""
    batch_obj = batch_object(batch, batch.position)
    # a structured decoder's fields replace the text: decoded once (its notes count each record once)
    key_text_of = _unused if hasattr(key_decoder, "json_fields") else key_decoder
    value_text_of = _unused if hasattr(value_decoder, "json_fields") else value_decoder
    extra, key_text, payload_text = record_texts(batch, rec, key_text_of, value_text_of, kraft_text)
    record_obj = record_object(
        batch, rec, extra, key_text, payload_text, getattr(value_decoder, "header_decoder", value_decoder)
    )
    if extra is None:  # a structured decoder's value and schema (the registry's)
        headers = rec.headers if batch.magic >= 2 else ()
        for decoder, name, data in ((key_decoder, "key", rec.key), (value_decoder, "payload", rec.value)):
            if data is not None and hasattr(decoder, "json_fields"):
                record_obj.update(json_fields(decoder, name, data, headers))
    del batch_obj["type"], record_obj["type"]
    return batch_obj, record_obj


def _unused(data) -> str:
    return ""


def index_json(ix) -> dict | None:
    if ix is None:
        return None
    return {
        "file": ix.path,
        "entries": ix.entries,
        "entry": ix.slot if ix.slot >= 0 else None,
        "offset": ix.offset,
        "relativeOffset": ix.relative_offset,
        "position": ix.position,
    }


def scan_json(scan) -> dict | None:
    if scan is None:
        return None
    return {"from": scan.start, "batches": scan.batches, "bytes": scan.bytes, "batchPosition": scan.found_position}


def offset_json(r: OffsetLookup, where: dict, decoders: tuple) -> dict:
    """The ``offset_lookup`` row; ``where`` the fields naming the partition (``logDir``, ``partition``, ``path``)."""
    obj = {
        "type": "offset_lookup",
        "v": SCHEMA_VERSION,
        **where,
        "target": r.target,
        "status": r.status,
        "found": r.found,
        "offset": r.record.offset if r.record else None,
        "compacted": r.status == NEXT,
        "reason": offset_reason(r),
        "segments": r.segments,
        "logStartOffset": r.log_start,
        "logStartOffsetFile": r.log_start_file,
        "logEndOffset": r.log_end,
        "steps": [
            {
                "segment": s.segment.name,
                "path": s.segment.log,
                "baseOffset": s.segment.base_offset,
                "relativeOffset": r.target - s.segment.base_offset,
                "index": index_json(s.index),
                "scan": scan_json(s.scan),
                "outcome": s.outcome,
            }
            for s in r.steps
        ],
        "batch": None,
        "record": None,
        "notes": r.notes,
    }
    if r.record is not None:
        obj["batch"], obj["record"] = batch_and_record_json(r.batch, r.record, *decoders)
    return obj


def time_json(r: TimeLookup, where: dict, decoders: tuple) -> dict:
    """The ``time_lookup`` row; ``where`` as for :func:`offset_json`."""
    c = r.chosen
    obj = {
        "type": "time_lookup",
        "v": SCHEMA_VERSION,
        **where,
        "target": r.target,
        "special": r.special,
        "status": r.status,
        "found": r.found,
        "offset": r.offset if r.found else -1,
        "timestamp": r.timestamp if r.found else -1,
        "reason": time_reason(r),
        "segments": r.segments,
        "logStartOffset": r.log_start,
        "logStartOffsetFile": r.log_start_file,
        "logEndOffset": r.log_end,
        "skippedSegments": [
            {
                "segment": s.segment.name,
                "path": s.segment.log,
                "baseOffset": s.segment.base_offset,
                "largestTimestamp": s.timestamp,
                "source": s.source,
            }
            for s in r.skipped
        ],
        "segment": None
        if c is None
        else {
            "segment": c.segment.name,
            "path": c.segment.log,
            "baseOffset": c.segment.base_offset,
            "largestTimestamp": c.timestamp,
            "source": c.source,
        },
        "timeIndex": None
        if r.time_entry is None
        else {
            "entry": r.time_slot if r.time_slot >= 0 else None,
            "timestamp": r.time_entry.timestamp,
            "offset": r.time_entry.offset,
        },
        "index": index_json(r.index),
        "scan": scan_json(r.scan),
        "offsetLookup": None,
        "batch": None,
        "record": None,
        "notes": r.notes,
    }
    if r.by_offset is not None:
        obj["offsetLookup"] = offset_json(r.by_offset, where, decoders)
        obj["offsetLookup"].pop("batch")
        obj["offsetLookup"].pop("record")
    if r.record is not None:
        obj["batch"], obj["record"] = batch_and_record_json(r.batch, r.record, *decoders)
    return obj


def lookup_row(r: OffsetLookup | TimeLookup, where: dict, decoders: tuple) -> dict:
    """The ``offset_lookup`` or the ``time_lookup`` row of ``r`` (:func:`offset_json`, :func:`time_json`)."""
    return offset_json(r, where, decoders) if isinstance(r, OffsetLookup) else time_json(r, where, decoders)


def write_json(out, obj: dict) -> None:
    out.write((dumps(obj) + "\n").encode("utf-8", "replace"))
    out.flush()
