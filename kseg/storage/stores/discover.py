"""Choosing a store for an input root: the one place a path string is asked where its bytes live."""

from __future__ import annotations

from kseg.storage import location
from kseg.storage.context import ReadContext
from kseg.storage.stores.aiven import AivenStore
from kseg.storage.stores.base import Store
from kseg.storage.stores.local import LocalStore


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
