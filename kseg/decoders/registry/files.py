"""``--schemas DIR``: a directory of schema files instead of the ``_schemas`` topic.

Two kinds of file, read in name order (docs/schemas.md, "A directory of schema files"):

* ``*.json`` holding what the registry's REST API answers for a schema -- ``GET
  /subjects/{subject}/versions/{version}`` (an object with ``subject``, ``version``, ``id``,
  ``schema``, ``schemaType``, ``references``) or ``GET /schemas`` (a list of them): a saved
  ``curl`` is a backup;
* a schema's own text named ``<subject>-<version>-<id>.avsc`` (Avro), ``.proto`` (Protobuf) or
  ``.json`` (JSON Schema, when the file is not a REST answer): version and id are the last two
  ``-``-separated parts of the name, the subject the rest.  No references.

Each schema is put into a :class:`~kseg.decoders.registry.store.SchemaStore` as the registry's own
records would put it (a ``SchemaKey`` and its ``SchemaValue``), so every lookup is the replay's.
A file that cannot be read, or a name or text that is none of these, stops the command (exit 2).

The directory is local or a prefix of an object store (``s3://bucket/schemas/``): it is listed and
its files read through the store chosen for it (:mod:`kseg.storage.stores`), each through the bounded
reader (:mod:`kseg.storage.read`), as the ``_schemas`` partition of the data is.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from kseg.decoders.registry.store import SchemaStore
from kseg.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kseg.storage.context import ListedFile, Store

SUFFIXES = {".avsc": "AVRO", ".proto": "PROTOBUF", ".json": "JSON"}
MAX_FILE = 16 << 20  # one file of schemas (a GET /schemas answer of thousands of schemas fits)


def schema_files(directory: str, topic: str, store: Store) -> Sequence[ListedFile] | None:
    """The files directly under ``directory`` (local or a prefix of ``store``, listed once through it) when it
    holds schema files, no ``.log`` segment and no ``<topic>-0`` partition directory (a log dir, never listed
    whole); else None."""
    from kseg.storage.location import basename

    try:
        if store.stat(directory).kind != "dir":
            return None
        if store.stat(store.names.join(directory, f"{topic}-0")).kind == "dir":
            return None
        entries = store.list(store.names.directory(directory))
    except InputError:
        return None  # the replay says why it cannot be read
    names = [basename(e.path) for e in entries]
    if any(os.path.splitext(n)[1] in SUFFIXES for n in names) and not any(n.endswith(".log") for n in names):
        return entries
    return None


def load_files(directory: str, entries: Sequence[ListedFile], where: Store) -> SchemaStore:
    """The schemas of the files ``entries`` of ``directory`` listed of ``where`` (:func:`schema_files`), read in
    name order."""
    from kseg.storage.checkpoints import open_aux
    from kseg.storage.location import basename
    from kseg.storage.read import Kind

    kind = Kind("schema", MAX_FILE, "a registry's schemas, one file or a GET /schemas answer")
    store = SchemaStore()
    store.origin = "files"
    for name, path in sorted((basename(e.path), e.path) for e in entries):
        suffix = os.path.splitext(name)[1]
        if suffix not in SUFFIXES:
            continue
        data = open_aux(path, kind, store=where).data()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("--schemas: not UTF-8 text", path=path, position=exc.start) from None
        answers = _rest_answers(text) if suffix == ".json" else None
        if answers is None:
            answers = [_named(name, SUFFIXES[suffix], text, path)]
        for value in answers:
            key = {"keytype": "SCHEMA", "subject": value["subject"], "version": value["version"], "magic": 1}
            store.apply(json.dumps(key).encode(), json.dumps(value).encode())
    if not store.schemas:
        raise InputError("--schemas: no schema file here (<subject>-<version>-<id>.avsc|.proto|.json)", path=directory)
    return store


def _rest_answers(text: str) -> list[dict] | None:
    """The schemas of a REST answer (an object or a list of them), or None when ``text`` is not one."""
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    items = doc if isinstance(doc, list) else [doc]
    if not items or not all(_is_answer(x) for x in items):
        return None
    return items


def _is_answer(x: object) -> bool:
    return (
        isinstance(x, dict)
        and isinstance(x.get("subject"), str)
        and isinstance(x.get("version"), int)
        and isinstance(x.get("id"), int)
        and isinstance(x.get("schema"), str)
    )


def _named(name: str, schema_type: str, text: str, path: str) -> dict:
    from kseg.format.java_numbers import parse_int, parse_long

    stem = os.path.splitext(name)[0]
    subject, version, sid = (stem.rsplit("-", 2) + ["", ""])[:3]
    number, schema_id = parse_int(version), parse_long(sid)  # an Apicurio globalId is a long
    if not subject or number is None or schema_id is None or number < 1 or schema_id < 0:
        raise InputError(
            "--schemas: a schema file is named <subject>-<version>-<id>.avsc|.proto|.json "
            "(or a .json holds a registry's GET /subjects/{subject}/versions/{version} answer)",
            path=path,
        )
    value: dict = {"subject": subject, "version": number, "id": schema_id, "schema": text}
    if schema_type != "AVRO":
        value["schemaType"] = schema_type
    return value
