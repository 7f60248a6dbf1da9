"""kseg's message schemas: lazy loading and the in-memory model.

Each ``schemas/<Name>.json`` file describes one Kafka message (see
:mod:`kseg.decoders._schemagen`).  A file is parsed the first time a decoder
asks for that message (:func:`message`) and kept for the process; nothing is
read at import time, so ``kseg --help`` never touches the schema files.

The model mirrors what Kafka's generator derives from a spec:

* :class:`Struct`: the top-level message, each inline struct (named by its
  field's type) and each common struct.  ``parent`` is the version range the
  generator passes as "parent versions" (message: its valid versions; inline
  struct: the enclosing struct's parent range intersected with the enclosing
  struct's versions; common struct: its own versions).
* :class:`Field`: camelCase name, type, version ranges, tag and default value.
"""

from __future__ import annotations

import base64
import json
from functools import lru_cache
from importlib import resources
from typing import Any

from kseg.decoders.versions import NONE, Versions

PRIMITIVES = frozenset(
    ("bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "uuid", "string", "bytes", "records")
)
ZERO_UUID = bytes(16)


class FieldType:
    """A field's type: a primitive name, ``struct`` or ``array`` (of ``elem``)."""

    __slots__ = ("kind", "elem", "struct_name")

    def __init__(self, text: str) -> None:
        self.elem: FieldType | None = None
        self.struct_name: str | None = None
        if text.startswith("[]"):
            self.kind = "array"
            self.elem = FieldType(text[2:])
        elif text in PRIMITIVES:
            self.kind = text
        else:
            self.kind = "struct"
            self.struct_name = text

    @property
    def element(self) -> FieldType:
        """An array's element type (a schema that names none is a schema error)."""
        if self.elem is None:  # pragma: no cover - schema error
            raise ValueError(f"type {self!r} is not an array")
        return self.elem

    @property
    def struct_type(self) -> str:
        """A struct type's name, e.g. ``TopicConfig`` (a primitive has none: a schema error)."""
        if self.struct_name is None:  # pragma: no cover - schema error
            raise ValueError(f"type {self!r} is not a struct")
        return self.struct_name

    @property
    def is_variable_length(self) -> bool:
        return self.kind in ("string", "bytes", "records", "array", "struct")

    @property
    def differs_when_flexible(self) -> bool:
        """``FieldType.serializationIsDifferentInFlexibleVersions``."""
        return self.kind in ("string", "bytes", "records", "array", "struct")

    def __repr__(self) -> str:
        return f"[]{self.elem!r}" if self.elem else (self.struct_name or self.kind)


class Field:
    """One field of a struct (Kafka's ``FieldSpec``)."""

    __slots__ = (
        "name",
        "type",
        "versions",
        "nullable",
        "tagged",
        "tag",
        "default_text",
        "ignorable",
        "zero_copy",
        "flexible",
        "struct",
        "_default",
    )
    _default: Any

    def __init__(self, spec: dict) -> None:
        self.name: str = spec["name"]
        self.type = FieldType(spec["type"])
        self.tagged = Versions.parse(spec.get("taggedVersions"), NONE)
        self.versions = Versions.parse(spec["versions"])
        self.nullable = Versions.parse(spec.get("nullableVersions"), NONE)
        self.tag: int | None = spec.get("tag")
        self.default_text: str = spec.get("default", "")
        self.ignorable: bool = bool(spec.get("ignorable"))
        self.zero_copy: bool = bool(spec.get("zeroCopy"))
        flex = spec.get("flexibleVersions")
        self.flexible: Versions | None = Versions.parse(flex) if flex else None
        self.struct: Struct | None = None  # resolved by Message

    @property
    def wire_tag(self) -> int:
        """A tagged field's tag number (a tagged field without one is a schema error)."""
        if self.tag is None:  # pragma: no cover - schema error
            raise ValueError(f"tagged field {self.name} has no tag")
        return self.tag

    @property
    def struct_def(self) -> Struct:
        """The struct a ``struct`` field (or array of structs) holds, resolved by :class:`Message`."""
        if self.struct is None:  # pragma: no cover - schema error
            raise ValueError(f"field {self.name} holds no struct")
        return self.struct

    @property
    def default_is_null(self) -> bool:
        return self.default_text == "null"

    def default(self) -> Any:
        """The value a generated class holds when the field is absent (``FieldSpec.fieldDefault``)."""
        try:
            return self._default
        except AttributeError:
            pass
        kind, d = self.type.kind, self.default_text
        if kind == "bool":
            value: Any = d.lower() == "true"
        elif kind in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
            value = int(d[2:], 16) if d.startswith("0x") else int(d or "0")
        elif kind == "float64":
            value = float(d) if d else 0.0
        elif kind == "uuid":
            value = base64.urlsafe_b64decode(d + "==") if d else ZERO_UUID
        elif kind == "string":
            value = None if d == "null" else d
        elif kind == "bytes":
            value = None if d == "null" else b""
        elif kind == "records":
            value = None
        elif kind == "struct":
            value = None if d == "null" else self.struct_def.default_value()
        else:  # array
            value = None if d == "null" else []
        self._default = value
        return value


class Struct:
    """A struct with its fields; ``versions`` / ``parent`` as in Kafka's generator."""

    __slots__ = ("name", "versions", "parent", "fields", "message", "read_plans", "whole_plans", "json_plans")

    def __init__(self, name: str, versions: Versions, parent: Versions, message: "Message") -> None:
        self.name = name
        self.versions = versions
        self.parent = parent
        self.fields: list[Field] = []
        self.message = message
        self.read_plans: dict = {}
        self.whole_plans: dict = {}  # version -> kseg.decoders.compiled's fast road, or None
        self.json_plans: dict = {}

    @property
    def current(self) -> Versions:
        """``curVersions`` = parent versions intersected with the struct's own."""
        return self.parent.intersect(self.versions)

    def default_value(self) -> dict:
        """A freshly constructed instance: every field at its default."""
        out = {}
        for f in self.fields:
            d = f.default()
            out[f.name] = list(d) if isinstance(d, list) else (dict(d) if isinstance(d, dict) else d)
        return out

    def __repr__(self) -> str:
        return f"<Struct {self.name} {self.versions}>"


class Message:
    """A top-level message spec (Kafka's ``MessageSpec``)."""

    __slots__ = ("name", "spec_type", "api_key", "valid", "flexible", "struct", "structs")

    def __init__(self, spec: dict) -> None:
        self.name: str = spec["name"]
        self.spec_type: str = spec["type"]
        self.api_key: int | None = spec.get("apiKey")
        self.valid = Versions.parse(spec["validVersions"])
        self.flexible = Versions.parse(spec["flexibleVersions"], NONE)
        self.structs: dict[str, Struct] = {}
        for cs in spec.get("commonStructs", ()):
            v = Versions.parse(cs["versions"])
            s = Struct(cs["name"], v, v, self)
            self.structs[s.name] = s
        for cs in spec.get("commonStructs", ()):
            self._fill(self.structs[cs["name"]], cs["fields"])
        self.struct = Struct(self.name, self.valid, self.valid, self)
        self._fill(self.struct, spec["fields"])

    def _fill(self, struct: Struct, field_specs: list) -> None:
        for fs in field_specs:
            f = Field(fs)
            t = f.type.element if f.type.kind == "array" else f.type
            if t.kind == "struct":
                if fs.get("fields"):
                    child = Struct(t.struct_type, f.versions, struct.parent.intersect(struct.versions), self)
                    self.structs[child.name] = child
                    self._fill(child, fs["fields"])
                f.struct = self.structs[t.struct_type]
            struct.fields.append(f)

    def __repr__(self) -> str:
        return f"<Message {self.name} {self.valid}>"


def require_struct(struct: Struct | None, name: str) -> Struct:
    """``struct``, which the schema resolved for the field ``name`` holding structs."""
    if struct is None:  # pragma: no cover - schema error
        raise ValueError(f"field {name} holds no struct")
    return struct


def _read_text(filename: str) -> str:
    return resources.files("kseg.decoders").joinpath("schemas").joinpath(filename).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def message(name: str) -> Message:
    """The schema of Kafka message ``name`` (e.g. ``"OffsetCommitValue"``), loaded on first use."""
    return Message(json.loads(_read_text(f"{name}.json")))


@lru_cache(maxsize=None)
def index() -> dict:
    """``schemas/index.json``: api-key tables of the metadata record families."""
    return json.loads(_read_text("index.json"))


@lru_cache(maxsize=None)
def metadata_names(table: str = "metadata") -> dict[int, str]:
    """apiKey -> message name for ``"metadata"`` (KRaft) or ``"remoteLogMetadata"``."""
    return {int(k): v for k, v in index()[table].items()}


@lru_cache(maxsize=None)
def tagged_since(name: str) -> dict[str, str]:
    """``"Struct.field"`` -> the first Kafka release line (``"4.1"``, or ``"current"``) whose spec of
    message ``name`` has that tagged field (``index.json``'s ``taggedSince``; absent: every line has it)."""
    return index().get("taggedSince", {}).get(name, {})


def drop_newer_tagged(message: Message, tree: dict, knows: Any) -> dict:
    """Remove from ``tree`` (the message's JSON) the tagged fields the release ``knows`` (a predicate
    on a release line) does not: its generated class keeps an unknown tag aside and its converter
    never prints it.  Returns ``tree``."""
    since = tagged_since(message.name)
    if not since:
        return tree
    drops = {path for path, line in since.items() if not knows(line)}
    if drops:
        _drop(message.struct, tree, drops)
    return tree


def drop_tagged_except(message: Message, tree: dict, known: set) -> dict:
    """Remove from ``tree`` every tagged field whose ``Struct.field`` path is not in ``known`` (an older
    release's classes keep such a tag aside and never print it).  Returns ``tree``."""
    drops: set = set()
    _tagged_paths(message.struct, drops, set())
    drops -= known
    if drops:
        _drop(message.struct, tree, drops)
    return tree


def _tagged_paths(struct: Struct, out: set, seen: set) -> None:
    if struct.name in seen:
        return
    seen.add(struct.name)
    for f in struct.fields:
        if f.tag is not None:
            out.add(f"{struct.name}.{f.name}")
        if f.struct is not None:
            _tagged_paths(f.struct, out, seen)


def _drop(struct: Struct, node: dict, drops: set) -> None:
    for f in struct.fields:
        if f.name not in node:
            continue
        if f"{struct.name}.{f.name}" in drops:
            del node[f.name]
            continue
        if f.struct is not None:
            v = node[f.name]
            for child in v if isinstance(v, list) else [v]:
                if isinstance(child, dict):
                    _drop(f.struct, child, drops)
