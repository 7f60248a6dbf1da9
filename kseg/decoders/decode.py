"""Schema-driven reading of Kafka messages (the generated ``Message.read``).

:func:`read` turns bytes into a ``dict`` keyed by camelCase field name, in
field order, holding every field of the struct: values read from the bytes,
or the field's default where the version does not carry it (exactly what a
generated Kafka class holds after ``read``).  Types: ints/bools/floats as
Python values, ``string`` as ``str``, ``bytes``/``records``/``uuid`` as
``bytes``, structs as nested dicts, arrays as lists, null as ``None``.
Unknown tagged fields, when present, are kept under ``"_unknownTaggedFields"``
as ``[(tag, bytes), ...]``.  Decoded dicts are shared with nothing but may
share default values with each other: treat them as read-only.

The read logic follows Kafka's ``MessageDataGenerator.generateClassReader``
branch for branch, including how each version test was simplified at
generation time (:func:`kseg.decoders.versions.branch`), so that a record
with a version Kafka does not know decodes -- or fails -- as Kafka's tool
would.  Plans are made once per (struct, version) and cached: the interpreted plan here (a closure per
field, the reference), and in front of it the same plan compiled to Python source
(:mod:`kseg.decoders.compiled`), which hands any record off its fast road back to the interpreted one.
Both take their decisions from :mod:`kseg.decoders.layout`.
"""

from __future__ import annotations

from typing import Any, Callable

from kseg.decoders.compiled import compiled_plan
from kseg.decoders.jvm import JavaException, int32, unsupported_version
from kseg.decoders.layout import (
    field_flexible,
    field_layout,
    length_possible,
    length_shape,
    readable,
    struct_nullable,
    tag_layout,
)
from kseg.decoders.schema import Field, FieldType, Struct, require_struct
from kseg.decoders.versions import NONE, Versions
from kseg.decoders.wire import Reader

Op = Callable[[Reader], Any]
UNKNOWN_TAGS = "_unknownTaggedFields"

_PRIMITIVE_READERS: dict[str, Callable[[Reader], Any]] = {
    "bool": Reader.bool,
    "int8": Reader.int8,
    "int16": Reader.int16,
    "uint16": Reader.uint16,
    "int32": Reader.int32,
    "uint32": Reader.uint32,
    "int64": Reader.int64,
    "float64": Reader.float64,
    "uuid": Reader.uuid,
}


def read(struct: Struct, data: bytes | Reader, version: int, unknown_tags: frozenset = frozenset()) -> dict:
    """Read one ``struct`` at ``version`` from ``data`` (bytes or a positioned :class:`Reader`).

    ``unknown_tags``: names of ``struct``'s own fields an older release's generated class lacks: a tagged
    one is read as an unknown tag (kept aside), any other is not read (its default is left)."""
    r = data if isinstance(data, Reader) else Reader(data)
    key = (version, unknown_tags) if unknown_tags else version
    plan = struct.read_plans.get(key)
    if plan is None:
        plan = struct.read_plans[key] = _compile(struct, version, unknown_tags)
    return plan(r)


def _struct_op(struct: Struct, version: int) -> Op:
    def op(r: Reader) -> dict:
        return read(struct, r, version)

    return op


def _length_op(compact: bool, kind: str) -> Callable[[Reader], int]:
    """The length prefix: a compact uvarint (length + 1), else int16 for strings and int32 otherwise."""
    if compact:

        def length(r: Reader) -> int:
            return int32(r.uvarint() - 1)

        return length
    return Reader.int16 if kind == "string" else Reader.int32


def _body_op(
    flex: Versions,
    name: str,
    ftype: FieldType,
    possible: Versions,
    zero_copy: bool,
    version: int,
    elem_struct: Struct | None,
) -> Callable[[Reader, int], Any]:
    """What follows a non-null length ``n``: the string, the bytes or the array's elements."""
    kind = ftype.kind
    if kind == "string":

        def string(r: Reader, n: int) -> str:
            if n > 0x7FFF:
                raise JavaException(f"string field {name} had invalid length {n}")
            return r.string(n)

        return string
    if kind == "bytes" or kind == "records":
        return (lambda r, n: r.byte_buffer(n)) if (zero_copy or kind == "records") else (lambda r, n: r.array(n))
    if kind != "array":  # pragma: no cover - schema error
        raise ValueError(f"cannot read variable-length type {kind}")
    elem = ftype.element
    elem_op: Op
    if elem.kind in ("string", "bytes"):
        elem_op = _variable_length_op(flex, name + " element", elem, possible, NONE, False, version, None)
    elif elem.kind == "struct":
        elem_op = _struct_op(require_struct(elem_struct, name), version)
    else:
        elem_op = _PRIMITIVE_READERS[elem.kind]

    def array(r: Reader, n: int) -> list[Any]:
        remaining = r.end - r.pos
        if n > remaining:
            raise JavaException(
                f"Tried to allocate a collection of size {n}, but there are only {remaining} bytes remaining."
            )
        return [elem_op(r) for _ in range(n)]

    return array


def _variable_length_op(
    flex: Versions,
    name: str,
    ftype: FieldType,
    possible: Versions,
    nullable: Versions,
    zero_copy: bool,
    version: int,
    elem_struct: Struct | None,
) -> Op:
    """``generateVariableLengthReader`` for one field (or array element) at ``version``."""
    compact, null_ok = length_shape(flex, possible, nullable, version)
    null_error = f"non-nullable field {name} was serialized as null"
    length = _length_op(compact, ftype.kind)
    body = _body_op(flex, name, ftype, possible, zero_copy, version, elem_struct)

    def op(r: Reader) -> Any:
        n = length(r)
        if n < 0:
            if null_ok:
                return None
            raise JavaException(null_error)
        return body(r, n)

    return op


def _nullable_struct_op(field: Field, possible: Versions, version: int, tagged: bool) -> Op:
    """``generateStructReader``: an optional null marker, then the struct."""
    inner = _struct_op(field.struct_def, version)
    if not struct_nullable(field, possible, version):
        return inner
    if tagged:

        def op(r: Reader) -> Any:
            return None if r.uvarint() <= 0 else inner(r)
    else:

        def op(r: Reader) -> Any:
            return None if r.int8() < 0 else inner(r)

    return op


def _value_op(field: Field, struct: Struct, possible: Versions, version: int, tagged: bool) -> Op:
    ftype = field.type
    if ftype.kind == "struct":
        return _nullable_struct_op(field, possible, version, tagged)
    if not ftype.is_variable_length:
        return _PRIMITIVE_READERS[ftype.kind]
    possible = length_possible(field, struct, possible, version, tagged)
    return _variable_length_op(
        field_flexible(field, struct),
        field.name,
        ftype,
        possible,
        field.nullable,
        field.zero_copy,
        version,
        field.struct,
    )


def _tag_ops(tags: dict[int, tuple[Field, Versions | None]], struct: Struct, version: int) -> dict:
    """tag -> (name, op, or None and the error to raise)."""
    return {
        tag: (f.name, _value_op(f, struct, present, version, True), "")
        if present is not None
        else (f.name, None, f"Tag {f.tag} is not valid for version {version}")
        for tag, (f, present) in tags.items()
    }


def _compile(struct: Struct, version: int, unknown_tags: frozenset = frozenset()) -> Callable[[Reader], dict]:
    """The plan :func:`read` keeps: :func:`interpreted_plan`, behind its compiled fast road where it has one."""
    plan = interpreted_plan(struct, version, unknown_tags)
    if unknown_tags:  # an older release's class: read as interpreted
        return plan
    compiled = compiled_plan(struct, version, plan)
    struct.whole_plans[version] = compiled[1] if compiled else None
    return compiled[0] if compiled else plan


def interpreted_plan(struct: Struct, version: int, unknown_tags: frozenset = frozenset()) -> Callable[[Reader], dict]:
    """``struct`` at ``version`` read field by field, as Kafka's generated ``read`` does, value or exception."""
    if not readable(struct, version):
        return unsupported_version(f"Can't read version {version} of {struct.name}")

    ops: list[tuple[str, Op | None, Any]] = [
        (f.name, None, f.default())
        if narrowed is None
        else (f.name, _value_op(f, struct, narrowed, version, False), None)
        for f, narrowed in field_layout(struct, version, unknown_tags)
    ]
    tags = tag_layout(struct, version, unknown_tags)
    has_tags = tags is not None
    tag_ops = _tag_ops(tags, struct, version) if tags is not None else {}

    def plan(r: Reader) -> dict:
        out: dict = {}
        for name, op, default in ops:
            out[name] = default if op is None else op(r)
        if has_tags:
            unknown = None
            for _ in range(r.uvarint()):
                tag = r.uvarint()
                size = r.uvarint()
                entry = tag_ops.get(tag)
                if entry is None:
                    if unknown is None:
                        unknown = []
                    unknown.append((tag, r.array(size)))
                    continue
                name, op, error = entry
                if op is None:
                    raise JavaException(error)
                out[name] = op(r)
            if unknown:
                out[UNKNOWN_TAGS] = unknown
        return out

    return plan


def whole_reader(struct: Struct, version: int) -> Callable[[bytes, int], dict | None] | None:
    """The compiled fast road alone (None: ``struct`` not compiled): ``(data, pos)`` -> ``struct`` at ``version``
    read from ``data[pos:]`` to its last byte, or None (a value off the road, or bytes left after it): then
    :func:`read` says what Kafka reads or throws."""
    if version not in struct.whole_plans:
        struct.read_plans[version] = _compile(struct, version)
    whole: Callable[[bytes, int], dict | None] | None = struct.whole_plans[version]
    return whole
