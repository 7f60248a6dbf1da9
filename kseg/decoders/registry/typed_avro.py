"""Avro schemas as Arrow types, and Avro values as those types' Python values (export's typed columns).

The rule (docs/schemas.md, "Typed columns"): ``boolean`` bool, ``int`` int32, ``long`` int64,
``float`` float32, ``double`` float64, ``bytes`` binary, ``string`` string, ``fixed`` fixed-size
binary, ``enum`` its symbol as a string, ``record`` a struct of its fields, ``array`` a list,
``map`` a map of string keys; a union of ``null`` and one type is that type, nullable; a union of
several non-null types is a struct with one field per branch (named by the branch's type, or a
named type's name), the branch the value took set and the others null.  Logical types are the
Arrow types pyarrow gives them: ``decimal`` decimal128(precision, scale) (decimal256 past 38
digits), ``date`` date32, ``time-millis`` time32(ms), ``time-micros`` time64(us),
``timestamp-millis``/``-micros`` timestamp(ms/us, UTC), ``local-timestamp-*`` timestamp without a
zone, ``uuid`` a string.  A record type that contains itself is its JSON text (a string) where it
recurs.  A record with no field is a null column (Parquet has no empty struct).
"""

from __future__ import annotations

import datetime
import decimal
import json
import uuid
from typing import Any, Callable

Fix = Callable[[Any], Any] | None  # a value from fastavro -> the Arrow type's Python value (None: as is)

_PRIMITIVE = {
    "boolean": "bool_",
    "int": "int32",
    "long": "int64",
    "float": "float32",
    "double": "float64",
    "bytes": "binary",
    "string": "string",
    "null": "null",
}


def arrow_type(schema: Any, names: dict) -> tuple[Any, Fix, bool]:
    """(the Arrow type of ``schema`` -- fastavro's parsed form, logical types kept --, the value fix,
    whether fastavro is to read with ``return_named_type``: a union of several non-null branches,
    where a named branch's value must say its name)."""
    tuples = uses_named_branches(schema, names)
    t, fix = _Mapper(names, tuples).map(schema, ())
    return t, fix, tuples


class _Mapper:
    def __init__(self, names: dict, tuples: bool) -> None:
        import pyarrow as pa

        self.pa = pa
        self.names = names
        self.tuples = tuples  # fastavro gives every union's named value as (name, value)

    def map(self, schema: Any, path: tuple) -> tuple[Any, Fix]:
        pa = self.pa
        if isinstance(schema, str):
            if schema in self.names:
                if schema in path:  # a recursive record: its JSON text where it recurs
                    return pa.string(), _json_text
                return self.map(self.names[schema], path)
            return getattr(pa, _PRIMITIVE[schema])(), None
        if isinstance(schema, list):
            return self.union(schema, path)
        kind = schema["type"]
        logical = schema.get("logicalType")
        if logical:
            mapped = self.logical(schema, logical)
            if mapped is not None:
                return mapped
        if kind in ("record", "error"):
            return self.record(schema, path)
        if kind == "enum":
            return pa.string(), None
        if kind == "fixed":
            return pa.binary(schema["size"]), None
        if kind in ("array", "map"):
            return self.collection(schema, path)
        if kind in _PRIMITIVE:
            return getattr(pa, _PRIMITIVE[kind])(), None
        raise ValueError(f"unknown Avro type {kind!r}")

    def record(self, schema: dict, path: tuple) -> tuple[Any, Fix]:
        pa = self.pa
        name = schema.get("name")
        inner = path + ((name,) if name else ())
        fields, fixes = [], []
        for f in schema["fields"]:
            t, fix = self.map(f["type"], inner)
            fields.append(pa.field(f["name"], t))
            fixes.append((f["name"], fix))
        if not fields:
            return pa.null(), _nothing
        todo = [(n, fx) for n, fx in fixes if fx is not None]
        return pa.struct(fields), (_record_fix(todo) if todo else None)

    def collection(self, schema: dict, path: tuple) -> tuple[Any, Fix]:
        pa = self.pa
        if schema["type"] == "array":
            t, fix = self.map(schema["items"], path)
            if fix is None:
                return pa.list_(t), None
            each = fix
            return pa.list_(t), lambda v: [each(x) for x in v]
        t, fix = self.map(schema["values"], path)
        if fix is None:
            return pa.map_(pa.string(), t), None
        value = fix
        return pa.map_(pa.string(), t), lambda v: {k: value(x) for k, x in v.items()}

    def logical(self, schema: dict, logical: str) -> tuple[Any, Fix] | None:
        pa, kind = self.pa, schema["type"]
        if logical == "decimal" and kind in ("bytes", "fixed"):
            precision, scale = int(schema.get("precision", 0)), int(schema.get("scale", 0))
            if precision < 1:
                return None
            return (pa.decimal128 if precision <= 38 else pa.decimal256)(precision, scale), None
        table = {
            ("date", "int"): (pa.date32(), None),
            ("time-millis", "int"): (pa.time32("ms"), None),
            ("time-micros", "long"): (pa.time64("us"), None),
            ("timestamp-millis", "long"): (pa.timestamp("ms", tz="UTC"), None),
            ("timestamp-micros", "long"): (pa.timestamp("us", tz="UTC"), None),
            ("local-timestamp-millis", "long"): (pa.timestamp("ms"), None),
            ("local-timestamp-micros", "long"): (pa.timestamp("us"), None),
            ("uuid", "string"): (pa.string(), _uuid_text),
        }
        return table.get((logical, kind))

    def union(self, branches: list, path: tuple) -> tuple[Any, Fix]:
        pa = self.pa
        real = [b for b in branches if b != "null"]
        if not real:
            return pa.null(), None
        if len(real) == 1:
            t, fix = self.map(real[0], path)
            if self.tuples and self.named(real[0]):
                return t, _unwrap(fix)
            return t, fix
        fields, pickers = [], []
        used: set[str] = set()
        for b in real:
            t, fix = self.map(b, path)
            name = self.branch_name(b, used)
            used.add(name)
            fields.append(pa.field(name, t))
            pickers.append((name, self.branch_test(b), fix))
        return pa.struct(fields), _union_fix(pickers)

    def branch_name(self, b: Any, used: set) -> str:
        if isinstance(b, str):
            full = b
        elif b.get("name"):
            full = b["name"]
        else:
            full = b.get("logicalType") or b["type"]
        short = full.rpartition(".")[2]
        return short if short not in used else full

    def named(self, b: Any) -> bool:
        if isinstance(b, str) and b in self.names:
            b = self.names[b]
        return isinstance(b, dict) and b["type"] in ("record", "error", "enum", "fixed")

    def branch_test(self, b: Any) -> Callable[[Any], bool]:
        """Whether a value fastavro read is of branch ``b`` (a named branch comes as (name, value))."""
        if isinstance(b, str) and b in self.names:
            b = self.names[b]
        if self.named(b):
            name = b["name"]
            return lambda v: isinstance(v, tuple) and v[0] == name
        kind = b if isinstance(b, str) else _LOGICAL_PY.get((b.get("logicalType"), b["type"]), b["type"])
        pytype = _PY.get(kind)
        if kind in ("int", "long"):
            return lambda v: isinstance(v, int) and not isinstance(v, bool)
        if pytype is None:
            return lambda v: False
        return lambda v: isinstance(v, pytype)


_LOGICAL_PY = {
    ("decimal", "bytes"): "decimal",
    ("decimal", "fixed"): "decimal",
    ("date", "int"): "date",
    ("time-millis", "int"): "time",
    ("time-micros", "long"): "time",
    ("timestamp-millis", "long"): "datetime",
    ("timestamp-micros", "long"): "datetime",
    ("local-timestamp-millis", "long"): "datetime",
    ("local-timestamp-micros", "long"): "datetime",
    ("uuid", "string"): "uuid",
}
_PY: dict[str, Any] = {
    "boolean": bool,
    "float": float,
    "double": float,
    "string": str,
    "bytes": (bytes, bytearray),
    "array": list,
    "map": dict,
    "decimal": decimal.Decimal,
    "date": datetime.date,
    "time": datetime.time,
    "datetime": datetime.datetime,
    "uuid": uuid.UUID,
}


def _union_fix(pickers: list) -> Callable[[Any], Any]:
    def fix(v: Any) -> Any:
        if v is None:
            return None
        for name, test, inner in pickers:
            if test(v):
                if isinstance(v, tuple):
                    v = v[1]
                return {name: v if inner is None else inner(v)}
        raise ValueError(f"a value of Python type {type(v).__name__} matches no branch of the union")

    return fix


def _unwrap(inner: Fix) -> Callable[[Any], Any]:
    def fix(v: Any) -> Any:
        if isinstance(v, tuple):
            v = v[1]
        return v if inner is None or v is None else inner(v)

    return fix


def _record_fix(todo: list) -> Callable[[Any], Any]:
    def fix(v: Any) -> Any:
        if v is None:
            return None
        out = dict(v)
        for name, inner in todo:
            x = out.get(name)
            if x is not None:
                out[name] = inner(x)
        return out

    return fix


def _uuid_text(v: Any) -> Any:
    return None if v is None else str(v)


def _nothing(v: Any) -> None:
    return None


def _json_text(v: Any) -> str | None:
    if v is None:
        return None
    return json.dumps(v, default=str, ensure_ascii=False, separators=(",", ":"))


def uses_named_branches(schema: Any, names: dict) -> bool:
    """Whether ``schema`` has a union of several non-null branches (then fastavro is asked for the
    branch names of named types: ``return_named_type_override``)."""
    seen: set[str] = set()

    def walk(s: Any) -> bool:
        if isinstance(s, str):
            if s in names and s not in seen:
                seen.add(s)
                return walk(names[s])
            return False
        if isinstance(s, list):
            return len([b for b in s if b != "null"]) > 1 or any(walk(b) for b in s)
        kind = s.get("type")
        if kind in ("record", "error"):
            if s.get("name"):
                seen.add(s["name"])
            return any(walk(f["type"]) for f in s["fields"])
        if kind == "array":
            return walk(s["items"])
        if kind == "map":
            return walk(s["values"])
        return False

    return walk(schema)
