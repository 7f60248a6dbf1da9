"""One read context: what every read of one command is given, made once and passed down.

A :class:`ReadContext` holds the read settings of a command: ``--max-rate`` (bytes a second, this
process's share) and ``--drop-cache`` (:mod:`kseg.storage.read_policy`), the private keys of
``--rsm-key`` (:class:`RsmKeys`: the PEM bytes, read once where the command starts,
:func:`kseg.storage.private_keys.read_keys`) and the observers a terminal follows (:class:`Observers`:
the progress bar's byte meter, the listing :class:`Watcher` of :mod:`kseg.storage.watch`).  It imports
no other storage module: every store, noun and reader below may hold it.  It is a frozen value: stores are made with it
(:mod:`kseg.storage.stores`), partitions and segments hold their store, and a Spark task is handed
the same value in its pickle (the observers stay behind: an executor has no terminal).  Two
contexts in one process -- two DataFrame loads, two ``verify_all`` calls, a test beside a command
-- share nothing: no setting is installed in a module.

The pacing of ``--max-rate`` is a token bucket per context and process
(:func:`kseg.storage.read_policy.policy_of`): reads
under one context average at most its rate; a forked ``--jobs`` worker keeps its own copy of the
bucket (:func:`kseg.storage.read_policy.split` gives each of N processes 1/N of the rate).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from kseg.valueclass import FrozenValue, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from typing_extensions import Self


class Watcher(Protocol):
    """Told of each listing as it goes (:mod:`kseg.storage.watch`); every method must be thread-safe and quick."""

    def started(self, prefix: str) -> None:
        """A listing of ``prefix`` (one level, or everything under it) started."""

    def finished(self, prefix: str, keys: int, partitions: int, noun: str = "key") -> None:
        """The listing of ``prefix`` ended: ``keys`` entries listed, each a ``noun`` (``key`` on an object
        store, ``file`` on a file system: what the listing says it listed), ``partitions`` partition
        directories (holding segment files) among them."""


class RsmKeys(FrozenValue):
    """The private keys of ``--rsm-key``: key pair id -> (key file, its PEM bytes), read once."""

    _fields = ("pairs",)
    pairs: tuple[tuple[str, str, bytes], ...]

    def __init__(self, pairs: tuple[tuple[str, str, bytes], ...] = ()) -> None:
        self._set(pairs=pairs)

    def get(self, pair: str) -> tuple[str, bytes] | None:
        """``(key file, PEM bytes)`` of key pair ``pair``, or None when no ``--rsm-key`` names it."""
        for name, key_file, pem in self.pairs:
            if name == pair:
                return key_file, pem
        return None

    def files(self) -> dict[str, str]:
        """key pair id -> key file, as given."""
        return {pair: key_file for pair, key_file, _ in self.pairs}


class Observers:
    """Who follows the reads of one command in the process that runs it: ``meter(path, position, n)``
    after each window read (a progress bar's byte count) and the listing ``watcher``; both None until
    the command's terminal sets them.  Not pickled with its context: a task on another process or host
    reports nothing to this terminal."""

    __slots__ = ("meter", "watcher")

    def __init__(self) -> None:
        self.meter: Callable[[str, int, int], object] | None = None
        self.watcher: Watcher | None = None


class ReadContext(FrozenValue):
    """The read settings of one command (see the module's text); ``ReadContext()`` reads plainly."""

    _fields = ("max_rate", "drop_cache", "keys")
    max_rate: float | None  # bytes a second, this process's share
    drop_cache: bool
    keys: RsmKeys
    observers: Observers
    pacing: list[Any]  # (kseg.storage.read_policy.policy_of)
    #: the stores made under this context, by kind (kseg.storage.stores.discover): their manifests and
    #: unwrapped keys are read once per command, and never seen by another context
    stores: dict[bool, Any]

    def __init__(
        self,
        max_rate: float | None = None,
        drop_cache: bool = False,
        keys: RsmKeys | None = None,
        observers: Observers | None = None,
    ) -> None:
        if max_rate is not None and not max_rate > 0:
            raise ValueError(f"max_rate {max_rate}: give bytes a second, more than 0")
        keys, observers = RsmKeys() if keys is None else keys, Observers() if observers is None else observers
        self._set(max_rate=max_rate, drop_cache=drop_cache, keys=keys, observers=observers, pacing=[], stores={})

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (to a Spark task, a worker process) as its settings: the observers stay here, the
        pacing starts afresh there."""
        return (ReadContext, (self.max_rate, self.drop_cache, self.keys))

    def with_keys(self, keys: RsmKeys) -> "ReadContext":
        """This context with the private keys of ``--rsm-key`` (the same observers and pacing)."""
        return self.replace(keys=keys, stores={})  # one pacing bucket for the command's reads, stores anew

    @property
    def paced(self) -> bool:
        """Whether reads go through a read policy (``--max-rate`` or ``--drop-cache``: :mod:`kseg.storage.read_policy`,
        loaded only then)."""
        return self.max_rate is not None or self.drop_cache

    @property
    def meter(self) -> Callable[[str, int, int], object] | None:
        return self.observers.meter

    @property
    def watcher(self) -> Watcher | None:
        return self.observers.watcher


# -- what a store is: the protocol every store, noun and reader names -------------------------------------
# (here, beside the context every store is made with: one leaf names them all; the stores are
# :mod:`kseg.storage.stores`, which choose one per input root)


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


class ListedFile(Protocol):
    """One file a store's listing found (``location.Entry``): its path or URI, and its size in bytes (None: not
    listed)."""

    @property
    def path(self) -> str: ...

    @property
    def size(self) -> int | None: ...


class Names(Protocol):
    """The grammar of one store's paths (:attr:`Store.names`; ``location.LocalNames``, ``location.ObjectNames``)."""

    def join(self, base: str, name: str) -> str:
        """``base/name``."""

    def dirname(self, path: str) -> str:
        """The directory holding ``path`` in the form ``path`` was given (a bare local name's: ``''``; an
        object's never above its bucket)."""

    def display(self, path: str) -> str:
        """``path`` as Java's ``File.toString`` shows a local one (duplicate and trailing slashes folded); a
        URI as given."""

    def absolute(self, path: str) -> str:
        """Java's ``getAbsolutePath`` of a local path (:meth:`display`, the working directory before it,
        ``..`` left as is); a URI as given."""

    def canonical(self, path: str) -> str:
        """``path`` in the one form two spellings of it share, to compare (a local path absolute and
        normalised; an object store's name without a trailing slash)."""

    def directory(self, path: str) -> str:
        """``path`` as a directory's name in the store's listings (an object store's without a trailing
        slash; a local path as given)."""


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

    def list(self, path: str) -> Sequence[ListedFile]:
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

    def __hash__(self) -> int:
        """A store is hashed by identity (one per kind and read context): a cache of what was read through it
        may be keyed by it."""


# -- the bridge for reads not yet handed their store -----------------------------------------------------
#: The read context of the command running in this thread of execution, for a read whose caller has no
#: store to give (a path string): set for the duration of a command (:func:`reading`) or of a Spark task
#: (:class:`Carried`), never installed for good.  Partitions and segments found by discovery carry their
#: store and do not consult it.
_RUNNING: ContextVar[ReadContext | None] = ContextVar("kseg_read_context", default=None)


@contextmanager
def reading(context: ReadContext) -> Iterator[ReadContext]:
    """Inside the ``with``, a read given no store reads under ``context``; the one before is put back."""
    token = _RUNNING.set(context)
    try:
        yield context
    finally:
        _RUNNING.reset(token)


def running() -> ReadContext:
    """The context set by :func:`reading` around this read, else a plain one (no pacing, no keys)."""
    return _RUNNING.get() or ReadContext()


class Carried:
    """A task function carrying the read context of the command that made it (pickled with it: the
    ``--rsm-key`` PEM bytes travel inside the task, as its other arguments do); it runs under it."""

    def __init__(self, fn: Callable[..., Any], context: ReadContext | None = None) -> None:
        self.fn, self.context = fn, running() if context is None else context

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with reading(self.context):
            result = self.fn(*args, **kwargs)
        if isinstance(result, Iterator):  # a generator's body runs as it is iterated: under the context too
            return under(self.context, result)
        return result


def under(context: ReadContext, items: Iterator[Any]) -> Iterator[Any]:
    """``items``, each one made under ``context`` (:func:`reading` around each step, never across a
    ``yield``: the consumer between two items reads under its own)."""
    while True:
        with reading(context):
            try:
                item = next(items)
            except StopIteration:
                return
        yield item
