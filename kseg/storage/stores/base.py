"""One call to a store for a segment's files: :func:`open_together` (what a store is -- :class:`Store`, the
files it opens, what it knows of a path -- is :mod:`kseg.storage.context`'s, the leaf every store, noun
and reader names).

A store is chosen once per input root (:func:`kseg.storage.stores.discover.store_for`) and held by the
partitions and segments found under it (:mod:`kseg.storage.partition`), as Kafka's ``LogSegment``
holds its ``FileRecords``: nothing downstream asks a path string where its bytes live.  Every store is
made with the command's :class:`~kseg.storage.context.ReadContext` and hands it on (``context``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Union

from kseg.errors import KsegError
from kseg.storage.context import ReadFile, Store

if TYPE_CHECKING:
    from collections.abc import Sequence


#: What :func:`open_together` gives: each file asked for (opened, or the error opening it raised; None where
#: none was asked for), and the identity asked for (or its error; None).
Opened = tuple[list[Union[ReadFile, KsegError, None]], Union[str, KsegError, None]]
#: How :func:`open_together` opens one file: the buffering for :meth:`Store.open`, or a gate that opens it
#: through the store (``gate(path, store)``: ``kseg.storage.records.open_for_read`` for a ``.log``).
How = Union[int, Callable[[str, "Store"], ReadFile]]


def open_together(store: Store, wanted: Sequence[tuple[str, How] | None], identity_of: str | None) -> Opened:
    """Each ``(path, how)`` of ``wanted`` opened by ``store`` (:meth:`Store.open` with ``how`` its buffering, or
    through the gate ``how``), and then the :meth:`Store.identity` of ``identity_of``, in one call (a
    segment's files, as Kafka's ``LogSegment.open`` opens them together): a file that cannot be opened is
    its error, returned in its place, not raised."""
    opened: list[ReadFile | KsegError | None] = []
    for one in wanted:
        try:
            if one is None:
                opened.append(None)
            else:
                path, how = one
                opened.append(store.open(path, how) if isinstance(how, int) else how(path, store))
        except KsegError as exc:
            opened.append(exc)
    try:
        identity: str | KsegError | None = None if identity_of is None else store.identity(identity_of)
    except KsegError as exc:
        identity = exc
    return opened, identity
