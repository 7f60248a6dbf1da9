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
from dataclasses import dataclass, field, replace
from typing import Any, Callable, NamedTuple, Protocol


class Watcher(Protocol):
    """Told of each listing as it goes (:mod:`kseg.storage.watch`); every method must be thread-safe and quick."""

    def started(self, prefix: str) -> None:
        """A listing of ``prefix`` (one level, or everything under it) started."""

    def finished(self, prefix: str, keys: int, partitions: int, noun: str = "key") -> None:
        """The listing of ``prefix`` ended: ``keys`` entries listed, each a ``noun`` (``key`` on an object
        store, ``file`` on a file system: what the listing says it listed), ``partitions`` partition
        directories (holding segment files) among them."""


class RsmKeys(NamedTuple):
    """The private keys of ``--rsm-key``: key pair id -> (key file, its PEM bytes), read once."""

    pairs: tuple[tuple[str, str, bytes], ...] = ()

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


@dataclass(frozen=True)
class ReadContext:
    """The read settings of one command (see the module's text); ``ReadContext()`` reads plainly."""

    max_rate: float | None = None  # bytes a second, this process's share
    drop_cache: bool = False
    keys: RsmKeys = RsmKeys()
    observers: Observers = field(default_factory=Observers, compare=False, repr=False)
    pacing: list[Any] = field(init=False, compare=False, repr=False)  # (kseg.storage.read_policy.policy_of)
    stores: dict[bool, Any] = field(init=False, compare=False, repr=False)  # (kseg.storage.stores)

    def __post_init__(self) -> None:
        if self.max_rate is not None and not self.max_rate > 0:
            raise ValueError(f"max_rate {self.max_rate}: give bytes a second, more than 0")
        object.__setattr__(self, "pacing", [])
        #: the stores made under this context, by kind (kseg.storage.stores.discover): their manifests and
        #: unwrapped keys are read once per command, and never seen by another context
        object.__setattr__(self, "stores", {})

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (to a Spark task, a worker process) as its settings: the observers stay here, the
        pacing starts afresh there."""
        return (ReadContext, (self.max_rate, self.drop_cache, self.keys))

    def with_keys(self, keys: RsmKeys) -> "ReadContext":
        """This context with the private keys of ``--rsm-key`` (the same observers and pacing)."""
        keyed = replace(self, keys=keys, observers=self.observers)
        object.__setattr__(keyed, "pacing", self.pacing)  # one pacing bucket for the command's reads
        return keyed

    @property
    def meter(self) -> Callable[[str, int, int], object] | None:
        return self.observers.meter

    @property
    def watcher(self) -> Watcher | None:
        return self.observers.watcher


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
