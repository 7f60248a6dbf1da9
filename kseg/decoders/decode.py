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
would.  Plans are compiled once per (struct, version) and cached.
"""

from __future__ import annotations

from typing import Any, Callable

from kseg.decoders.jvm import JavaException, int32, unsupported_version
from kseg.decoders.schema import Field, FieldType, Struct, require_struct
from kseg.decoders.versions import NONE, Versions, branch
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


def field_flexible(field: Field, struct: Struct) -> Versions:
    """``fieldFlexibleVersions``: the field's override, else the message's."""
    return field.flexible if field.flexible is not None else struct.message.flexible


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
    compact, _ = branch(flex, possible, version)
    null_ok, _ = branch(nullable, possible, version)
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
    null_ok, _ = branch(field.nullable, possible, version)
    if not null_ok:
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
    flex = field_flexible(field, struct)
    if not tagged and ftype.kind == "array" and ftype.element.differs_when_flexible:
        _, possible = branch(flex, possible, version)
    return _variable_length_op(
        flex, field.name, ftype, possible, field.nullable, field.zero_copy, version, field.struct
    )


def _tag_ops(
    struct: Struct, cur_flex: Versions, version: int, unknown_tags: frozenset[str]
) -> dict[int, tuple[str, Op | None, str]]:
    """The tagged fields a flexible ``version`` reads: tag -> (name, op, or None and the error to raise)."""
    tag_ops: dict[int, tuple[str, Op | None, str]] = {}
    for f in struct.fields:
        valid_tagged = f.versions.intersect(f.tagged)
        if valid_tagged.empty or f.name in unknown_tags:
            continue
        ok, present_tagged = branch(valid_tagged, cur_flex, version)
        if ok:
            tag_ops[f.wire_tag] = (f.name, _value_op(f, struct, present_tagged, version, True), "")
        else:
            tag_ops[f.wire_tag] = (f.name, None, f"Tag {f.tag} is not valid for version {version}")
    return tag_ops


def _compile(struct: Struct, version: int, unknown_tags: frozenset = frozenset()) -> Callable[[Reader], dict]:
    taken, _ = branch(struct.parent, struct.versions, version)
    if not taken:
        return unsupported_version(f"Can't read version {version} of {struct.name}")

    cur = struct.current
    ops: list[tuple[str, Op | None, Any]] = []
    for f in struct.fields:
        mandatory = f.versions.subtract(f.tagged)
        present, narrowed = branch(mandatory if mandatory is not None else f.versions, cur, version)
        if present and f.name not in unknown_tags:
            ops.append((f.name, _value_op(f, struct, narrowed, version, False), None))
        else:
            ops.append((f.name, None, f.default()))

    has_tags, cur_flex = branch(struct.message.flexible, cur, version)
    tag_ops = _tag_ops(struct, cur_flex, version, unknown_tags) if has_tags else {}

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
