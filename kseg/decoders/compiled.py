"""A struct's read plan compiled to one Python function per (struct, version), for the records that read well.

:mod:`kseg.decoders.decode` interprets a plan: a closure per field, a call per value.  Reading millions of
small records (``__remote_log_metadata``, ``__cluster_metadata``) that way costs tens of microseconds each.
:func:`compiled_plan` writes the same plan as Python source -- fixed-width runs of fields read by one
``struct.unpack_from``, one-byte varints inline, nested structs inline -- taking every
decision (which fields a version reads, compact or not, nullable or not, which tags) from the helpers the
interpreted plan takes them from, so the two cannot drift.

The compiled function is a fast path only: anything off its road (a multi-byte length, an unknown tag, bytes
that run short, invalid UTF-8, a null where none may be) raises inside it, and the record is read again by the
interpreted plan, which gives Kafka's exact value or exception.  Its own result, when it has one, is the same
``dict`` the interpreted plan builds (same keys in the same order, the same defaults).
"""

from __future__ import annotations

import struct as _struct
from collections.abc import Callable
from typing import Any

from kseg.decoders import layout
from kseg.decoders.jvm import int32
from kseg.decoders.schema import Field, FieldType, Struct
from kseg.decoders.versions import NONE, Versions
from kseg.decoders.wire import Reader

Plan = Callable[[Reader], dict]

_FORMATS = {
    "bool": "?",
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
    "uuid": "16s",
}


_MAX_DEPTH = 16  # structs inside one another (Kafka's schemas nest a few)


class _Off(Exception):
    """Raised by compiled code off its fast road: the interpreted plan reads the record instead."""


def _uvarint(data: bytes, p: int) -> tuple[int, int]:
    """A varint of more than one byte: ``Reader.uvarint`` at ``p`` -> (value, position after)."""
    r = Reader(data, p)
    return r.uvarint(), r.pos


def _compact_length(data: bytes, p: int) -> tuple[int, int]:
    value, p = _uvarint(data, p)
    return int32(value - 1), p


class _Writer:
    """Source lines and the constants they name, for one struct version and those nested in it.

    Fixed-width values wait in :attr:`run` to be read by one ``unpack_from`` with the ones after them, across
    the ends of nested structs; the lines that use them (a struct's dict, a check) wait in :attr:`after`
    until :meth:`flush` writes the read."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"_Off": _Off, "_uvarint": _uvarint, "_compact_length": _compact_length}
        self.counter = 0
        self.depth = 0  # structs being written inside one another
        self.run: list[tuple[str, str]] = []  # (variable, format) of the fixed-width values not yet read
        self.after: list[str] = []

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def constant(self, value: Any) -> str:
        name = self.fresh("_k")
        self.names[name] = value
        return name

    def fixed(self, var: str, fmt: str) -> None:
        self.run.append((var, fmt))

    def flush(self, lines: list[str]) -> list[str]:
        """``lines`` with the waiting values read and the lines waiting for them."""
        if self.run:
            fmt = _struct.Struct(">" + "".join(f for _, f in self.run))
            targets = "".join(v + ", " for v, _ in self.run)
            lines += [f"{targets}= {self.constant(fmt)}.unpack_from(data, p)", f"p += {fmt.size}"]
            self.run.clear()
        lines += self.after
        self.after = []
        return lines

    def block(self, lines: list[str]) -> list[str]:
        """``lines`` (with what waits flushed) indented as the body of an ``if``, ``else`` or ``for``."""
        return ["    " + line for line in self.flush(lines)]


class _Unsupported(Exception):
    """A type this compiler does not write: the struct keeps its interpreted plan."""


Whole = Callable[[bytes, int], "dict | None"]


def compiled_plan(struct: Struct, version: int, interpreted: Plan) -> tuple[Plan, Whole] | None:
    """``struct`` at ``version`` compiled: a plan falling back to ``interpreted`` off the fast road, and the
    fast road alone for a struct that ends its bytes (``data`` from ``pos`` -> the dict, or None: off the road,
    or bytes left after it); None when a nested struct's version is not readable or a type is not one
    compiled here."""
    w = _Writer()
    try:
        body = w.flush(_struct_lines(w, struct, version, "out"))
    except _Unsupported:
        return None
    w.names["_interpreted"] = interpreted
    read = ["        " + line for line in body]
    w.lines += ["def plan(r):", "    data, p, end = r.data, r.pos, r.end", "    try:"]
    w.lines += ["        if end != len(data) or type(data) is not bytes:", "            data = bytes(data[:end])"]
    w.lines += read + ["    except Exception:", "        out = None", "    if out is None:"]
    w.lines += ["        return _interpreted(r)", "    r.pos = p", "    return out"]
    w.lines += [
        "def whole(data, p):",
        "    try:",
        "        if type(data) is not bytes:",
        "            data = bytes(data)",
    ]
    w.lines += read + ["    except Exception:", "        return None", "    return out if p == len(data) else None"]
    code = compile("\n".join(w.lines), f"<kseg read plan {struct.name} v{version}>", "exec")
    exec(code, w.names)  # noqa: S102 - source written above from kseg's own schemas
    return w.names["plan"], w.names["whole"]


def _struct_lines(w: _Writer, struct: Struct, version: int, out: str) -> list[str]:
    """Lines reading ``struct`` at ``version`` into the dict ``out`` (nested structs written inline); its
    fixed-width values may still wait in ``w`` (:meth:`_Writer.flush`)."""
    if not layout.readable(struct, version) or w.depth > _MAX_DEPTH:
        raise _Unsupported(struct.name)
    w.depth += 1
    body: list[str] = []
    values: list[str] = []
    for field, narrowed in layout.field_layout(struct, version, frozenset()):
        var = w.fresh("v")
        values.append(f"{field.name!r}: {var}")
        if narrowed is None:
            w.after.append(f"{var} = {w.constant(field.default())}")
        elif field.type.kind in _FORMATS:
            w.fixed(var, _FORMATS[field.type.kind])
        else:
            body += _value(w, field, struct, narrowed, version, False, var)
    w.after.append(f"{out} = {{" + ", ".join(values) + "}")
    tags = layout.tag_layout(struct, version, frozenset())
    if tags is not None:
        body += _tagged(w, tags, struct, version, out)
    w.depth -= 1
    return body


def _uvarint_into(var: str) -> list[str]:
    return [f"{var} = data[p]", "p += 1", f"if {var} >= 0x80:", f"    {var}, p = _uvarint(data, p - 1)"]


def _tagged(
    w: _Writer, tags: dict[int, tuple[Field, Versions | None]], struct: Struct, version: int, out: str
) -> list[str]:
    """The tagged section: none (one zero byte), or each known tag read into ``out``; an unknown one, or one
    not valid for the version, is off the road (the interpreted plan keeps it aside or raises)."""
    known = [(number, field, present) for number, (field, present) in tags.items() if present is not None]
    if not known:  # any tag is off the road: the section is one zero byte, read with the values before it
        count = w.fresh("n")
        w.fixed(count, "B")
        w.after += [f"if {count}:", "    raise _Off"]
        return []
    before = w.flush([])  # the struct's dict, which the tags fill
    count, tag, size = w.fresh("n"), w.fresh("t"), w.fresh("z")
    loop = _uvarint_into(tag) + _uvarint_into(size)
    for i, (number, field, present) in enumerate(known):
        var = w.fresh("v")
        value = _value(w, field, struct, present, version, True, var) + [f"{out}[{field.name!r}] = {var}"]
        loop += [f"{'elif' if i else 'if'} {tag} == {number}:"] + w.block(value)
    loop += ["else:", "    raise _Off"]
    section = _uvarint_into(count) + [f"for _ in range({count}):"] + w.block(loop)
    return before + ["if data[p]:"] + w.block(section) + ["else:", "    p += 1"]


def _value(
    w: _Writer, field: Field, struct: Struct, possible: Versions, version: int, tagged: bool, var: str
) -> list[str]:
    """Lines reading one field's value into ``var`` (the decisions of ``kseg.decoders.decode._value_op``); a
    fixed-width value, or a struct's, may still wait in ``w``."""
    ftype = field.type
    if ftype.kind in _FORMATS:
        return _fixed(w, ftype, var)
    if ftype.kind == "struct":
        if not layout.struct_nullable(field, possible, version):
            return w.flush([]) + _struct_lines(w, field.struct_def, version, var)
        marker = w.fresh("m")
        head = _uvarint_into(marker) if tagged else [f"{marker} = data[p]", "p += 1"]
        test = f"{marker} <= 0" if tagged else f"{marker} >= 0x80"  # int8 < 0
        before = w.flush([])
        read = w.block(_struct_lines(w, field.struct_def, version, var))
        return before + head + [f"if {test}:", f"    {var} = None", "else:"] + read
    possible = layout.length_possible(field, struct, possible, version, tagged)
    flex = layout.field_flexible(field, struct)
    return w.flush([]) + _variable(w, flex, ftype, possible, field.nullable, version, var, field.struct)


def _fixed(w: _Writer, ftype: FieldType, var: str) -> list[str]:
    fmt = _struct.Struct(">" + _FORMATS[ftype.kind])
    return [f"{var}, = {w.constant(fmt)}.unpack_from(data, p)", f"p += {fmt.size}"]


def _variable(
    w: _Writer,
    flex: Versions,
    ftype: FieldType,
    possible: Versions,
    nullable: Versions,
    version: int,
    var: str,
    elem_struct: Struct | None,
) -> list[str]:
    """A length, then null, the string, the bytes or the array's elements (the decisions of
    ``kseg.decoders.decode._variable_length_op``)."""
    compact, null_ok = layout.length_shape(flex, possible, nullable, version)
    n = w.fresh("n")
    if compact:
        lines = [f"{n} = data[p] - 1", "p += 1", f"if {n} >= 0x7F:", f"    {n}, p = _compact_length(data, p - 1)"]
    else:
        fmt = ">h" if ftype.kind == "string" else ">i"
        lines = [f"{n}, = {w.constant(_struct.Struct(fmt))}.unpack_from(data, p)", f"p += {2 if fmt == '>h' else 4}"]
    lines += [f"if {n} < 0:", f"    {var} = None" if null_ok else "    raise _Off", "else:"]
    kind = ftype.kind
    if kind == "string":
        body = [
            f"if {n} > 0x7FFF or p + {n} > len(data):",
            "    raise _Off",
            f"{var} = data[p:p + {n}].decode('utf-8')",
            f"p += {n}",
        ]
    elif kind in ("bytes", "records"):
        body = [f"if p + {n} > len(data):", "    raise _Off", f"{var} = data[p:p + {n}]", f"p += {n}"]
    elif kind == "array":
        body = [f"if {n} > len(data) - p:", "    raise _Off", f"{var} = []", f"for _ in range({n}):"]
        elem, item = ftype.element, w.fresh("e")
        if elem.kind in ("string", "bytes"):
            each = _variable(w, flex, elem, possible, NONE, version, item, None)
        elif elem.kind == "struct":
            if elem_struct is None:  # pragma: no cover - schema error
                raise _Unsupported(f"array of {elem!r}")
            each = _struct_lines(w, elem_struct, version, item)
        elif elem.kind in _FORMATS:
            each = _fixed(w, elem, item)
        else:  # pragma: no cover - schema error
            raise _Unsupported(f"array of {elem!r}")
        body += w.block(each) + [f"    {var}.append({item})"]
    else:  # pragma: no cover - schema error
        raise _Unsupported(kind)
    return lines + ["    " + line for line in body]
