"""The remote store's objects, listed once, and the segment objects among them.

``--remote`` is the root (bucket prefix or directory) under which the RSM writes: Aiven's
``rsm.config.storage.key.prefix`` location, or ``LocalTieredStorage``'s storage directory.  It is listed once,
recursively (``location.list_tree``: ``ListObjectsV2`` pages on S3; ``os.walk`` on a local directory), and
each key parsed by ``kseg.storage.remote_keys.parse_key``: objects of a segment are grouped by its segment id
(a ``Uuid``, unique across the cluster), other keys are counted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kseg.errors import InputError
from kseg.storage import location
from kseg.storage.remote_keys import RemoteObjectKey, parse_key

if TYPE_CHECKING:
    from kseg.storage.context import Store


@dataclass
class StoredObject:
    """One listed object of a segment: its key (a path or URI as listed), size and parsed parts."""

    path: str
    size: int
    key: RemoteObjectKey


@dataclass
class StoreListing:
    """The store's segment objects by segment id, and the count and size of the keys that are no segment's;
    ``store`` is the root's, chosen once where ``--remote`` is given: the grammar its keys are compared in and
    whether a custom ``object_prefix`` starts in its bucket (:func:`kseg.ops.tiered.keys.expected_key`)."""

    root: str
    store: Store
    by_segment: dict[str, list[StoredObject]] = field(default_factory=dict)
    other_objects: int = 0
    other_bytes: int = 0
    objects: int = 0


def _walk(root: str) -> list[location.Entry]:
    def fail(exc: OSError) -> None:
        raise InputError(f"cannot list the directory: {exc.strerror or exc}", path=exc.filename or root)

    if not os.path.isdir(root):
        raise InputError("not a directory: give the remote store's root (--remote)", path=root)
    out = []
    for directory, _dirs, names in os.walk(root, onerror=fail):
        for name in names:
            path = os.path.join(directory, name)
            try:
                out.append(location.Entry(path, os.lstat(path).st_size))
            except OSError as exc:
                raise InputError(f"cannot stat: {exc.strerror or exc}", path=path) from None
    out.sort()
    return out


def list_store(root: str, store: Store) -> StoreListing:
    """Every object under ``root`` of ``store`` (raises :class:`InputError` when it cannot be listed: exit 2)."""
    return index_entries(root, list_objects(root, store), store)


def _check_root(root: str) -> None:
    """A store's root that holds nothing is no store: a bucket that does not exist, a prefix with no object
    (an object store has no empty directories), a file -- :class:`InputError`, exit 2, as a missing local
    directory is (never every segment "missing")."""
    location.check_uri(root)
    what = location.kind(root)
    if what == "dir":
        return
    if what == "file":
        raise InputError("an object, not a prefix: give the remote store's root (--remote)", path=root)
    bucket = location.bucket(root)
    if bucket != root.rstrip("/") and location.kind(bucket) == "missing":
        raise InputError("no such bucket", path=bucket)
    raise InputError("no such bucket or prefix (no object under it)", path=root)


def list_objects(root: str, store: Store) -> list[location.Entry]:
    """Every object under ``root`` (a prefix or a directory of ``store``), recursively, with sizes."""
    if store.remote:
        _check_root(root)
        return location.list_tree(root)
    if not os.path.lexists(location.local_path(root)):
        raise InputError("no such file or directory", path=root)
    return _walk(location.local_path(root))


def top_level(root: str, store: Store) -> tuple[list[str], list[location.Entry]]:
    """The prefixes (a topic's, or a topic-partition's, in both layouts) and the objects directly under
    ``root`` of ``store``: what ``--spark`` hands out, one listing each."""
    if store.remote:
        _check_root(root)
        return location.list_level(root)
    path = location.local_path(root)
    if not os.path.isdir(path):
        raise InputError("not a directory: give the remote store's root (--remote)", path=root)
    dirs, found = [], []
    try:
        with os.scandir(path) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    dirs.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    found.append(location.Entry(entry.path, entry.stat(follow_symlinks=False).st_size))
    except OSError as exc:
        raise InputError(f"cannot list the directory: {exc.strerror or exc}", path=root) from None
    return sorted(dirs), sorted(found)


def index_entries(root: str, entries: list[location.Entry], store: Store) -> StoreListing:
    """The listing of ``entries`` (paths or URIs with sizes) found under ``root`` of ``store``."""
    listing = StoreListing(root, store)
    for entry in entries:
        listing.objects += 1
        size = entry.size or 0
        key = parse_key(entry.path)
        if key is None:
            listing.other_objects += 1
            listing.other_bytes += size
            continue
        listing.by_segment.setdefault(key.segment_id, []).append(StoredObject(entry.path, size, key))
    return listing
