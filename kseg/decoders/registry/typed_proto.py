"""Protobuf messages as Arrow types, and parsed messages as those types' Python values (export's
typed columns).

The rule (docs/schemas.md, "Typed columns"): a message is a struct of its fields in field-number
order of declaration, named as written in the ``.proto``; ``repeated`` a list; a ``map<K, V>`` a map;
an enum its value's name as a string (the number as text when the schema has no name for it);
``int32``/``sint32``/``sfixed32`` int32, ``int64``/``sint64``/``sfixed64`` int64, ``uint32``/
``fixed32`` int64, ``uint64``/``fixed64`` decimal128(20, 0) (Spark and Parquet readers have no
unsigned 64-bit), ``float`` float32, ``double`` float64, ``bool``, ``string``, ``bytes`` binary.
A message field not set, and a field with presence (``optional``, a ``oneof`` member) not set, is
null; other scalars are their value (proto3's default when absent, as the JSON mapping prints them).
Well-known types: ``Timestamp`` a timestamp (us, UTC), the wrappers (``Int64Value``...) their value,
nullable; ``Duration``, ``Struct``, ``Value``, ``ListValue``, ``Any``, ``FieldMask`` and a message
that contains itself: their JSON mapping's text (a string).
"""

from __future__ import annotations

import decimal
from typing import Any, Callable

Convert = Callable[[Any], Any]

_WRAPPERS = {
    "google.protobuf.DoubleValue",
    "google.protobuf.FloatValue",
    "google.protobuf.Int64Value",
    "google.protobuf.UInt64Value",
    "google.protobuf.Int32Value",
    "google.protobuf.UInt32Value",
    "google.protobuf.BoolValue",
    "google.protobuf.StringValue",
    "google.protobuf.BytesValue",
}
_AS_JSON = {
    "google.protobuf.Duration",
    "google.protobuf.Struct",
    "google.protobuf.Value",
    "google.protobuf.ListValue",
    "google.protobuf.Any",
    "google.protobuf.FieldMask",
}


def arrow_type(descriptor: Any) -> tuple[Any, Convert]:
    """(the Arrow struct of message ``descriptor``, message -> its Python value)."""
    return _message(descriptor, ())


def _scalar(field: Any) -> tuple[Any, Convert | None]:
    import pyarrow as pa
    from google.protobuf.descriptor import FieldDescriptor as F

    t = field.type
    if t in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32):
        return pa.int32(), None
    if t in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64, F.TYPE_UINT32, F.TYPE_FIXED32):
        return pa.int64(), None
    if t in (F.TYPE_UINT64, F.TYPE_FIXED64):
        return pa.decimal128(20, 0), decimal.Decimal
    if t == F.TYPE_FLOAT:
        return pa.float32(), None
    if t == F.TYPE_DOUBLE:
        return pa.float64(), None
    if t == F.TYPE_BOOL:
        return pa.bool_(), None
    if t == F.TYPE_STRING:
        return pa.string(), None
    if t == F.TYPE_BYTES:
        return pa.binary(), None
    if t == F.TYPE_ENUM:
        names = {v.number: v.name for v in field.enum_type.values}
        return pa.string(), lambda n: names.get(n, str(n))
    raise ValueError(f"protobuf field {field.full_name}: unknown type {t}")


def _message(desc: Any, path: tuple) -> tuple[Any, Convert]:
    import pyarrow as pa

    name = desc.full_name
    if name == "google.protobuf.Timestamp":
        return pa.timestamp("us", tz="UTC"), lambda m: m.ToDatetime(tzinfo=_utc())
    if name in _WRAPPERS:
        t, wrapped = _scalar(desc.fields_by_name["value"])
        inside = wrapped or _same
        return t, lambda m: inside(m.value)
    if name in _AS_JSON or name in path:
        return pa.string(), _json_text
    inner = path + (name,)
    fields, converters = [], []
    for f in desc.fields:
        t, conv = _field(f, inner)
        fields.append(pa.field(f.name, t))
        converters.append((f.name, conv))
    if not fields:
        return pa.null(), lambda m: None
    return pa.struct(fields), _struct(converters)


def _field(f: Any, path: tuple) -> tuple[Any, Convert]:
    """(the field's Arrow type, message -> the field's value)."""
    import pyarrow as pa
    from google.protobuf.descriptor import FieldDescriptor as F

    name = f.name
    is_message = f.type in (F.TYPE_MESSAGE, F.TYPE_GROUP)
    if _is_map(f):
        entry = f.message_type
        kt, kconv = _scalar(entry.fields_by_name["key"])
        vf = entry.fields_by_name["value"]
        vt, vconv = _message(vf.message_type, path) if vf.message_type is not None else _scalar(vf)
        fk = kconv or _same
        fv = vconv or _same
        return pa.map_(kt, vt), lambda m: [(fk(k), fv(v)) for k, v in getattr(m, name).items()]
    conv: Convert | None
    t, conv = _message(f.message_type, path) if is_message else _scalar(f)
    if _repeated(f):
        if conv is None:
            return pa.list_(t), lambda m: list(getattr(m, name))
        each = conv
        return pa.list_(t), lambda m: [each(x) for x in getattr(m, name)]
    one = conv or _same
    if is_message or _presence(f):
        return t, lambda m: one(getattr(m, name)) if m.HasField(name) else None
    if conv is None:
        return t, lambda m: getattr(m, name)
    return t, lambda m: one(getattr(m, name))


def _struct(pairs: list) -> Convert:
    def convert(m: Any) -> dict:
        return {f: c(m) for f, c in pairs}

    return convert


def _repeated(f: Any) -> bool:
    if hasattr(f, "is_repeated"):  # protobuf >= 5.29 (label is deprecated there)
        return bool(f.is_repeated)
    return bool(f.label == f.LABEL_REPEATED)


def _presence(f: Any) -> bool:
    return bool(f.has_presence)


def _is_map(f: Any) -> bool:
    return f.message_type is not None and f.message_type.GetOptions().map_entry and _repeated(f)


def _same(v: Any) -> Any:
    return v


def _utc():
    import datetime

    return datetime.timezone.utc


def _json_text(m: Any) -> str:
    import json

    from google.protobuf import json_format

    obj = json_format.MessageToDict(m, preserving_proto_field_name=True)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
