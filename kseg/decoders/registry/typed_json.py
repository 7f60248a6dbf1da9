"""JSON Schema as Arrow types, and JSON payloads as those types' Python values (export's typed columns).

The rule (docs/schemas.md, "Typed columns"): ``"type": "object"`` with ``properties`` a struct of
them, in the schema's order (a member the payload lacks is null; members the schema does not name
are left out); ``"array"`` with one ``items`` schema a list; ``"string"`` string, ``"integer"``
int64, ``"number"`` float64, ``"boolean"`` bool; a type list or ``oneOf``/``anyOf`` of one type and
``"null"`` that type, nullable; ``$ref`` to ``#/definitions/...`` or ``#/$defs/...`` followed, and to another
subject's schema by its reference's name (``address.json``, ``address.json#/definitions/Zip``).  Any
other schema -- an object without ``properties``, several types, a recursive ``$ref``, ``{}`` -- is
the member's JSON text (a string).  A payload whose value does not fit its type (a string where the
schema says integer) is a decode error for that record.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from kseg.limits import INT64_MAX, INT64_MIN

Convert = Callable[[Any, str], Any]  # (the value, its JSON path for the error) -> the Python value


def arrow_type(schema: Any, references: dict[str, Any] | None = None) -> tuple[Any, Convert]:
    """(the Arrow type of ``schema``, its converter); ``references``: the schemas its ``$ref`` s may name
    (reference name -> schema, :func:`kseg.decoders.registry.json_references`)."""
    mapper = _Mapper(references or {})
    return mapper.map(schema, (), schema)


class _Mapper:
    def __init__(self, references: dict[str, Any]) -> None:
        import pyarrow as pa

        self.pa = pa
        self.references = references

    def deref(self, node: Any, path: tuple, root: Any) -> tuple[Any, tuple, Any]:
        """``node`` with its ``$ref`` s followed: (the target, the refs followed, the document it is in)."""
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            name, _, pointer = ref.partition("#")
            if name:
                if name not in self.references:
                    return None, path, root
                root = self.references[name]
            key = (id(root), pointer)
            if key in path or (pointer and not pointer.startswith("/")):
                return None, path, root
            target: Any = root
            for part in pointer[1:].split("/") if pointer else ():
                target = target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, dict) else None
            if target is None:
                return None, path, root
            node, path = target, path + (key,)
        return node, path, root

    def map(self, node: Any, path: tuple, root: Any) -> tuple[Any, Convert]:
        pa = self.pa
        node, path, root = self.deref(node, path, root)
        if not isinstance(node, dict):
            return pa.string(), _text
        kind = node.get("type")
        if kind is None:
            for key in ("oneOf", "anyOf"):
                branches = node.get(key)
                if isinstance(branches, list):
                    real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
                    if len(real) == 1:
                        return self.map(real[0], path, root)
                    return pa.string(), _text
            if isinstance(node.get("properties"), dict):
                kind = "object"
        if isinstance(kind, list):
            real = [k for k in kind if k != "null"]
            if len(real) != 1:
                return pa.string(), _text
            kind = real[0]
        if kind == "object" and isinstance(node.get("properties"), dict) and node["properties"]:
            fields, convs = [], []
            for name, sub in node["properties"].items():
                t, conv = self.map(sub, path, root)
                fields.append(pa.field(name, t))
                convs.append((name, conv))
            return pa.struct(fields), _object(convs)
        if kind == "array" and isinstance(node.get("items"), dict):
            t, conv = self.map(node["items"], path, root)
            return pa.list_(t), _array(conv)
        if kind in _SCALARS:
            t, check = _SCALARS[kind]
            return getattr(pa, t)(), check
        return pa.string(), _text


def _object(convs: list) -> Convert:
    def convert(v: Any, where: str) -> Any:
        if v is None:
            return None
        if not isinstance(v, dict):
            raise ValueError(f"{where}: an object expected, found {_kind(v)}")
        return {name: conv(v.get(name), f"{where}.{name}") for name, conv in convs}

    return convert


def _array(conv: Convert) -> Convert:
    def convert(v: Any, where: str) -> Any:
        if v is None:
            return None
        if not isinstance(v, list):
            raise ValueError(f"{where}: an array expected, found {_kind(v)}")
        return [conv(x, f"{where}[{i}]") for i, x in enumerate(v)]

    return convert


def _checker(types: tuple, name: str, cast: Callable | None = None) -> Convert:
    def convert(v: Any, where: str) -> Any:
        if v is None:
            return None
        if not isinstance(v, types) or isinstance(v, bool) != (bool in types):
            raise ValueError(f"{where}: {name} expected, found {_kind(v)}")
        return v if cast is None else cast(v)

    return convert


def _integer(v: Any, where: str) -> Any:
    if v is None:
        return None
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(f"{where}: an integer expected, found {_kind(v)}")
    if not INT64_MIN <= v <= INT64_MAX:
        raise ValueError(f"{where}: {v} does not fit a 64-bit integer")
    return v


_SCALARS: dict[str, tuple[str, Convert]] = {
    "string": ("string", _checker((str,), "a string")),
    "integer": ("int64", _integer),
    "number": ("float64", _checker((int, float), "a number", float)),
    "boolean": ("bool_", _checker((bool,), "a boolean")),
}


def _text(v: Any, where: str) -> str | None:
    if v is None:
        return None
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _kind(v: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(type(v), "a number")
