"""The ``_schemas`` topic replayed as Confluent Schema Registry replays it.

Facts from confluentinc/schema-registry, ``core/.../schemaregistry/storage/``:

* ``KafkaStoreReaderThread.doWork``: records in offset order; a key that does not deserialize is
  skipped (logged); a ``NOOP`` key only moves the offset; a value that does not deserialize is
  skipped; a **null value deletes the key** from the store (a tombstone), any other value is put.
* ``SchemaRegistrySerializer``: keys and values are JSON; the key's ``keytype`` (``SCHEMA``,
  ``CONFIG``, ``MODE``, ``NOOP``, ``DELETE_SUBJECT``, ``CLEAR_SUBJECT``, ``CONTEXT``, ``ASSOC``)
  chooses the classes; a ``SCHEMA`` key's ``magic`` must be 0 or 1.
* ``SchemaKey`` ``{"keytype":"SCHEMA","subject":S,"version":V,"magic":1}``; ``SchemaValue``:
  ``subject``, ``version``, ``id``, ``md5`` (base64), ``schemaType`` (absent: ``AVRO``),
  ``references`` (``name``, ``subject``, ``version``), ``metadata``, ``ruleSet``, ``schema``,
  ``deleted``.
* ``KafkaStoreMessageHandler`` and ``InMemoryCache``: a schema registered *or soft-deleted*
  (``deleted: true``, or a ``DELETE_SUBJECT`` value marking versions 1..N) keeps its id
  (``schemaDeleted`` indexes it like ``schemaRegistered``): the registry still serves it by id.  A
  tombstone on a ``SchemaKey`` (hard delete) removes that subject-version from its id; the id is
  gone when no subject-version is left.  ``CLEAR_SUBJECT`` drops the soft-deleted versions of the
  subject.  Ids are per context (``QualifiedSubject``: ``:.ctx:subject``; the default context is
  ``.``); a GUID is the schema's MD5 (``MD5.ofSchema``: the ``md5`` field, else MD5 over the schema
  text and its references).

Memory is bounded by the number of schemas (their text), not the number of records.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from collections import Counter
from dataclasses import dataclass

DEFAULT_CONTEXT = "."
KEY_TYPES = ("SCHEMA", "CONFIG", "MODE", "NOOP", "DELETE_SUBJECT", "CLEAR_SUBJECT", "CONTEXT", "ASSOC")


def split_subject(subject: str) -> tuple[str, str]:
    """``QualifiedSubject``: ``":.ctx:name"`` -> ``(".ctx", "name")``; unqualified -> ``(".", subject)``."""
    if subject.startswith(":."):
        ix = subject.find(":", 2)
        if ix < 0:
            return subject[1:], ""
        return subject[1:ix], subject[ix + 1 :]
    return DEFAULT_CONTEXT, subject


def qualify(context: str, subject: str) -> str:
    return subject if context == DEFAULT_CONTEXT else f":{context}:{subject}"


@dataclass(frozen=True)
class Reference:
    name: str
    subject: str
    version: int


@dataclass(frozen=True)
class SchemaEntry:
    """One ``SchemaValue`` as the store holds it."""

    subject: str  # as written: qualified with its context
    version: int
    id: int
    schema_type: str  # AVRO, PROTOBUF or JSON
    schema: str
    references: tuple[Reference, ...]
    deleted: bool
    md5: bytes | None
    has_extras: bool  # metadata or ruleSet: its MD5 needs the md5 field

    @property
    def context(self) -> str:
        return split_subject(self.subject)[0]

    def guid(self) -> bytes | None:
        """``MD5.ofSchema(SchemaValue)``: the ``md5`` field, else the MD5 of the text and references."""
        if self.md5 is not None:
            return self.md5
        if self.has_extras:
            return None
        md = hashlib.md5(self.schema.encode("utf-8"))
        for ref in self.references:
            md.update(ref.name.encode("utf-8"))
            md.update(ref.subject.encode("utf-8"))
            md.update(struct.pack(">i", ref.version))
        return md.digest()


class SchemaStore:
    """The registry's local store after replaying ``_schemas``, reduced to what decoding needs."""

    def __init__(self) -> None:
        self.schemas: dict[tuple[str, int], SchemaEntry] = {}
        self._ids: dict[str, dict[int, dict[str, int]]] = {}  # context -> id -> {subject: version}
        self.contexts: list[str] = []  # CONTEXT keys, in order of first appearance
        self.skipped: Counter[str] = Counter()  # why a record was not applied -> count
        self.records = 0
        self.origin = "_schemas"  # what the store was read from: _schemas (replayed) or files (.files)
        self._guids: dict[tuple[str, bytes], int] | None = None  # (context, MD5) -> id, built on first use

    # -- replay --------------------------------------------------------------------------------
    def apply(self, key: bytes | None, value: bytes | None) -> None:
        """One ``_schemas`` record, as ``KafkaStoreReaderThread.doWork`` applies it."""
        self.records += 1
        self._guids = None
        try:
            k = json.loads(bytes(key)) if key is not None else None
        except ValueError:
            k = None
        if not isinstance(k, dict) or not isinstance(k.get("keytype"), str):
            self.skipped["a key that is not a registry key"] += 1
            return
        kind = k["keytype"]
        if kind not in KEY_TYPES:
            self.skipped[f"an unknown keytype {kind}"] += 1
            return
        if kind == "NOOP":
            return
        v = None
        if value is not None:
            try:
                v = json.loads(bytes(value))
            except ValueError:
                self.skipped[f"a {kind} value that is not JSON"] += 1
                return
            if not isinstance(v, dict):
                self.skipped[f"a {kind} value that is not an object"] += 1
                return
        if kind == "SCHEMA":
            self._schema(k, v)
        elif kind == "CONTEXT" and v is not None:
            ctx = k.get("context")
            if isinstance(ctx, str) and ctx not in self.contexts:
                self.contexts.append(ctx)
        elif v is None:
            return  # "ignore non-schema tombstone"
        elif kind == "DELETE_SUBJECT":
            self._delete_subject(v)
        elif kind == "CLEAR_SUBJECT":
            self._clear_subject(v)

    def _schema(self, k: dict, v: dict | None) -> None:
        subject, version, magic = k.get("subject"), k.get("version"), k.get("magic", 0)
        if not isinstance(subject, str) or not isinstance(version, int) or magic not in (0, 1):
            self.skipped["a SCHEMA key without subject, version or magic 0/1"] += 1
            return
        slot = (subject, version)
        if v is None:  # a hard delete
            old = self.schemas.pop(slot, None)
            if old is not None:
                self._unindex(old)
            return
        entry = _entry(v)
        if entry is None:
            self.skipped["a SCHEMA value without id or schema"] += 1
            return
        entry = SchemaEntry(
            subject, version, entry.id, entry.schema_type, entry.schema, entry.references, entry.deleted,
            entry.md5, entry.has_extras,
        )  # fmt: skip
        self.schemas[slot] = entry
        self._ids.setdefault(entry.context, {}).setdefault(entry.id, {})[subject] = version

    def _unindex(self, entry: SchemaEntry) -> None:
        ids = self._ids.get(entry.context, {})
        holders = ids.get(entry.id)
        if holders is not None and holders.get(entry.subject) == entry.version:
            del holders[entry.subject]
            if not holders:
                del ids[entry.id]

    def _delete_subject(self, v: dict) -> None:
        subject, upto = v.get("subject"), v.get("version")
        if not isinstance(subject, str) or not isinstance(upto, int):
            return
        for version in range(1, upto + 1):
            old = self.schemas.get((subject, version))
            if old is not None and not old.deleted:
                self.schemas[(subject, version)] = _replace_deleted(old)

    def _clear_subject(self, v: dict) -> None:
        subject = v.get("subject")
        if not isinstance(subject, str):
            return
        context, name = split_subject(subject)
        for slot, entry in list(self.schemas.items()):
            matches = slot[0] == subject or (not name and entry.context == context)
            if matches and entry.deleted:
                del self.schemas[slot]
                self._unindex(entry)

    # -- lookups -------------------------------------------------------------------------------
    def by_id(self, schema_id: int, context: str = DEFAULT_CONTEXT) -> SchemaEntry | None:
        """``InMemoryCache.schemaKeyById`` with no subject: the first subject-version holding the id."""
        holders = self._ids.get(context, {}).get(schema_id)
        if not holders:
            return None
        subject, version = next(iter(holders.items()))
        return self.schemas.get((subject, version))

    def by_guid(self, guid: bytes, context: str = DEFAULT_CONTEXT) -> SchemaEntry | None:
        """``idByGuid``: the schema whose MD5 is ``guid``, in ``context`` (the index built once, on first use)."""
        if self._guids is None:
            self._guids = {}
            for entry in self.schemas.values():
                digest = entry.guid()
                if digest is not None:
                    self._guids[(entry.context, digest)] = entry.id
        schema_id = self._guids.get((context, guid))
        return None if schema_id is None else self.by_id(schema_id, context)

    def contexts_holding(self, schema_id: int) -> list[str]:
        return [ctx for ctx, ids in self._ids.items() if ids.get(schema_id)]

    def reference(self, ref: Reference, parent_subject: str) -> SchemaEntry | None:
        """A reference's schema: its subject qualified with the parent's context when unqualified
        (``QualifiedSubject.qualifySubjectWithParent``); soft-deleted versions resolve too."""
        context, _ = split_subject(ref.subject)
        subject = ref.subject
        if context == DEFAULT_CONTEXT:
            parent_context = split_subject(parent_subject)[0]
            subject = qualify(parent_context, ref.subject)
        return self.schemas.get((subject, ref.version))

    def latest(self, subject: str) -> SchemaEntry | None:
        """The subject's latest version not soft-deleted (the registry's ``latest``), else its latest."""
        versions = sorted((v, e) for (s, v), e in self.schemas.items() if s == subject)
        live = [e for _, e in versions if not e.deleted]
        return live[-1] if live else versions[-1][1] if versions else None

    def __len__(self) -> int:
        return len(self.schemas)


def _replace_deleted(e: SchemaEntry) -> SchemaEntry:
    return SchemaEntry(e.subject, e.version, e.id, e.schema_type, e.schema, e.references, True, e.md5, e.has_extras)


def _entry(v: dict) -> SchemaEntry | None:
    sid, text = v.get("id"), v.get("schema")
    if not isinstance(sid, int) or not isinstance(text, str):
        return None
    refs = []
    for r in v.get("references") or ():
        if isinstance(r, dict) and isinstance(r.get("subject"), str) and isinstance(r.get("version"), int):
            refs.append(Reference(str(r.get("name") or ""), r["subject"], r["version"]))
    md5 = None
    if isinstance(v.get("md5"), str):
        try:
            md5 = base64.b64decode(v["md5"], validate=True)
        except ValueError:
            md5 = None
    schema_type = v.get("schemaType") or "AVRO"
    extras = bool(v.get("metadata")) or bool(v.get("ruleSet"))
    return SchemaEntry(
        "", 0, sid, str(schema_type), text, tuple(refs), bool(v.get("deleted")), md5, extras
    )  # fmt: skip
