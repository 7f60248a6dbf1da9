"""What a store is: list, stat, open (read-only), exists -- for the paths under one input root.

A store is chosen once per input root (:func:`kseg.storage.stores.discover.store_for`) and held by the
partitions and segments found under it (:mod:`kseg.storage.partition`), as Kafka's ``LogSegment``
holds its ``FileRecords``: nothing downstream asks a path string where its bytes live.  Every store is
made with the command's :class:`~kseg.storage.context.ReadContext` and hands it on (``context``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Protocol, Union

from kseg.errors import KsegError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from typing_extensions import Self

    from kseg.storage.context import ReadContext
    from kseg.storage.location import Entry, Names


class ReadFile(Protocol):
    """A file a store opened, read-only: a local one (``io.FileIO``, ``io.BufferedReader``), an object read by
    ranged reads (``location.RemoteFile``) or a segment file of Aiven's layout read through its manifest
    (``tiered.TieredLogFile``, ``tiered.IndexBytes``).  Its readers hold it, not the store: reading it is
    the segment's own work, never a call back to the store that opened it."""

    def read(self, size: int = -1, /) -> bytes: ...

    def readinto(self, buffer: Any, /) -> int | None: ...

    def seek(self, offset: int, whence: int = 0, /) -> int: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: Any) -> Any: ...


class SizedFile(ReadFile, Protocol):
    """A file a store opened whose size was fixed when it was opened (every one but a local file's)."""

    size: int


#: What :func:`open_together` gives: each file asked for (opened, or the error opening it raised; None where
#: none was asked for), and the identity asked for (or its error; None).
Opened = tuple[list[Union[ReadFile, KsegError, None]], Union[str, KsegError, None]]
#: How :func:`open_together` opens one file: the buffering for :meth:`Store.open`, or a gate that opens it
#: through the store (``gate(path, store)``: ``kseg.storage.records.open_for_read`` for a ``.log``).
How = Union[int, Callable[[str, "Store"], ReadFile]]


class Stat(NamedTuple):
    """What a store knows of a path: ``kind`` ``'file'`` (a regular file), ``'dir'``, ``'other'`` (a FIFO,
    device, socket, dangling link) or ``'missing'``."""

    kind: str


class Store(Protocol):
    """The paths under one input root, read-only."""

    context: ReadContext

    @property
    def remote(self) -> bool:
        """Whether its bytes come over the network (an object store): what a caller holding a partition or
        segment asks instead of its path (a local write, a mount hint, a directory to make)."""

    @property
    def names(self) -> Names:
        """The grammar of its paths (join, dirname, how Java shows one, the one form to compare): a value of
        :mod:`kseg.storage.location`, asked without coming back to the store."""

    def open(self, path: str, buffering: int = -1) -> ReadFile:
        """``path`` opened for reading (a regular file only; faults are one :class:`InputError`)."""

    def stat(self, path: str) -> Stat:
        """What is at ``path``."""

    def exists(self, path: str) -> bool:
        """Whether anything is at ``path``."""

    def list(self, path: str) -> list[Entry]:
        """The files directly under the directory ``path``, sorted (:class:`InputError` when it cannot be
        listed)."""

    def mtime_ms(self, path: str) -> int:
        """The modification time of ``path`` in epoch milliseconds."""

    def identity(self, path: str) -> str:
        """What names this version of the file at ``path``, for ``--resume`` (:class:`InputError` with the
        store's reason when it cannot be asked)."""

    def original_size(self, path: str) -> int | None:
        """The size of the segment file ``path`` as Kafka wrote it when the store keeps it otherwise (a
        tiered ``.log``: its manifest's), else None."""


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
