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

Where ``kseg._avro`` runs (:mod:`kseg.avro_engine`), a payload is first read by the compiled reader
(:mod:`.avro_program`), which writes this module's text byte for byte or hands the payload back; this
module's reader (:meth:`AvroCodec.decode_python`) is the reference and reads what it hands back.
"""

from __future__ import annotations

import io
import json
import math
import struct
from functools import lru_cache
from json.encoder import encode_basestring  # C: the same escapes as Jackson's but lowercase \u00xx
from typing import Any, Callable

from kseg.decoders.jsonconv import quote as jackson_quote
from kseg.decoders.registry.avro_bound import Bound, needs_bound
from kseg.decoders.registry.avro_program import branch_name, build

Render = Callable[[Any], str]


def quote(s: str) -> str:
    """Jackson's string literal (:func:`kseg.decoders.jsonconv.quote`), by Python's C encoder when no control
    character is escaped as ``\\u00XX`` (Jackson writes its hex digits upper case)."""
    text = encode_basestring(s)
    return text if "\\u00" not in text else jackson_quote(s)


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
        self._render: Render | None = None  # made when the Python path first reads
        self.compiled = _compiled(self.schema, named)
        self._json: Any = None  # the compiled reader writing JSON rows' text, made when first asked for
        # arrays of items of no byte: their count bounded before fastavro builds the list (else None)
        self._bound = Bound(self.schema, named) if needs_bound(self.schema, named) else None

    @property
    def render(self) -> Render:
        """The generated renderer of this schema's values (made once, when first needed)."""
        if self._render is None:
            self._render = _compile(self.schema, self._names)
        return self._render

    def decode(self, data: bytes) -> str:
        if self.compiled is not None:
            text = self.compiled.decode(data)
            if text is not None:
                return text
        return self.decode_python(data)

    def decode_json(self, data: bytes) -> str | None:
        """The value's text in a JSON row (:class:`kseg.jsonlines.Raw`), by the compiled reader: what
        ``json.loads`` of :meth:`decode`'s text encoded again would be; None where it does not read the
        payload (then the caller parses :meth:`decode`'s text, or gives its reason)."""
        if self.compiled is None:
            return None
        if self._json is None:
            self._json = _compiled(self.schema, self._names, json=True)
        try:
            return self._json.decode(data)
        except ValueError:  # refused: decode gives the reason
            return None

    def bound(self, data: bytes) -> None:
        """ValueError when ``data`` claims more items of no byte than the compiled reader reads: checked
        before fastavro reads it, here or in typed export (:mod:`.avro_bound`)."""
        if self._bound is not None:
            self._bound.check(data)

    def decode_python(self, data: bytes) -> str:
        """The reference path: fastavro's reader and the generated renderer (also every payload the compiled
        reader does not take, so its text or its reason is this path's)."""
        if self._bound is not None:  # inline: the common schema pays one test
            self._bound.check(data)
        fo = io.BytesIO(data)
        try:
            value = self._read(fo, self.schema, None, False, False, "replace", True)
        except EOFError:
            raise ValueError(f"the Avro datum runs past the end of the {len(data)} bytes after the id") from None
        if fo.tell() != len(data):
            raise ValueError(f"{len(data) - fo.tell()} bytes left after the Avro datum")
        return self.render(value)


def _compiled(schema: Any, names: dict, json: bool = False) -> Any:
    """``kseg._avro``'s reader of ``schema`` (:mod:`.avro_program`), or None: the Python path reads."""
    try:
        return build(schema, names, json)
    except (ValueError, KeyError, TypeError, RecursionError, struct.error, StopIteration):
        return None  # a schema the compiler does not take: fastavro reads it


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
    digits, exponent = _shortest(abs(value))  # Java's computerized notation: d.dddE<exp>
    mant = digits[0] + "." + (digits[1:] or "0")
    return ("-" if value < 0 else "") + f"{mant}E{exponent}"


def _shortest(a: float) -> tuple[str, int]:
    """The significant digits of ``repr(a)`` (``a > 0``) and the decimal exponent of the first: ``1.5e-05``
    -> ("15", -5), ``12345678.0`` -> ("12345678", 7), ``0.000512`` -> ("512", -4).  The exponent is
    repr's own (``f"{a:e}"`` rounds to 7 digits: 9.9999999e-4 would read as E-3)."""
    mantissa, _, exp = repr(a).partition("e")
    digits = mantissa.replace(".", "").strip("0") or "0"
    if exp:  # repr's scientific form is d.ddd
        return digits, int(exp)
    whole, _, fraction = mantissa.partition(".")
    if whole != "0":
        return digits, len(whole) - 1
    return digits, -(len(fraction) - len(fraction.lstrip("0")) + 1)


def _compile(schema: Any, names: dict) -> Render:
    """A renderer for ``schema`` (fastavro's parsed form): value -> its JSON text, made as Python source
    (records, arrays and maps inlined into one expression: no call per field) and compiled once."""
    return _Gen(names).function(schema, ())


def _pending(v: Any) -> str:
    raise AssertionError("a recursive type's renderer is called before it is made")


def _single(x: float) -> str:
    return java_float_text(x, True)


def _cached_single() -> Callable[[float], str]:
    """:func:`_single` with a cache; 0.0 and -0.0 (equal keys, different texts) are not cached."""
    cached = lru_cache(maxsize=4096)(_single)
    return lambda x: cached(x) if x else _single(x)


def _double(x: float) -> str:
    return java_float_text(x, False)


def _bytes_text(v: bytes) -> str:
    return quote(bytes(v).decode("latin-1"))


_PRIMITIVE_EXPR = {
    "null": "'null'",
    "boolean": "('true' if {v} else 'false')",
    "int": "str({v})",
    "long": "str({v})",
    "float": "ff({v})",
    "double": "fd({v})",
    "string": "q({v})",
    "bytes": "qb({v})",
    "fixed": "qb({v})",
    "enum": "q({v})",
}


class _Gen:
    """Python source for Avro's JSON encoding of a schema's values."""

    def __init__(self, names: dict) -> None:
        self.names = names
        self.recursive: dict[str, Render] = {}
        self.ns: dict[str, Any] = {
            "q": quote,
            "qb": _bytes_text,
            "ff": _cached_single(),  # floats repeat: Java's text of each, once
            "fd": _double,
            "R": self.recursive,
        }
        self.count = 0

    def function(self, schema: Any, stack: tuple) -> Render:
        render: Render = eval("lambda v: " + self.expr(schema, "v", stack), self.ns)  # noqa: S307 - our own source
        return render

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def expr(self, schema: Any, var: str, stack: tuple) -> str:
        if isinstance(schema, str):
            if schema in self.names:
                if schema in stack:  # a recursive type: through its function, made once
                    self.recursive.setdefault(schema, None)  # type: ignore[arg-type]
                    return f"R[{schema!r}]({var})"
                return self.expr(self.names[schema], var, stack)
            return self.primitive(schema, var)
        if isinstance(schema, list):
            name = self.fresh("u")
            self.ns[name] = self.union(schema, stack)
            return f"{name}({var})"
        kind = schema["type"]
        if kind in ("record", "error"):
            return self.record(schema, var, stack)
        if kind == "array":
            e = self.fresh("e")
            inner = self.expr(schema["items"], e, stack)
            return "('[' + ','.join([" + inner + " for " + e + " in " + var + "]) + ']')"
        if kind == "map":
            k, e = self.fresh("k"), self.fresh("e")
            inner = self.expr(schema["values"], e, stack)
            pairs = "q(" + k + ") + ':' + " + inner + " for " + k + ", " + e + " in " + var + ".items()"
            return "('{' + ','.join([" + pairs + "]) + '}')"
        return self.primitive(kind, var)

    def record(self, schema: dict, var: str, stack: tuple) -> str:
        name = schema.get("name")
        inner_stack = stack + ((name,) if name else ())
        parts = []
        for i, f in enumerate(schema["fields"]):
            parts.append(repr(("," if i else "{") + quote(f["name"]) + ":"))
            parts.append(self.expr(f["type"], f"{var}[{f['name']!r}]", inner_stack))
        parts.append("'}'")
        text = "''.join((" + ", ".join(parts) + "))" if len(parts) > 1 else "'{}'"
        if name and name in self.recursive and self.recursive[name] is None:
            self.recursive[name] = _pending  # made below, once: its own recursive uses call it
            self.recursive[name] = self.function(schema, stack)
        return text

    def primitive(self, kind: str, var: str) -> str:
        if kind not in _PRIMITIVE_EXPR:
            raise ValueError(f"unknown Avro type {kind!r}")
        return _PRIMITIVE_EXPR[kind].format(v=var)

    def union(self, branches: list, stack: tuple) -> Render:
        named: dict[str, Render] = {}
        plain: list[tuple[str, Any, Render]] = []
        for b in branches:
            if b == "null":
                continue
            name = branch_name(b)
            render = self.function(b, stack)
            kind = (
                self.names[b]["type"]
                if isinstance(b, str) and b in self.names
                else (b if isinstance(b, str) else b["type"])
            )
            if kind in ("record", "error", "enum", "fixed"):
                named[name] = render
            else:
                plain.append((name, _PY_TYPES.get(kind), render))

        def render_union(v: Any) -> str:
            if v is None:
                return "null"
            if isinstance(v, tuple):  # fastavro's (name, value) for a named branch (return_named_type)
                return "{" + quote(v[0]) + ":" + named[v[0]](v[1]) + "}"
            for name, pytype, render in plain:
                if pytype is not None and isinstance(v, pytype) and not (pytype is int and isinstance(v, bool)):
                    return "{" + quote(name) + ":" + render(v) + "}"
            raise ValueError(f"a value of Python type {type(v).__name__} matches no branch of the union")

        return render_union


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
