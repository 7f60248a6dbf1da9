"""Paths that travel: what the driver is given, in a form every executor reads the same way.

An executor does not run in the driver's working directory: on a standalone
cluster it runs in the worker's ``work/app-*/N/`` directory, on YARN in a
container's.  So every local input and output path is made absolute on the
driver before it is planned or shipped (:func:`absolute`), and what the
executors wrote to a local path is looked for from the driver before any
success is reported (:func:`not_here`): a file written on an executor's own
disk is not "written to OUTPUT" for whoever reads OUTPUT on the driver.
URIs (``s3://``, ``hdfs://`` ...) name the same object everywhere and pass as
they are.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kseg.storage import location
from kseg.storage.stores.discover import store_of

if TYPE_CHECKING:
    from kseg.storage.context import Store
    from kseg.storage.outputs import Destination

MOUNT_HINT = "is the path on a mount every executor sees?"


def absolute(path: str) -> str:
    """A local path (or ``file://`` URI) made absolute against the driver's working directory;
    any other URI unchanged."""
    return _absolute(path, store_of(path))


def _absolute(path: str, store: Store) -> str:
    return path if store.remote else store.names.canonical(path)


def absolute_destination(output: Destination) -> Destination:
    """An output (its store chosen once when it was given) made :func:`absolute` on that store."""
    return output._replace(path=_absolute(*output))


def absolute_all(paths: Iterable[str]) -> list[str]:
    """:func:`absolute` of each path, in order."""
    return [absolute(p) for p in paths]


def travel(paths: Iterable[str], output: str | None) -> tuple[list[str], str | None]:
    """The inputs and the output (None: none given) of a command, each :func:`absolute`."""
    return absolute_all(paths), None if output is None else absolute(output)


def local_roots(paths: Iterable[str]) -> list[str]:
    """The local paths among ``paths`` (absolute): what an executor must see for the job to read them."""
    stores = ((p, store_of(p)) for p in paths)  # each path's store chosen once
    return [_absolute(p, store) for p, store in stores if not store.remote]


def not_here(written: Iterable[str], store: Store) -> list[str]:
    """The local files among ``written`` (paths the executors say they wrote on the output's ``store``) that
    this machine does not see: an output on a disk of the executors' own, not on a shared mount.  A store's
    objects are not checked (the store is the same for everyone and answered each write)."""
    return [] if store.remote else [p for p in written if not os.path.exists(location.local_path(p))]


def missing_line(missing: list[str], total: int, output: str, what: str) -> str:
    """The error for :func:`not_here`'s findings: how many, one example, and what to do."""
    return (
        f"{len(missing)} of the {total} {what} the executors wrote are not in {output} as this machine sees it "
        f"(e.g. {missing[0]}): the executors wrote to their own disks; give a path on a mount every executor "
        "sees, or a URI (s3://...)"
    )
