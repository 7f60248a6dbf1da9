"""``export --spark``'s output, committed once: the executors write under a staging prefix, the driver
moves the files into place and writes ``_SUCCESS`` last.

    OUTPUT/_temporary/<run>/part-....parquet     (the tasks write here)
    OUTPUT/part-....parquet + OUTPUT/_SUCCESS    (the driver's commit, when every task succeeded)

Readers skip names starting with ``_`` (Spark's file index, pyarrow datasets, pandas) and a
``OUTPUT/*.parquet`` glob does not look below the top, so what a failed or killed run leaves under
``_temporary`` is never taken as data; a failure removes it, the next run over the same output removes
what a killed one left.  With ``--force`` the previous export's files are removed at the commit, not
before the job: a failed re-run leaves the previous export whole.

The output is a :class:`~kseg.storage.outputs.Destination` made once by the driver (its store chosen then);
the staging prefix under it is on the same store.  Before any work (:func:`prepare`) the output is checked:
a file, or a directory holding anything but ``_temporary`` without ``--force``, is refused; on a store, a
probe object is written and removed under the staging prefix, so a missing bucket or a denied write is said
at once with the store's own reason (``NoSuchBucket``, ``AccessDenied``), not after the job.
"""

from __future__ import annotations

import os
import secrets
import shutil
from typing import TYPE_CHECKING

from kseg.errors import InputError
from kseg.storage import files, location
from kseg.storage.outputs import Destination, probe_store

if TYPE_CHECKING:
    from kseg.storage.context import Store

STAGING = "_temporary"


def staging_dir(output: Destination) -> Destination:
    """A fresh staging prefix of this run under ``output`` (on its store)."""
    return output._replace(path=location.join(location.join(output.path, STAGING), secrets.token_hex(8)))


def prepare(destination: Destination, staging: str, replace: bool) -> bool:
    """Check the output before any work (module docstring); returns whether this run made the directory
    (a local one), so a failure can remove it again."""
    output, store = destination
    if store.remote:
        _check_store(output, staging, replace)
        return False
    local = location.local_path(output)
    if files.isfile(local, store=store):
        raise InputError("exists, and is a file: with --spark the output is a directory of part files", path=output)
    made = not os.path.lexists(local)
    if not made:
        try:
            left = [name for name in os.listdir(local) if name != STAGING]
        except OSError as exc:
            raise InputError(f"cannot list the output: {exc.strerror or exc}", path=output) from None
        if left and not replace:
            raise InputError("exists; not replaced (give --force to replace it)", path=output)
        clear_stale(destination)
    try:
        os.makedirs(location.local_path(staging))
        if not os.access(location.local_path(staging), os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise InputError(f"cannot write the output: {exc.strerror or exc}", path=output) from None
    return made


def _check_store(output: str, staging: str, replace: bool) -> None:
    root = output.rstrip("/")
    try:
        entries = location.list_tree(output)
    except InputError as exc:
        raise InputError(f"cannot list the output: {exc.message}", path=output) from None
    left = [e for e in entries if not e.path[len(root) + 1 :].startswith(STAGING + "/")]
    if left and not replace:
        raise InputError("exists; not replaced (give --force to replace it)", path=output)
    for entry in entries:
        if entry not in left:  # what killed runs left under _temporary
            location.delete(entry.path)
    probe_store(staging, "_probe", "the output", output)


def commit(destination: Destination, staging: str, written: list[str], replace: bool) -> list[str]:
    """Move the staged files into the output (the previous export's removed first with ``replace``),
    then ``_SUCCESS`` last; returns the files' final names."""
    output, store = destination
    if replace:
        clear_previous(destination)
    final = []
    root = staging.rstrip("/") + "/"
    for path in written:
        rel = path[len(root) :] if path.startswith(root) else location.basename(path)
        target = output
        for part in rel.split("/"):  # a hive layout's topic=/partition= directories kept
            target = location.join(target, part)
        _move(path, target, store)
        final.append(target)
    discard(destination, staging, made=False)
    files.write_stream(location.join(output, "_SUCCESS"), lambda f: None, replace=True, store=store)
    return final


def _move(source: str, target: str, store: Store) -> None:
    if store.remote:
        location.move(source, target)
        return
    try:
        os.makedirs(os.path.dirname(location.local_path(target)), exist_ok=True)
        os.replace(location.local_path(source), location.local_path(target))
    except OSError as exc:
        raise InputError(f"cannot move into place: {exc.strerror or exc}", path=target) from None


def discard(destination: Destination, staging: str, made: bool) -> None:
    """Remove this run's staging prefix, ``_temporary`` when nothing else is in it, and the output
    directory when this run made it and it is empty: a failure leaves what was there before.  Best
    effort: what cannot be removed stays under ``_temporary``, which no reader takes as data."""
    output = destination.path
    top = location.join(output, STAGING)
    _remove_tree(destination, staging)
    if destination.store.remote:
        return
    for path in [top] + ([output] if made else []):
        try:
            os.rmdir(location.local_path(path))
        except OSError:
            pass


def clear_stale(output: Destination) -> None:
    """What killed runs left under ``OUTPUT/_temporary`` (never data: module docstring), removed."""
    _remove_tree(output, location.join(output.path, STAGING))


def _remove_tree(output: Destination, prefix: str) -> None:
    """Every file under ``prefix`` (inside ``output``) removed, best effort: objects one by one on a store,
    the directory tree on local disk."""
    if output.store.remote:
        try:
            for entry in location.list_tree(prefix):
                location.delete(entry.path)
        except InputError:
            pass
        return
    shutil.rmtree(location.local_path(prefix), ignore_errors=True)


def is_part_file(name: str) -> bool:
    """A file a ``--spark`` export writes (this layout's or the one-file-per-split layout's before it)."""
    return name.startswith("part-") and name.endswith(".parquet")


def clear_previous(destination: Destination) -> None:
    """``--force``: the part files and ``_SUCCESS`` of an earlier export to ``output`` removed (at its top,
    one directory down, where exports before coalescing wrote them, and in ``topic=T/partition=P/``);
    nothing else is touched."""
    import os

    from kseg.errors import InputError
    from kseg.storage import files, location

    output, store = destination
    if store.remote:
        root = output.rstrip("/")
        for entry in location.list_tree(output):
            rel = entry.path[len(root) + 1 :].split("/")
            hive = len(rel) == 3 and rel[0].startswith("topic=") and rel[1].startswith("partition=")
            if ((len(rel) <= 2 or hive) and is_part_file(rel[-1])) or rel == ["_SUCCESS"]:
                location.delete(entry.path)
        return
    local = location.local_path(output)
    if files.isfile(local, store=store):
        raise InputError("exists, and is a file: with --spark the output is a directory of part files", path=output)
    try:
        for name in os.listdir(local) if os.path.isdir(local) else ():
            path = os.path.join(local, name)
            if name == "_SUCCESS" or (is_part_file(name) and os.path.isfile(path)):
                os.unlink(path)
            elif os.path.isdir(path):
                for inner in os.listdir(path):
                    if is_part_file(inner):
                        os.unlink(os.path.join(path, inner))
                    elif name.startswith("topic=") and inner.startswith("partition="):  # a hive layout's
                        deeper = os.path.join(path, inner)
                        for leaf in os.listdir(deeper) if os.path.isdir(deeper) else ():
                            if is_part_file(leaf):
                                os.unlink(os.path.join(deeper, leaf))
    except OSError as exc:
        raise InputError(f"cannot replace the output: {exc.strerror or exc}", path=output) from None
