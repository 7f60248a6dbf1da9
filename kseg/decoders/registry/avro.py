"""Avro payloads, decoded with the writer schema of their id (fastavro's compiled reader) and
printed as the registry's console consumer prints them.

``kafka-avro-console-consumer`` (``AvroMessageFormatter.writeTo`` -> ``AvroSchemaUtils.toJson``)
writes the datum with Avro's ``JsonEncoder`` and logical-type conversions off (the deserializer's
``avro.use.logical.type.converters`` defaults to false): Avro's JSON encoding.  So a union's
non-null value is wrapped in ``{"<branch>": value}`` (a named branch by its full name), bytes and
fixed are strings of one character per byte (ISO-8859-1), enums their symbol, and logical types
print as their underlying type: ``decimal`` as its bytes, ``date`` and ``time-millis`` as ints,
``time-micros`` and ``timestamp-*`` as longs, ``uuid`` as its string.  Floats print as Java's
``Float.toString``/``Double.toString``.
"""

from __future__ import annotations

import io
import json
import math
import struct
from json.encoder import encode_basestring  # C: the same escapes as Jackson's but lowercase \u00xx
from typing import Any, Callable

from kseg.decoders.jsonconv import quote as jackson_quote

Render = Callable[[Any, list], None]


def quote(s: str) -> str:
    """Jackson's string literal (:func:`kseg.decoders.jsonconv.quote`), by Python's C encoder when no control
    character is escaped as ``\\u00XX`` (Jackson writes its hex digits upper case)."""
    text = encode_basestring(s)
    return text if "\\u00" not in text else jackson_quote(s)


_LATIN1 = {i: chr(i) for i in range(256)}


def strip_logical(node: Any) -> Any:
    """The schema without ``logicalType``: values read as their underlying Avro type."""
    if isinstance(node, dict):
        return {k: strip_logical(v) for k, v in node.items() if k != "logicalType"}
    if isinstance(node, list):
        return [strip_logical(v) for v in node]
    return node


class AvroCodec:
    """One writer schema (with its references), parsed once: bytes -> the JSON text."""

    def __init__(self, schema_text: str, references: list[str]) -> None:
        from fastavro import parse_schema  # kseg[schemas]
        from fastavro import schemaless_reader as reader

        named: dict = {}
        for text in references:  # each referenced schema parsed into the names the main one uses
            parse_schema(strip_logical(json.loads(text)), named_schemas=named)
        raw = json.loads(schema_text)
        self.schema = parse_schema(strip_logical(raw), named_schemas=named)
        self._read = reader
        self._names = named
        self.render = _compile(self.schema, self._names, {})

    def decode(self, data: bytes) -> str:
        fo = io.BytesIO(data)
        try:
            value = self._read(fo, self.schema, None, False, False, "replace", True)
        except EOFError:
            raise ValueError(f"the Avro datum runs past the end of the {len(data)} bytes after the id") from None
        if fo.tell() != len(data):
            raise ValueError(f"{len(data) - fo.tell()} bytes left after the Avro datum")
        out: list[str] = []
        self.render(value, out)
        return "".join(out)


_FLOAT32 = struct.Struct(">f")


def java_float_text(x: float, single: bool) -> str:
    """Java's ``Float.toString``/``Double.toString`` (shortest digits that read back; scientific below
    1e-3 and from 1e7)."""
    if not single:
        r = repr(x)
        if "e" not in r and "n" not in r and 1e-3 <= abs(x) < 1e7:
            return r  # Python's shortest repr is Java's text in the plain range ("12345.678", "0.5")
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1, x) < 0 else "0.0"
    if single:
        pack, unpack = _FLOAT32.pack, _FLOAT32.unpack
        for p in range(1, 10):
            text = f"{x:.{p}g}"
            if unpack(pack(float(text)))[0] == x:
                break
        r = repr(float(text))
        if "e" not in r and 1e-3 <= abs(x) < 1e7:
            return r
    else:
        r = repr(x)
    mantissa, _, exp = r.partition("e")
    value = float(r)
    if 1e-3 <= abs(value) < 1e7:
        if exp:  # Python chose exponent form for a value Java prints plainly
            r = f"{value:f}".rstrip("0")
        text = r if "." in r else r + ".0"
        return text[:-1] + "0" if text.endswith(".") else text
    digits_text = f"{abs(value):e}"  # d.dddddde+XX -> Java's d.dddE<exp>
    m, _, e = digits_text.partition("e")
    shortest = repr(abs(value)).partition("e")[0].replace(".", "").lstrip("0") or "0"
    shortest = shortest.rstrip("0") or "0"
    mant = shortest[0] + "." + (shortest[1:] or "0")
    return ("-" if value < 0 else "") + f"{mant}E{int(e)}"


def _compile(schema: Any, names: dict, seen: dict) -> Render:
    """A renderer for ``schema`` (fastavro's parsed form): value -> JSON text pieces."""
    if isinstance(schema, str):
        if schema in names:
            key = schema
            if key not in seen:
                seen[key] = None  # a placeholder: recursive types render through a late lookup
                seen[key] = _compile(names[schema], names, seen)
            return lambda v, out: seen[key](v, out)
        return _primitive(schema)
    if isinstance(schema, list):
        return _union(schema, names, seen)
    kind = schema["type"]
    if kind == "record" or kind == "error":
        name = schema.get("name")
        if name and name in seen and seen[name] is not None:
            return seen[name]
        # (name, its JSON text with "{" or "," and ":", how: a string, a number, else the renderer)
        fields: list[tuple[str, str, int, Render]] = []
        if name:
            seen[name] = lambda v, out: _record(fields, v, out)
        for i, f in enumerate(schema["fields"]):
            head = ("," if i else "{") + quote(f["name"]) + ":"
            how = _STRING if f["type"] == "string" else _NUMBER if f["type"] in ("int", "long") else _OTHER
            fields.append((f["name"], head, how, _compile(f["type"], names, seen)))
        return lambda v, out: _record(fields, v, out)
    if kind == "enum" or kind == "string":
        return lambda v, out: out.append(quote(v))
    if kind in ("fixed", "bytes"):
        return _bytes
    if kind == "array":
        item = _compile(schema["items"], names, seen)
        return lambda v, out: _array(item, v, out)
    if kind == "map":
        val = _compile(schema["values"], names, seen)
        return lambda v, out: _map(val, v, out)
    return _primitive(kind)


_STRING, _NUMBER, _OTHER = 0, 1, 2


def _record(fields: list, v: dict, out: list) -> None:
    if not fields:
        out.append("{}")
        return
    append = out.append
    for name, head, how, render in fields:  # strings and ints inline: most fields, no call each
        if how == _STRING:
            append(head + quote(v[name]))
        elif how == _NUMBER:
            append(head + str(v[name]))
        else:
            append(head)
            render(v[name], out)
    append("}")


def _array(item: Render, v: list, out: list) -> None:
    out.append("[")
    for i, x in enumerate(v):
        if i:
            out.append(",")
        item(x, out)
    out.append("]")


def _map(val: Render, v: dict, out: list) -> None:
    out.append("{")
    for i, (k, x) in enumerate(v.items()):
        if i:
            out.append(",")
        out.append(quote(k))
        out.append(":")
        val(x, out)
    out.append("}")


def _bytes(v: bytes, out: list) -> None:
    out.append(quote(bytes(v).decode("latin-1")))


def _primitive(kind: str) -> Render:
    if kind == "null":
        return lambda v, out: out.append("null")
    if kind == "boolean":
        return lambda v, out: out.append("true" if v else "false")
    if kind in ("int", "long"):
        return lambda v, out: out.append(str(v))
    if kind in ("float", "double"):
        single = kind == "float"
        return lambda v, out: out.append(java_float_text(v, single))
    if kind == "string":
        return lambda v, out: out.append(quote(v))
    if kind in ("bytes", "fixed"):
        return _bytes
    raise ValueError(f"unknown Avro type {kind!r}")


_PY_TYPES = {
    "boolean": bool,
    "int": int,
    "long": int,
    "float": float,
    "double": float,
    "string": str,
    "bytes": (bytes, bytearray),
    "array": list,
    "map": dict,
}


def _branch_name(branch: Any) -> str:
    if isinstance(branch, str):
        return branch
    if isinstance(branch, dict):
        return branch.get("name") or branch["type"]
    return "union"


def _union(branches: list, names: dict, seen: dict) -> Render:
    named: dict[str, Render] = {}
    plain: list[tuple[str, Any, Render]] = []
    for b in branches:
        name = _branch_name(b)
        if b == "null":
            continue
        render = _compile(b, names, seen)
        kind = names[b]["type"] if isinstance(b, str) and b in names else (b if isinstance(b, str) else b["type"])
        if kind in ("record", "error", "enum", "fixed"):
            named[name] = render
        else:
            plain.append((name, _PY_TYPES.get(kind), render))

    def render_union(v: Any, out: list) -> None:
        if v is None:
            out.append("null")
            return
        if isinstance(v, tuple):  # fastavro's (name, value) for a named branch (return_named_type)
            name, inner = v
            out.append("{" + quote(name) + ":")
            named[name](inner, out)
            out.append("}")
            return
        for name, pytype, render in plain:
            if pytype is not None and isinstance(v, pytype) and not (pytype is int and isinstance(v, bool)):
                out.append("{" + quote(name) + ":")
                render(v, out)
                out.append("}")
                return
        raise ValueError(f"a value of Python type {type(v).__name__} matches no branch of the union")

    return render_union
