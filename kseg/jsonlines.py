"""One JSON Lines form for everything kseg writes as JSON (dump, verify-index, lookups, reports).

Compact separators, non-ASCII kept as UTF-8, and the three characters some
line readers treat as line breaks (U+0085, U+2028, U+2029) escaped, so one
object is always exactly one line whatever tool splits the stream.

A value already written as JSON text in that form (the registry decoder's
compiled reader writes a decoded payload so) goes into a row as a
:class:`Raw`, written as it is rather than parsed and encoded again.
"""

from __future__ import annotations

import json
import os

SCHEMA_VERSION = 3  # "v" in every row: docs/json-output.md, docs/kseg.schema.json
SCHEMA_FILE = "kseg.schema.json"  # shipped in kseg/ (package data) and docs/

_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}
#: what a Raw is encoded as first, then replaced by its text: no string of the data can be it (random)
_TOKEN = "\0kseg-raw-" + os.urandom(12).hex()
_QUOTED = json.dumps(_TOKEN)


class Raw(str):
    """A JSON value's text, written into a row as it is: what :func:`dumps` would write of the value
    (compact, non-ASCII as UTF-8; line breaks are escaped with the row's).  To the encoder it is a string,
    a token random to the process that no string of the data can be, replaced by ``text`` once encoded
    (no call back per row)."""

    text: str

    def __new__(cls, text: str) -> Raw:
        self = super().__new__(cls, _TOKEN)
        self.text = text
        return self

    def __eq__(self, other: object) -> bool:
        return type(other) is Raw and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"Raw({self.text!r})"


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def dumps(obj) -> str:
    """``obj`` as one JSON line (without the newline)."""
    text = _encode(obj)
    if _QUOTED in text:
        text = _splice(text, obj)
    if "\x85" in text or "\u2028" in text or "\u2029" in text:
        text = text.translate(_LINE_BREAKS)
    return text


def _splice(text: str, obj) -> str:
    """``text`` with each :class:`Raw`'s token replaced by its text, in the encoder's order."""
    n = text.count(_QUOTED)
    raws = [v.text for v in obj.values() if type(v) is Raw] if type(obj) is dict else []
    if len(raws) != n:  # some stand deeper (a lookup's record): the whole walk
        raws = list(_raws(obj))
    if len(raws) != n:
        raise ValueError("a Raw's place is not where the row was encoded")
    if n == 1:
        return text.replace(_QUOTED, raws[0])
    parts = text.split(_QUOTED)
    out = [parts[0]]
    for raw, part in zip(raws, parts[1:], strict=True):
        out += (raw, part)
    return "".join(out)


def _raws(o):
    if type(o) is Raw:
        yield o.text
    elif isinstance(o, str):
        return
    elif isinstance(o, dict):
        for v in o.values():
            yield from _raws(v)
    elif isinstance(o, (list, tuple)):
        for v in o:
            yield from _raws(v)
