"""Who is told how a listing goes: an observer the caller sets for the duration of a discovery.

Listing a fleet's URI prefix (:mod:`kseg.storage.prefixes`: delimiter
listings, then one recursive listing per log directory, a few at once) or a
local log root of 10^5 partition directories takes minutes before any
segment is read.  The storage layer knows nothing of terminals: it tells the
:class:`Watcher` of the read context (``ReadContext.watcher``, none by default) that a listing of
a prefix started, that it finished with so many keys and partition
directories, and, on local disk, that a partition directory was listed
(the watcher: a :class:`~kseg.storage.context.Watcher`).  The calls come from
the listing threads: a watcher counts under its own lock and draws from one
place of its own (``kseg.render.progress.ListingStatus``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kseg.storage.context import Watcher

__all__ = ["Watcher", "Told", "listing"]  # Watcher: what a read context's observers hold


class Told:
    """What one listing tells the watcher when it ends: the keys it listed and the partition directories
    (holding segment files) among them; 0 and 0 until the lister sets them (a listing that failed); and
    what it listed: ``key`` (an object store's, the default) or ``file`` (set by a file system's lister)."""

    __slots__ = ("keys", "partitions", "noun")

    def __init__(self) -> None:
        self.keys = self.partitions = 0
        self.noun = "key"


@contextmanager
def listing(prefix: str, watcher: Watcher | None) -> Iterator[Told]:
    """Around one listing of ``prefix``: ``watcher`` (the read context's, if any) is told that it
    started, and when it ends -- by an error too -- what the lister set on the :class:`Told` given."""
    told = Told()
    if watcher is not None:
        watcher.started(prefix)
    try:
        yield told
    finally:
        if watcher is not None:
            watcher.finished(prefix, told.keys, told.partitions, told.noun)
