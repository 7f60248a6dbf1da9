"""Where the schemas come from: a ``_schemas`` partition directory read through kseg's own
segment reader (:class:`kseg.storage.records.FileRecords`), streamed, or a log dir holding one; a
directory of schema files (:mod:`.files`); a registry URL (:mod:`.remote`).

``--schemas SOURCE`` is a partition directory (``_schemas-0``, or another name the registry's
``kafkastore.topic`` gave it) or a log dir holding ``_schemas-0``, local or a URI read through the
store the data uses (``kseg.storage.location``); without it, the log dir of the data is searched
(:func:`beside`).  A source that cannot be read, or whose records are not a
registry's, is an :class:`~kseg.errors.InputError` (exit 2 with the reason).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from kseg.decoders.registry.store import SchemaStore
from kseg.errors import InputError, KsegError
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT

if TYPE_CHECKING:
    from kseg.storage.context import Store

TOPIC = "_schemas"


def partition_dir(source: str, store: Store) -> str:
    """The ``_schemas`` partition directory ``source`` names (itself, or ``<source>/_schemas-0``); a URI
    (``s3://…``) is asked of its ``store``."""
    from kseg.storage import location

    if store.remote:
        what = location.kind(source)
        if what == "missing":
            raise InputError("--schemas: no such prefix in the store", path=source)
        if what == "file":
            raise InputError("--schemas: an object, not a prefix (give _schemas-0 or its log dir)", path=source)
        inner = location.join(source.rstrip("/"), f"{TOPIC}-0")
        return inner if location.kind(inner) == "dir" else source.rstrip("/")
    source = location.local_path(source)
    if not os.path.isdir(source):
        if not os.path.exists(source):
            raise InputError("--schemas: no such file or directory", path=source)
        raise InputError("--schemas: not a directory (give a _schemas partition directory or its log dir)", path=source)
    inner = os.path.join(source, f"{TOPIC}-0")
    if os.path.isdir(inner):
        return inner
    return source


def beside(data_paths: list[str]) -> str | None:
    """A ``_schemas-0`` directory in the first data path (a log dir) or in its log dir (a partition
    directory or a segment file in one), or None."""
    from kseg.storage import location
    from kseg.storage.stores.discover import store_of

    for path in data_paths:
        if store_of(path).remote:
            part = path.rstrip("/") if location.kind(path) == "dir" else location.dirname(path)
            candidate = location.join(location.dirname(part), f"{TOPIC}-0")
            if candidate != part and location.kind(candidate) == "dir":
                return candidate
            continue
        full = os.path.abspath(location.local_path(path))
        inside = os.path.join(full, f"{TOPIC}-0")
        if os.path.isdir(inside):  # a log dir holding it
            return inside
        part = full if os.path.isdir(full) else os.path.dirname(full)
        candidate = os.path.join(os.path.dirname(part), f"{TOPIC}-0")
        if os.path.isdir(candidate) and os.path.normpath(candidate) != os.path.normpath(part):
            return candidate
    return None


def load(source: str, limit: int = DEFAULT_DECOMPRESSION_LIMIT) -> tuple[Any, str]:
    """The schemas ``source`` names: a registry URL (:mod:`.remote`), a directory of schema files
    (:mod:`.files`) or the ``_schemas`` partition replayed: (the store, what was read)."""
    from kseg.decoders.registry.remote import RegistryUnreachable, RemoteStore, is_registry_url

    if is_registry_url(source):
        remote = RemoteStore(source)
        try:
            remote.probe()
        except RegistryUnreachable as exc:
            raise InputError(f"--schemas: {exc}", path=source) from None
        return remote, source
    from kseg.decoders.registry.files import load_files, schema_files
    from kseg.storage.stores.discover import store_of

    where = store_of(source)  # the source given: its store, chosen once for its listing and every file read
    entries = schema_files(source, TOPIC, where)
    if entries is not None:
        return load_files(source, entries, where), source
    return replay(source, where, limit)


def replay(source: str, where: Store, limit: int = DEFAULT_DECOMPRESSION_LIMIT) -> tuple[SchemaStore, str]:
    """Replay the ``_schemas`` partition ``source`` (of the store ``where``) names: (the schemas, the directory
    read)."""
    from kseg.storage.partition import scan_partition
    from kseg.storage.records import FileRecords

    directory = partition_dir(source, where)
    notes: list[str] = []
    part = scan_partition(directory, notes, store=where)
    if part.error:
        raise InputError(f"--schemas: {part.error}", path=directory)
    logs = [s.log for s in part.segments if s.log]
    if not logs:
        raise InputError("--schemas: no .log segment here: not a _schemas partition directory", path=directory)
    store = SchemaStore()
    for log in logs:
        try:
            with FileRecords(log, store=part.store) as f:
                for batch in f.batches():
                    if getattr(batch, "is_control", False):  # transaction markers: not the registry's
                        continue
                    for rec in batch.records(limit):
                        store.apply(
                            None if rec.key is None else bytes(rec.key), None if rec.value is None else bytes(rec.value)
                        )
        except OSError as exc:
            raise InputError(f"--schemas: {exc.strerror or exc}", path=log) from None
        except KsegError as exc:
            raise InputError(
                f"--schemas: not read past corruption: {exc.message}", path=exc.path or log, position=exc.position
            ) from None
    if store.records and store.skipped.total() == store.records:
        raise InputError(
            f"--schemas: none of its {store.records} records is a schema registry record: not a _schemas log",
            path=directory,
        )
    return store, directory
