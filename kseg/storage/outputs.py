"""Where kseg may write: never onto what it reads.

Every file kseg writes (``verify-index --report``, ``export -o``, ``rebuild-index --output-dir``) is
checked, before any work, against the inputs of the run.  Paths are compared after resolving
symlinks and ``..`` (:func:`os.path.realpath`): an output that is an input file, or lies inside an
input directory, is refused whatever ``--force`` says -- replacing it would destroy the data being
read (Kafka's segments are never written by a reading tool, as ``kafka-dump-log.sh`` never writes).
URIs are compared as normalised strings (a store has no symlinks).

A path a run writes enters once, as a :class:`Destination` made from the option (:func:`destination`): the
path as given and its store, chosen then by discovery's public call and carried to the checks and the write.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, NamedTuple

from kseg.errors import InputError, UsageError
from kseg.storage import files, location
from kseg.storage.stores.discover import store_of

if TYPE_CHECKING:
    from kseg.storage.context import Store

_local = location.local_path


class Destination(NamedTuple):
    """Where a run writes (``--report``, ``-o/--output``, export's target, ``--output-dir``): the path as
    given and the store holding it, chosen once when the option is read (:func:`destination`)."""

    path: str
    store: Store

    def write_lines(self, lines: list[str], *, replace: bool) -> None:
        """``lines`` (JSON Lines rows, say), each ended by a newline, into the file atomically: its name appears
        only when it is whole (a store's object or a local file)."""
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        files.write_stream(self.path, lambda f: f.write(data), replace=replace, store=self.store)


def destination(path: str) -> Destination:
    """The destination ``path`` names, its store chosen now (under the running command's read context)."""
    return Destination(path, store_of(path))


def _is_uri(path: str) -> bool:
    """Whether ``path`` is on an object store (its store, as discovery chooses it, says)."""
    return store_of(path).remote


def _norm_uri(uri: str) -> str:
    scheme, _, rest = uri.partition("://")
    parts = [p for p in rest.split("/") if p not in ("", ".")]
    return scheme.lower() + "://" + "/".join(parts)


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip("/") + "/")


def refuse_on_inputs(
    output: str, inputs: list[str], option: str, hint: str = "write it somewhere outside the inputs"
) -> None:
    """Raise :class:`UsageError` (exit 2) when ``output`` resolves to an input file or to a path
    under an input directory.  ``option`` names the option in the message (``--report``)."""
    if _is_uri(output):
        target = _norm_uri(output)
        for given in inputs:
            if _is_uri(given) and _inside(target, _norm_uri(given)):
                raise UsageError(
                    f"{option} {output} lies within the input {given}; kseg never writes over what it reads", hint=hint
                )
        return
    target = os.path.realpath(_local(output))
    for given in inputs:
        if _is_uri(given):
            continue
        source = os.path.realpath(_local(given))
        if target == source:
            raise UsageError(f"{option} {output} is the input {given}; kseg never writes over what it reads", hint=hint)
        if _inside(target, source):
            raise UsageError(
                f"{option} {output} lies within the input {given}; kseg never writes over what it reads", hint=hint
            )


def probe_store(directory: str, name: str, option: str, shown: str) -> None:
    """Write and remove an empty object ``directory/name`` on a store before any work, so a bucket that
    does not exist, or a write that is denied, is said at once with the store's own reason (``NoSuchBucket``,
    ``AccessDenied``) -- not after the records were read.  ``shown``: the output as the user gave it."""
    probe = location.join(directory, name)
    try:
        location.write_stream(probe, lambda f: f.write(b""), replace=True)
        location.delete(probe)
    except InputError as exc:
        raise InputError(f"cannot write {option}: {exc.message.removeprefix('cannot write: ')}", path=shown) from None


def check_file_target(output: str, *, force: bool, option: str) -> None:
    """A local output file (renamed into place when whole): its directory must exist; a directory or
    a special file there is refused; an existing file is replaced only with ``force``.  A URI: its store
    is probed (:func:`probe_store`) and an existing object is replaced only with ``force``."""
    if _is_uri(output):
        if not force and location.kind(output) != "missing":
            raise InputError("exists; not replaced (give --force to replace it)", path=output)
        probe_store(location.dirname(output), f".{location.basename(output)}.kseg-probe", option, output)
        return
    path = _local(output)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError(f"cannot write {option}: no such directory", path=parent)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"cannot write {option}: {exc.strerror or exc}", path=path) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(
            f"cannot write {option}: is a directory (give a file path; a directory of part files "
            "is written only with --spark)",
            path=path,
        )
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"cannot write {option}: not a regular file", path=path)
    if not force:
        raise InputError("exists; not replaced (give --force to replace it)", path=path)
