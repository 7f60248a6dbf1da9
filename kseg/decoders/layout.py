"""What Kafka's generated ``read`` of a struct does at one version, decided once (``MessageDataGenerator``).

Which fields a version reads and with which version ranges their readers were generated, compact lengths or
not, null markers or not, which tags: each decision is a :func:`~kseg.decoders.versions.branch` of the
generator's own conditionals.  The interpreted plan (:mod:`kseg.decoders.decode`) and the compiled one
(:mod:`kseg.decoders.compiled`) both read by these, so they cannot drift apart.
"""

from __future__ import annotations

from kseg.decoders.schema import Field, Struct
from kseg.decoders.versions import Versions, branch


def field_flexible(field: Field, struct: Struct) -> Versions:
    """``fieldFlexibleVersions``: the field's override, else the message's."""
    return field.flexible if field.flexible is not None else struct.message.flexible


def struct_nullable(field: Field, possible: Versions, version: int) -> bool:
    """Whether a struct field's reader at ``version`` starts with a null marker."""
    return branch(field.nullable, possible, version)[0]


def length_possible(field: Field, struct: Struct, possible: Versions, version: int, tagged: bool) -> Versions:
    """The versions a variable-length field's length reader is generated for (an untagged array whose
    elements differ when flexible is narrowed by the flexible test first)."""
    if not tagged and field.type.kind == "array" and field.type.element.differs_when_flexible:
        _, possible = branch(field_flexible(field, struct), possible, version)
    return possible


def length_shape(flex: Versions, possible: Versions, nullable: Versions, version: int) -> tuple[bool, bool]:
    """``(compact, null_ok)`` of a length prefix: a compact uvarint or not, and whether -1 reads as null."""
    return branch(flex, possible, version)[0], branch(nullable, possible, version)[0]


def readable(struct: Struct, version: int) -> bool:
    """Whether the generated reader of ``struct`` accepts ``version`` (else ``UnsupportedVersionException``)."""
    return branch(struct.parent, struct.versions, version)[0]


def field_layout(struct: Struct, version: int, unknown_tags: frozenset[str]) -> list[tuple[Field, Versions | None]]:
    """Each field in order with the versions its reader is generated for, or None: not read (its default)."""
    out: list[tuple[Field, Versions | None]] = []
    for f in struct.fields:
        mandatory = f.versions.subtract(f.tagged)
        present, narrowed = branch(mandatory if mandatory is not None else f.versions, struct.current, version)
        out.append((f, narrowed if present and f.name not in unknown_tags else None))
    return out


def tag_layout(
    struct: Struct, version: int, unknown_tags: frozenset[str]
) -> dict[int, tuple[Field, Versions | None]] | None:
    """The tagged fields ``version`` reads: tag -> (field, the versions its reader is generated for, or None:
    "not valid for version"); None when ``version`` is not flexible (no tagged section)."""
    has_tags, cur_flex = branch(struct.message.flexible, struct.current, version)
    if not has_tags:
        return None
    tags: dict[int, tuple[Field, Versions | None]] = {}
    for f in struct.fields:
        valid_tagged = f.versions.intersect(f.tagged)
        if valid_tagged.empty or f.name in unknown_tags:
            continue
        ok, present_tagged = branch(valid_tagged, cur_flex, version)
        tags[f.wire_tag] = (f, present_tagged if ok else None)
    return tags
