"""One JSON Lines form for everything kseg writes as JSON (dump, verify-index, lookups, reports).

Compact separators, non-ASCII kept as UTF-8, and the three characters some
line readers treat as line breaks (U+0085, U+2028, U+2029) escaped, so one
object is always exactly one line whatever tool splits the stream.
"""

from __future__ import annotations

import json

SCHEMA_VERSION = 3  # "v" in every row: docs/json-output.md, docs/kseg.schema.json
SCHEMA_FILE = "kseg.schema.json"  # shipped in kseg/ (package data) and docs/

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def dumps(obj) -> str:
    """``obj`` as one JSON line (without the newline)."""
    text = _encode(obj)
    if "\x85" in text or "\u2028" in text or "\u2029" in text:
        text = text.translate(_LINE_BREAKS)
    return text
