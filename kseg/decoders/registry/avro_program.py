"""An Avro writer schema compiled once into the program ``kseg._avro`` reads payloads with, writing the
text :mod:`kseg.decoders.registry.avro`'s renderer writes, byte for byte (docs/schemas.md, "Speed").

The program is a flat array of int32 nodes, each ``[op, length, arguments..., children...]`` (the
layout is ``kseg/_avro.c``'s), and a tuple of constant texts: a record field's ``{"name":`` or
``,"name":``, a record's ``}``, a union branch's ``{"branch":``, an enum's quoted symbols.  It follows
the renderer's rules, its quirks included: a union branch of a Python type an earlier branch has too
(``["int", "long"]``, ``["float", "double"]``) prints as that earlier branch, as the renderer's
type test picks it.  A payload the compiled reader does not take (any corrupt one) is read by the
Python path, which gives its text or its reason: :meth:`AvroCodec.decode`.
"""

from __future__ import annotations

import struct
from json.encoder import encode_basestring
from typing import Any, Callable

from kseg.avro_engine import compiled_module
from kseg.decoders.jsonconv import quote
from kseg.decoders.registry.avro_bound import leaves, min_width

(NULL, BOOL, LONG, FLOAT, DOUBLE, STRING, BYTES, FIXED, ENUM, RECORD, ARRAY, MAP, UNION, CALL) = range(14)

#: a plain (unnamed) branch's Python type class in the renderer's union test (``_PY_TYPES``)
_CLASS = {
    "boolean": "bool",
    "int": "int",
    "long": "int",
    "float": "float",
    "double": "float",
    "string": "str",
    "bytes": "bytes",
    "array": "list",
    "map": "dict",
}
_NAMED = ("record", "error", "enum", "fixed")


def build(schema: Any, names: dict, json: bool = False) -> Any:
    """The compiled reader of ``schema`` (fastavro's parsed form, logical types stripped), or None when
    ``kseg._avro`` does not run here.  ``json``: it writes a JSON row's text of the value (what
    :func:`kseg.jsonlines.dumps` writes of the text parsed), not the console consumer's text."""
    module, _ = compiled_module()
    if module is None:
        return None
    ops, consts = compile_program(schema, names, encode_basestring if json else quote)
    return module.Program(struct.pack(f"={len(ops)}i", *ops), tuple(consts), json)


def compile_program(schema: Any, names: dict, quoted: Callable[[str], str] = quote) -> tuple[list[int], list[bytes]]:
    """(the int32 nodes, the constant texts) of ``schema``; ``quoted``: how the texts quote a name."""
    c = _Compiler(names, quoted)
    c.node(schema, {})
    return c.ops, c.consts


class _Compiler:
    def __init__(self, names: dict, quote: Callable[[str], str]) -> None:
        self.quote = quote
        self.names = names
        self.ops: list[int] = []
        self.consts: list[bytes] = []
        self.const_at: dict[bytes, int] = {}

    def const(self, text: str) -> int:
        data = text.encode("utf-8")
        if data not in self.const_at:
            self.const_at[data] = len(self.consts)
            self.consts.append(data)
        return self.const_at[data]

    def begin(self, *head: int) -> int:
        at = len(self.ops)
        self.ops.extend(head[:1] + (0,) + head[1:])
        return at

    def end(self, at: int) -> None:
        self.ops[at + 1] = len(self.ops) - at

    def node(self, schema: Any, stack: dict[str, int], single: bool | None = None) -> None:
        """``schema``'s node; ``stack``: the records being compiled, name -> pc; ``single``: how a float or
        double prints when a union's branch renders as another's (None: as its own type)."""
        if isinstance(schema, str):
            if schema in self.names:
                if schema in stack:  # a recursive record: a call back to its node
                    self.end(self.begin(CALL, stack[schema]))
                    return
                self.node(self.names[schema], stack, single)
                return
            self.primitive(schema, single)
            return
        if isinstance(schema, list):
            self.union(schema, stack)
            return
        kind = schema["type"]
        if kind in ("record", "error"):
            at = self.begin(RECORD, len(schema["fields"]), self.const("}" if schema["fields"] else "{}"))
            name = schema.get("name")
            inner = {**stack, name: at} if name else stack
            for i, f in enumerate(schema["fields"]):
                self.ops.append(self.const(("," if i else "{") + self.quote(f["name"]) + ":"))
                self.node(f["type"], inner)
            self.end(at)
        elif kind == "enum":
            first = len(self.consts)  # the symbols in order, quoted: the index picks one
            self.consts.extend(self.quote(symbol).encode("utf-8") for symbol in schema["symbols"])
            self.end(self.begin(ENUM, len(schema["symbols"]), first))
        elif kind == "fixed":
            self.end(self.begin(FIXED, int(schema["size"])))
        elif kind in ("array", "map"):
            at = self.begin(ARRAY if kind == "array" else MAP, 0, 0)
            item = schema["items"] if kind == "array" else schema["values"]
            width = min_width(item, self.names) + (kind == "map")  # a map's key takes at least its length
            self.ops[at + 2] = width
            self.ops[at + 3] = leaves(item, self.names) if width == 0 else 0  # an item's values of no byte
            self.node(item, stack)
            self.end(at)
        else:
            self.primitive(kind, single)

    def primitive(self, kind: str, single: bool | None) -> None:
        simple = {"null": NULL, "boolean": BOOL, "int": LONG, "long": LONG, "string": STRING, "bytes": BYTES}
        if kind in simple:
            self.end(self.begin(simple[kind]))
        elif kind in ("float", "double"):
            as_single = (kind == "float") if single is None else single
            self.end(self.begin(FLOAT if kind == "float" else DOUBLE, int(as_single)))
        else:
            raise ValueError(f"unknown Avro type {kind!r}")

    def kind(self, branch: Any) -> str:
        if isinstance(branch, str):
            return self.names[branch]["type"] if branch in self.names else branch
        return branch["type"]

    def union(self, branches: list, stack: dict[str, int]) -> None:
        at = self.begin(UNION, len(branches), *([0, 0] * len(branches)))
        for i, b in enumerate(branches):
            kind = self.kind(b)
            self.ops[at + 3 + 2 * i] = len(self.ops)
            if b == "null":
                self.ops[at + 4 + 2 * i] = -1
                self.end(self.begin(NULL))
                continue
            label, single = branch_name(b), None
            if kind not in _NAMED:  # the renderer's type test: the first plain branch of the value's class
                first = next(x for x in branches if x != "null" and _CLASS.get(self.kind(x)) == _CLASS[kind])
                label = branch_name(first)
                if _CLASS[kind] == "float":
                    single = self.kind(first) == "float"
            self.ops[at + 4 + 2 * i] = self.const("{" + self.quote(label) + ":")
            self.node(b, stack, single)
        self.end(at)


def branch_name(branch: Any) -> str:
    """A union branch's name in Avro's JSON encoding: a primitive's type, a named type's (full) name."""
    if isinstance(branch, str):
        return branch
    if isinstance(branch, dict):
        return branch.get("name") or branch["type"]
    return "union"
