"""Kafka's generated ``*JsonConverter.write`` and Jackson's compact serialisation.

:func:`to_tree` builds the JSON tree that ``XJsonConverter.write(message,
version)`` builds (Kafka's ``JsonConverterGenerator``), as plain Python values:
``dict`` (ObjectNode, insertion-ordered), ``list`` (ArrayNode), ``str``
(TextNode), ``int`` (Short/Int/LongNode), ``float`` (DoubleNode), ``bool``,
``None`` (NullNode), ``bytes`` (BinaryNode) and :class:`JavaDouble` (DoubleNode).  The converter's rules:

* fields in spec order, named in camelCase; fields the version does not carry
  are omitted (a non-ignorable one holding a non-default value is an error:
  "Attempted to write a non-default X at version V");
* tagged fields appear only when they differ from their default
  (``FieldSpec.generateNonDefaultValueCheck``); unknown tagged fields never;
* int8/int16/int32/uint16/int64/uint32 are JSON numbers, bool true/false,
  uuid the ``Uuid.toString()`` text (URL-safe base64, no padding), bytes a
  BinaryNode (standard base64 with padding), float64 a DoubleNode, null
  ``null``, records an empty BinaryNode (``write(msg, v)`` serialises records).

:func:`dumps` is Jackson 2.16's ``JsonNode.toString()``: no spaces; strings
escape ``"`` and ``\\``, ``\\b \\t \\n \\f \\r`` with their short forms and the
other control characters below U+0020 as ``\\u00XX`` (uppercase hex); nothing
else is escaped (not ``/``, not DEL, not non-ASCII).  Doubles print as Java's
``Double.toString``; NaN and infinities as quoted strings.
"""

from __future__ import annotations

import base64
import json
import math
import re
from typing import Any, Callable

from kseg.decoders.jvm import UnsupportedVersionException, unsupported_version, uuid_to_string
from kseg.decoders.schema import Field, FieldType, Struct, require_struct
from kseg.decoders.versions import Versions, branch

# -- JsonConverter.write ---------------------------------------------------------------------------


def to_tree(struct: Struct, value: dict, version: int) -> dict:
    """``<Struct>JsonConverter.write(value, version)`` as a Python tree."""
    plan = struct.json_plans.get(version)
    if plan is None:
        plan = struct.json_plans[version] = _compile(struct, version)
    return plan(value)


def is_default(field: Field, value: Any, nullable: Versions) -> bool:
    """Negation of ``FieldSpec.generateNonDefaultValueCheck`` (the generated ``if``)."""
    kind = field.type.kind
    d = field.default_text
    if kind in ("array", "bytes"):
        if d == "null":
            return value is None
        if nullable.empty:
            return value is not None and len(value) == 0
        return value is not None and len(value) == 0
    if kind in ("string", "struct", "uuid"):
        if d == "null":
            return value is None
        return value is not None and value == field.default()
    return value == field.default()


def _element_converter(ftype: FieldType, struct: Struct | None, version: int) -> Callable[[Any], Any]:
    kind = ftype.kind
    if kind == "uuid":
        return uuid_to_string
    if kind == "records":
        return lambda v: b""
    if kind == "struct":
        resolved = require_struct(struct, repr(ftype))
        return lambda v: to_tree(resolved, v, version)
    if kind == "float64":
        return JavaDouble
    if kind == "array":
        elem = _element_converter(ftype.element, struct, version)
        return lambda v: [elem(x) for x in v]
    return lambda v: v


class JavaDouble:
    """A DoubleNode's value; kept apart from ``float`` so the fast encoder hands it back."""

    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JavaDouble) and (other.value == self.value or self.value != self.value != other.value)

    def __repr__(self) -> str:
        return f"JavaDouble({self.value!r})"


def _value_converter(field: Field, version: int) -> Callable[[Any], Any]:
    conv = _element_converter(field.type, field.struct, version)
    if field.type.kind in ("bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "uuid"):
        return conv
    return lambda v: None if v is None else conv(v)


def _compile(struct: Struct, version: int) -> Callable[[dict], dict]:
    taken, _ = branch(struct.versions, struct.parent, version)
    if not taken:
        return unsupported_version(f"Can't read version {version} of {struct.name}")

    cur = struct.current
    # (name, converter, tagged-field default check or None, non-ignorable check or None)
    ops: list[tuple] = []
    for f in struct.fields:
        present, present_versions = branch(f.versions, cur, version)
        if present:
            tagged, _ = branch(f.tagged, present_versions, version)
            ops.append((f.name, _value_converter(f, version), f if tagged else None, None))
        elif not f.ignorable:
            ops.append((f.name, None, None, f))

    def plan(value: dict) -> dict:
        out: dict = {}
        for name, conv, tagged_field, strict_field in ops:
            v = value[name]
            if conv is None:
                if not is_default(strict_field, v, strict_field.nullable):
                    raise UnsupportedVersionException(f"Attempted to write a non-default {name} at version {version}")
                continue
            if tagged_field is not None and is_default(tagged_field, v, tagged_field.nullable):
                continue
            out[name] = conv(v)
        return out

    return plan


# -- Jackson ---------------------------------------------------------------------------------------

_ESCAPES = {i: f"\\u{i:04X}" for i in range(0x20)}
_ESCAPES.update({0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"})


def quote(s: str) -> str:
    """A JSON string literal as Jackson writes it."""
    return '"' + s.translate(_ESCAPES) + '"'


class _SlowPath(Exception):
    pass


def _fast_default(obj: Any) -> Any:
    if isinstance(obj, (bytes, bytearray)):
        return base64.b64encode(obj).decode("ascii")
    raise _SlowPath  # a double: Java's Double.toString is not Python's repr


_FAST = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_fast_default, check_circular=False)
# Python's encoder escapes exactly Jackson's set but writes \u00xx in lowercase hex
_LOWER_HEX_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u00([01][0-9a-f])")


def _upper_hex(m: re.Match) -> str:
    return m.group(1) + "\\u00" + m.group(2).upper()


def dumps(node: Any) -> str:
    """Jackson ``JsonNode.toString()`` of a tree built by :func:`to_tree`."""
    try:
        text = _FAST.encode(node)
    except _SlowPath:
        parts: list[str] = []
        _write(node, parts.append)
        return "".join(parts)
    if "\\u00" in text:
        text = _LOWER_HEX_ESCAPE.sub(_upper_hex, text)
    return text


def _write(node: Any, out: Callable[[str], None]) -> None:
    if isinstance(node, str):
        out(quote(node))
    elif isinstance(node, bool):
        out("true" if node else "false")
    elif isinstance(node, int):
        out(str(node))
    elif node is None:
        out("null")
    elif isinstance(node, dict):
        out("{")
        first = True
        for k, v in node.items():
            if not first:
                out(",")
            first = False
            out(quote(k))
            out(":")
            _write(v, out)
        out("}")
    elif isinstance(node, list):
        out("[")
        for i, v in enumerate(node):
            if i:
                out(",")
            _write(v, out)
        out("]")
    elif isinstance(node, (bytes, bytearray)):
        out('"' + base64.b64encode(node).decode("ascii") + '"')
    elif isinstance(node, (float, JavaDouble)):
        d = node.value if isinstance(node, JavaDouble) else node
        text = java_double(d)
        out(f'"{text}"' if math.isnan(d) or math.isinf(d) else text)
    else:  # pragma: no cover - programming error
        raise TypeError(f"not a JSON node: {type(node).__name__}")


# -- Double.toString -------------------------------------------------------------------------------

# Digits dropped from integral doubles >= 2**54 (JDK FloatingDecimal's table, entries 0..8 reachable).
_INSIGNIFICANT = (0, 0, 0, 0, 1, 1, 1, 2, 2)


def _java_layout(sign: str, digits: str, point: int) -> str:
    """Java's layout of decimal ``0.<digits> * 10**point``: plain for 1e-3 <= |d| < 1e7."""
    if 0 < point <= 7:
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits)) + ".0"
        return sign + digits[:point] + "." + digits[point:]
    if -3 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


def java_double(d: float) -> str:
    """``Double.toString(d)`` as JDK 17 prints it.

    Integral values below 2**63 print their exact digits (JDK's "long" fast
    path, rounding away 1-2 digits above 2**54); other values print the
    shortest round-tripping digits.  JDK 17 deviates from shortest for some
    values around 1e21..1e26 (e.g. 2.42E22 prints 2.4199999999999998E22);
    those are not reproduced.
    """
    if d != d:
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    sign = "-" if d < 0 else ""
    a = abs(d)
    bin_exp = math.frexp(a)[1] - 1
    if a >= 1 and a == int(a) and bin_exp <= 62:
        lv = int(a)
        dropped = 0
        p2 = bin_exp - 54
        if bin_exp > 53 and 1 < p2 < len(_INSIGNIFICANT) and _INSIGNIFICANT[p2]:
            dropped = _INSIGNIFICANT[p2]
            pow10 = 10**dropped
            lv, residue = divmod(lv, pow10)
            if residue >= pow10 >> 1:
                lv += 1
        s = str(lv)
        return _java_layout(sign, s.rstrip("0"), len(s) + dropped)
    mant, _, exp = repr(a).partition("e")
    ip, _, fp = mant.partition(".")
    all_digits = ip + fp
    lead = len(all_digits) - len(all_digits.lstrip("0"))
    return _java_layout(sign, all_digits.strip("0") or "0", len(ip) + int(exp or 0) - lead)
