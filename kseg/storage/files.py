"""Files through their store, and the readers of index and snapshot files (``LogFileUtils``).

The names of a log directory's files and what a name says are :mod:`kseg.storage.names` (shown here too,
for the commands that read both).  Each function here is handed the store holding the path: a noun's (a
partition's, a segment's), or the one discovery chose for a path given alone
(:func:`kseg.storage.stores.discover.store_of`); none chooses one.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Callable, cast

from kseg.errors import InputError
from kseg.storage import location
from kseg.storage.context import ReadFile
from kseg.storage.names import (
    BOOTSTRAP_CHECKPOINT,
    CHECKPOINT,
    INDEX,
    LEADER_EPOCH_CHECKPOINT,
    LOG,
    SEGMENT_SUFFIXES,
    SNAPSHOT,
    TIME_INDEX,
    TRANSITION_DIR,
    TXN_INDEX,
    base_offset_from_name,
    holds_segment,
    parse_checkpoint_name,
    stem,
    suffix,
    tiered_segment_id,
)

if TYPE_CHECKING:
    from kseg.storage.context import SizedFile, Store

__all__ = [  # a file :func:`open_readonly` opened (kseg.storage.context), and the names' rules
    "ReadFile",
    "LOG",
    "INDEX",
    "TIME_INDEX",
    "TXN_INDEX",
    "SNAPSHOT",
    "CHECKPOINT",
    "BOOTSTRAP_CHECKPOINT",
    "SEGMENT_SUFFIXES",
    "TRANSITION_DIR",
    "LEADER_EPOCH_CHECKPOINT",
    "suffix",
    "holds_segment",
    "stem",
    "tiered_segment_id",
    "base_offset_from_name",
    "parse_checkpoint_name",
]


MAX_INDEX_FILE = 1 << 30  # Kafka's segment.index.bytes is an int; 1 GiB is far beyond any real index


def sibling(path: str, new_suffix: str, store: Store) -> str:
    """The file of the same stem with another suffix, in the same directory."""
    names = store.names
    return names.join(names.dirname(names.absolute(path)), stem(path) + new_suffix)


def display(path: str, store: Store) -> str:
    """The path as Java's ``File.toString`` shows it (duplicate and trailing slashes folded), a URI as given
    (:meth:`Names.display <kseg.storage.context.Names.display>`)."""
    return store.names.display(path) if path else path


def absolute(path: str, store: Store) -> str:
    """Java's ``getAbsolutePath``: cwd prefixed, ``..`` left as is (a URI as given)."""
    return store.names.absolute(path)


def open_readonly(path: str, buffering: int = -1, *, store: Store) -> ReadFile:
    """Open ``path`` for reading through its store (:mod:`kseg.storage.stores`); the usual faults become
    one :class:`InputError`.  Only regular files are opened; a URI's file reads by ranged requests; a
    segment file of Aiven's tiered layout reads through its manifest."""
    return store.open(path, buffering)


def exists(path: str, store: Store) -> bool:
    """Whether anything is at ``path`` (an index inside a tiered segment's ``.indexes`` object too)."""
    return store.exists(path)


def isdir(path: str, store: Store) -> bool:
    """``os.path.isdir`` through the store (a prefix holding objects is a directory)."""
    return store.stat(path).kind == "dir"


def isfile(path: str, store: Store) -> bool:
    """``os.path.isfile`` through the store."""
    return store.stat(path).kind == "file"


def parent(path: str, store: Store) -> str:
    """The directory holding ``path``: absolute for a local path (``file://`` read as one); for a URI,
    its parent prefix."""
    names = store.names
    return names.dirname(names.canonical(path))


def directory_of(path: str, store: Store) -> str:
    """The directory holding ``path`` in the form ``path`` was given (``.`` for a bare file name)."""
    return store.names.dirname(path.rstrip("/")) or os.curdir


def identity(path: str, store: Store) -> str:
    """What names this version of a file, for ``--resume``: ``size=<n> mtime_ns=<t> ctime_ns=<t>`` of a local
    file, a store object's ETag (:meth:`Store.identity`); raises :class:`InputError` with the OS's reason."""
    return store.identity(path)


def mtime_ms(path: str, store: Store) -> int:
    """The file's modification time in epoch milliseconds (:class:`InputError` when it cannot be read)."""
    return store.mtime_ms(path)


def write_stream(path: str, produce: Callable[[location.OutputStream], object], *, replace: bool, store: Store) -> None:
    """Write a new file made piece by piece by ``produce(file)``: on local disk atomically (the name
    appears only when it is whole), as one object on a store; an existing file is an error unless
    ``replace``."""
    if store.remote:
        location.write_stream(path, produce, replace=replace)
        return
    from kseg.storage.atomic import AtomicStream

    local = location.local_path(path)
    if not replace and os.path.lexists(local):
        raise InputError("exists; not replaced (give --force to replace it)", path=path)
    stream = AtomicStream(local)
    try:
        produce(stream)
    except BaseException:
        stream.discard()
        raise
    stream.commit()


def size_of(f: ReadFile) -> int:
    """The size of a file opened by :func:`open_readonly` (fixed when it was opened, for a remote file)."""
    if isinstance(f, (io.FileIO, io.BufferedReader)):
        return os.fstat(f.fileno()).st_size
    return cast("SizedFile", f).size  # a ranged or a tiered file: its size taken when it was opened


def read_small_file(path: str, limit: int = MAX_INDEX_FILE, *, store: Store) -> bytes:
    """Read an index or snapshot file whole, refusing anything over ``limit`` bytes."""
    with open_readonly(path, store=store) as f:
        try:
            size = size_of(f)
            if size > limit:
                raise InputError(f"file of {size} bytes is larger than any index Kafka writes ({limit})", path=path)
            return f.read(size)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=path) from None


#: Index files up to this size are read whole (Kafka preallocates 10 MiB); larger ones are read in windows.
WHOLE_INDEX = 16 << 20


class IndexFile:
    """An index file read on demand (a :class:`kseg.format.indexes.IndexSource`): ``read(start, stop)``
    reads those bytes (the view keeps a window of them); the size is fixed when it is opened and a file
    that shrinks under the reader is an :class:`InputError`.  The file stays open until :meth:`close`
    or until the object is dropped."""

    __slots__ = ("path", "length", "_f")

    def __init__(self, path: str, f: ReadFile, length: int) -> None:
        self.path, self._f, self.length = path, f, length

    def read(self, start: int, stop: int) -> bytes:
        try:
            self._f.seek(start)
            data = self._f.read(stop - start)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=self.path, position=start) from None
        if len(data) < stop - start:
            raise InputError(
                f"file shrank while being read: expected {stop - start} bytes, found {len(data)}",
                path=self.path,
                position=start + len(data),
            )
        return data

    def close(self) -> None:
        self._f.close()


def open_index(path: str, limit: int = MAX_INDEX_FILE, *, store: Store) -> bytes | IndexFile:
    """An index file for :class:`kseg.format.indexes.IndexView`: its bytes when it is at most
    :data:`WHOLE_INDEX` (one read, no file left open), else an :class:`IndexFile` read in windows;
    anything over ``limit`` bytes is refused, as by :func:`read_small_file`."""
    return index_from(path, open_readonly(path, store=store), limit)


def index_from(path: str, f: ReadFile, limit: int = MAX_INDEX_FILE) -> bytes | IndexFile:
    """:func:`open_index` of the index file ``path`` already opened as ``f`` (owned from here: closed once read,
    or by the :class:`IndexFile` read in windows)."""
    opened: ReadFile | None = f  # (None once an IndexFile owns it)
    try:
        size = size_of(f)
        if size > limit:
            raise InputError(f"file of {size} bytes is larger than any index Kafka writes ({limit})", path=path)
        if size > WHOLE_INDEX:
            index, opened = IndexFile(path, f, size), None
            return index
        data = f.read(size)
        if len(data) < size:
            raise InputError(
                f"file shrank while being read: expected {size} bytes, found {len(data)}", path=path, position=len(data)
            )
        return data
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=path) from None
    finally:
        if opened is not None:
            opened.close()
