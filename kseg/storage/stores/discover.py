"""Choosing a store for an input root -- the one place a path string is asked where its bytes live -- and
the store every root is seen through: Aiven's tiered layout as a store over a store.

A segment Aiven's plugin copied is objects (:mod:`kseg.storage.remote_keys`): ``<stem>.log`` (chunks,
maybe compressed and encrypted), ``<stem>.indexes`` and ``<stem>.rsm-manifest``.  :class:`AivenStore`
wraps the store holding the objects (local or an object store) and shows the segment as Kafka wrote it:
opening ``<stem>.log`` gives its original bytes, opening ``<stem>.index`` (or ``.timeindex``,
``.txnindex``, ``.snapshot``) the index cut from ``.indexes``; every other path is the store below's.
Its manifests, private keys and unwrapped data keys are read once per store (one store per input root,
one per command: two commands in one process share none of them); the keys are the read context's.
Every local root is seen through it, so it asks a path's name first (:mod:`kseg.storage.tiered_names`):
the key parser and :mod:`kseg.storage.tiered` are imported only when a name has the layout's shape.  It
lives with the choice that wraps every root in it: the stores below it (local, pyarrow's) and the protocol
they share know nothing of the tiered reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kseg.errors import CorruptRecordError, InputError, KsegError
from kseg.storage import location
from kseg.storage.context import ReadContext, ReadFile, Stat, Store, running
from kseg.storage.stores.local import LocalStore
from kseg.storage.tiered_names import aiven_key

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kseg.format.rsm_manifest import Manifest
    from kseg.storage.context import ListedFile, Names
    from kseg.storage.remote_keys import RemoteObjectKey


def store_for(root: str, context: ReadContext) -> Store:
    """The store of the paths under ``root``: local files, or objects under a URI (pyarrow), each seen
    through Aiven's tiered layout (a segment with a manifest reads as Kafka wrote it; any other file as
    it is).  ``LocalTieredStorage``'s copies are local files under their own names
    (:func:`kseg.storage.files.base_offset_from_name`): the local store reads them."""
    remote = location.is_remote(root)
    made: Store | None = context.stores.get(remote)  # one per kind and context: its reads cached once
    if made is None:
        inner: Store
        if remote:
            from kseg.storage.stores.arrow import ArrowStore  # (pyarrow's filesystems: only for a URI)

            inner = ArrowStore(context)
        else:
            inner = LocalStore(context)
        made = context.stores[remote] = AivenStore(inner)
    return made


def store_of(path: str, context: ReadContext | None = None) -> Store:
    """The store of a path given alone -- an output, a report, a ``--schemas`` source, a file a caller names
    without a partition or segment to ask -- chosen by :func:`store_for` under ``context`` (the running
    command's, :func:`kseg.storage.context.running`, when None): the one call that chooses a store for a
    caller holding none.  Storage's nouns and readers never call it: they are handed their store."""
    return store_for(path, running() if context is None else context)


class AivenStore:
    """The segments of Aiven's layout in ``inner`` (see the module's text)."""

    __slots__ = ("inner", "context", "remote", "names", "_manifests", "_private", "_unwrapped")

    def __init__(self, inner: Store) -> None:
        self.inner, self.context = inner, inner.context
        self.remote: bool = inner.remote
        self.names: Names = inner.names
        self._manifests: dict[str, Manifest | None] = {}
        self._private: dict[str, tuple[int, tuple[int, int, int, int, int]] | None] = {}
        self._unwrapped: dict[tuple[str, bytes], bytes] = {}

    # -- what the layout adds ----------------------------------------------------------------------
    def manifest(self, key: RemoteObjectKey) -> Manifest | None:
        """The segment's manifest (read once by this store), ``None`` when it has none."""
        path = key.with_suffix("rsm-manifest").key
        if path not in self._manifests:
            from kseg.storage import tiered

            # anything at the manifest's name is read (a directory there is an error, not "no manifest")
            there = self.inner.stat(path).kind != "missing"
            self._manifests[path] = tiered.read_manifest(self.inner.open, path) if there else None
        return self._manifests[path]

    def _data_key(self, manifest: Manifest, where: str) -> bytes:
        enc = manifest.encryption
        assert enc is not None
        cached = self._unwrapped.get((enc.key_pair_id, enc.wrapped_key))
        if cached is None:
            from kseg.storage import tiered

            cached = tiered.unwrap(manifest, self._private_key(enc.key_pair_id), where)
            self._unwrapped[(enc.key_pair_id, enc.wrapped_key)] = cached
        return cached

    def _private_key(self, pair: str) -> tuple[int, tuple[int, int, int, int, int]] | None:
        if pair not in self._private:
            from kseg.storage import tiered

            given = self.context.keys.get(pair)
            self._private[pair] = None if given is None else tiered.private_key(*given)
        return self._private[pair]

    def _segment_file(self, path: str) -> tuple[RemoteObjectKey, Manifest] | None:
        """The key and manifest of a segment file of the layout (a ``.log`` or an index), else None; a
        manifest that cannot be read is the ``.log``'s error (its reader reports it once)."""
        key = aiven_key(path)
        if key is None:
            return None
        from kseg.storage import tiered  # (only for a name of the layout's shape)

        if key.suffix != "log" and key.suffix not in tiered.INDEX_OF_SUFFIX:
            return None
        try:
            manifest = self.manifest(key)
        except KsegError:
            if key.suffix != "log":
                return None
            raise
        return None if manifest is None else (key, manifest)

    def _index_inside(self, path: str) -> bool | None:
        """Whether an index of a segment of the ``.indexes`` layout exists (a transaction index only when the
        manifest has one); None for any other path (the store below answers)."""
        key = aiven_key(path)
        if key is None:
            return None
        from kseg.storage import tiered  # (only for a name of the layout's shape)

        if key.suffix not in tiered.INDEX_OF_SUFFIX:
            return None
        try:
            manifest = self.manifest(key)
        except KsegError:
            return None
        if manifest is None or manifest.segment_indexes is None:
            return None
        return manifest.segment_indexes[tiered.INDEX_OF_SUFFIX[key.suffix]] is not None

    # -- the store ---------------------------------------------------------------------------------
    def open(self, path: str, buffering: int = -1) -> ReadFile:
        found = self._segment_file(path)
        if found is None:
            return self.inner.open(path, buffering)
        key, manifest = found
        from kseg.storage import tiered

        if key.suffix == "log":
            return tiered.TieredLogFile(key, manifest, self.inner.open, self._data_key)
        if manifest.segment_indexes is None and not manifest.encryption:
            return self.inner.open(path, buffering)  # an old per-index object, stored as it was
        try:
            return tiered.read_index(key, manifest, self.inner.open, self._data_key)
        except CorruptRecordError as exc:  # an index its object cannot give: unreadable, as a local index that fails
            raise InputError(exc.message, path=exc.path, position=exc.position) from None  # (lookups read the log)

    def stat(self, path: str) -> Stat:
        inside = self._index_inside(path)
        if inside is not None:
            return Stat("file" if inside else "missing")
        return self.inner.stat(path)

    def exists(self, path: str) -> bool:
        inside = self._index_inside(path)
        return self.inner.exists(path) if inside is None else inside

    def list(self, path: str) -> Sequence[ListedFile]:
        return self.inner.list(path)

    def mtime_ms(self, path: str) -> int:
        return self.inner.mtime_ms(path)

    def identity(self, path: str) -> str:
        return self.inner.identity(path)

    def original_size(self, path: str) -> int | None:
        key = aiven_key(path)
        if key is None or key.suffix != "log":
            return None
        try:
            manifest = self.manifest(key)
        except KsegError:
            return None
        return None if manifest is None else manifest.chunk_index.original_file_size
