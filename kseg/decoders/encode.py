"""Schema-driven writing of Kafka messages (the generated ``Message.write``).

The inverse of :mod:`kseg.decoders.decode`, used by kseg's tests and for
building records by hand: :func:`write` encodes a value dict (as
:func:`kseg.decoders.decode.read` returns; missing keys take the field
default) at a version, following Kafka's ``MessageDataGenerator.generateClassWriter``:

* fields the version does not carry are skipped; a non-ignorable one holding
  a non-default value is an error ("Attempted to write a non-default X at
  version V");
* tagged fields are written only when non-default, in tag order, merged with
  any ``_unknownTaggedFields``; a non-flexible version cannot carry them;
* flexible versions use compact lengths (uvarint length + 1, 0 = null),
  older ones int16 (strings) / int32 (bytes, arrays) lengths, -1 = null;
* a nullable struct is preceded by an int8 presence marker (-1 null, 1
  present); a tagged nullable struct by a uvarint (0 null, 1 present).

:func:`version_prefixed` is ``MessageUtil.toVersionPrefixedBytes``.
"""

from __future__ import annotations

from typing import Any, Callable

from kseg.decoders.decode import UNKNOWN_TAGS
from kseg.decoders.jsonconv import is_default
from kseg.decoders.jvm import JavaException, NullPointerException, UnsupportedVersionException
from kseg.decoders.layout import field_flexible
from kseg.decoders.schema import Field, FieldType, Struct, require_struct
from kseg.decoders.versions import Versions, branch
from kseg.decoders.wire import Writer

_FIXED: dict[str, Callable[[Writer, Any], None]] = {
    "bool": Writer.bool,
    "int8": Writer.int8,
    "int16": Writer.int16,
    "uint16": Writer.uint16,
    "int32": Writer.int32,
    "uint32": Writer.uint32,
    "int64": Writer.int64,
    "float64": Writer.float64,
    "uuid": Writer.uuid,
}


def write(struct: Struct, value: dict, version: int, out: Writer | None = None) -> bytes:
    """Encode ``value`` as ``struct`` at ``version``; returns the bytes written."""
    w = out if out is not None else Writer()
    start = len(w.buf)
    _write_struct(struct, value, version, w)
    return bytes(w.buf[start:])


def version_prefixed(struct: Struct, value: dict, version: int) -> bytes:
    """int16 version followed by the message (``MessageUtil.toVersionPrefixedBytes``)."""
    w = Writer()
    w.int16(version)
    _write_struct(struct, value, version, w)
    return w.getvalue()


def _get(value: dict, f: Field) -> Any:
    return value[f.name] if f.name in value else f.default()


def _write_struct(struct: Struct, value: dict, version: int, w: Writer) -> None:
    ok, _ = branch(struct.versions, struct.parent, version)
    if not ok:
        raise UnsupportedVersionException(f"Can't write version {version} of {struct.name}")
    cur = struct.current
    tagged: list[tuple[int, bytes]] = []
    for f in struct.fields:
        v = _get(value, f)
        present, pv = branch(f.versions, cur, version)
        if not present:
            if not f.ignorable and not is_default(f, v, f.nullable):
                raise UnsupportedVersionException(f"Attempted to write a non-default {f.name} at version {version}")
            continue
        is_tagged, ptv = branch(f.tagged, pv, version)
        if not is_tagged:
            _write_value(f, struct, v, pv, version, w, False)
        elif not is_default(f, v, f.nullable):
            tw = Writer()
            _write_value(f, struct, v, ptv, version, tw, True)
            tagged.append((f.wire_tag, tw.getvalue()))
    tagged.extend(value.get(UNKNOWN_TAGS) or ())
    flexible, _ = branch(struct.message.flexible, cur, version)
    if not flexible:
        if tagged:
            raise UnsupportedVersionException(
                f"Tagged fields were set, but version {version} of this message does not support them."
            )
        return
    w.uvarint(len(tagged))
    for tag, payload in sorted(tagged, key=lambda t: t[0]):
        w.uvarint(tag)
        w.uvarint(len(payload))
        w.raw(payload)


def _write_value(f: Field, struct: Struct, v: Any, possible: Versions, version: int, w: Writer, tagged: bool) -> None:
    """One field's value; a nullable struct's presence marker is an int8 (-1/1), a uvarint (0/1) when tagged."""
    kind = f.type.kind
    if kind in _FIXED:
        _FIXED[kind](w, v)
    elif kind == "struct":
        nullable, _ = branch(f.nullable, possible, version)
        if v is None and not nullable and not tagged:
            raise NullPointerException()
        if nullable:
            if tagged:
                w.uvarint(0 if v is None else 1)
            else:
                w.int8(-1 if v is None else 1)
        if v is not None:
            _write_struct(f.struct_def, v, version, w)
    else:
        _write_variable(field_flexible(f, struct), f.name, f.type, v, possible, f.nullable, version, w, f.struct)


def _write_variable(
    flex: Versions,
    name: str,
    ftype: FieldType,
    v: Any,
    possible: Versions,
    nullable: Versions,
    version: int,
    w: Writer,
    elem_struct: Struct | None,
) -> None:
    compact, _ = branch(flex, possible, version)
    kind = ftype.kind
    if v is None:
        null_ok, _ = branch(nullable, possible, version)
        if not null_ok:
            raise JavaException(f"non-nullable field {name} was serialized as null")
        if compact:
            w.uvarint(0)
        elif kind == "string":
            w.int16(-1)
        else:
            w.int32(-1)
        return
    if kind == "string":
        payload = v.encode("utf-8", "surrogatepass")
        n = len(payload)
    elif kind in ("bytes", "records"):
        payload = bytes(v)
        n = len(payload)
    else:
        payload = None
        n = len(v)
    if compact:
        w.uvarint(n + 1)
    elif kind == "string":
        w.int16(n)
    else:
        w.int32(n)
    if payload is not None:
        w.raw(payload)
        return
    elem = ftype.element
    for item in v:
        if elem.kind in _FIXED:
            _FIXED[elem.kind](w, item)
        elif elem.kind == "struct":
            _write_struct(require_struct(elem_struct, name), item, version, w)
        else:
            _write_variable(flex, name + " element", elem, item, possible, Versions(0, -1), version, w, None)
