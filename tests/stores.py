"""The store of local files as discovery chooses it, for the partitions, segments and readers a test makes by
hand (the tool's own are handed theirs by discovery): :func:`local`."""

from __future__ import annotations

import os

from kseg.storage.context import Store
from kseg.storage.stores.discover import store_of


def local() -> Store:
    """The store of a local path (:func:`kseg.storage.stores.discover.store_of`: under the read context set
    around the test's reads, else a plain one)."""
    return store_of(os.curdir)
