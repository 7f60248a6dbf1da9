"""Partition directories and their segments (``LocalLog``, ``LogFileUtils``): the nouns discovery hands back.

A partition directory (``orders-3/``) holds segments ``<base>.log`` with
``.index``, ``.timeindex`` and ``.txnindex``, producer ``<offset>.snapshot``
files, ``leader-epoch-checkpoint`` and ``partition.metadata``.  A log root
holds many partition directories.  Files ending ``.deleted``, ``.cleaned`` or
``.swap`` are in transition and skipped with a note.  A directory of Kafka's
``LocalTieredStorage`` holds the same files named ``<base offset>-<segment id>.log``
& co. (:mod:`kseg.storage.names`): read the same way.

:func:`kseg.storage.stores.find.discover` turns command-line paths (log roots,
partition directories or single segment files) into :class:`Partition` objects
listing their segments in base-offset order, each holding the store it was
listed from (:func:`scan_partition`, :func:`partition_from_listing` here).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

from kseg.errors import InputError, KsegError
from kseg.storage import location, names, watch
from kseg.storage.context import ListedFile, ReadFile, Store
from kseg.storage.names import LEADER_EPOCHS_FILE as LEADER_EPOCHS
from kseg.storage.names import SEGMENT_SUFFIXES
from kseg.storage.stores.base import How, open_together
from kseg.storage.tiered_names import is_indexes_object
from kseg.valueclass import Value

TRANSITION_FILE_SUFFIXES = (".deleted", ".cleaned", ".swap")
_SLOT = MappingProxyType(
    {names.LOG: "log", names.INDEX: "index", names.TIME_INDEX: "timeindex", names.TXN_INDEX: "txnindex"}
)
T = TypeVar("T")
LAYOUT_HINT = (
    "give a log root holding partition directories (data/orders-0/), a partition directory "
    "holding segment files (orders-0/00000000000000000000.log), or a segment file"
)


class Segment(Value):
    """The files of one segment, by base offset (a missing file is ``None``), and the store holding them
    (:mod:`kseg.storage.stores`)."""

    _fields = ("base_offset", "log", "index", "timeindex", "txnindex", "log_bytes", "copies")  # (not the store)

    def __init__(
        self,
        base_offset: int,
        log: str | None = None,
        index: str | None = None,
        timeindex: str | None = None,
        txnindex: str | None = None,
        log_bytes: int | None = None,
        copies: bool = False,
        *,
        store: Store,
    ) -> None:
        self.base_offset = base_offset
        self.log, self.index, self.timeindex, self.txnindex = log, index, timeindex, txnindex
        self.log_bytes = log_bytes  # the .log's size when a listing gave it (remote segments)
        self.copies = copies  # one of several LocalTieredStorage copies at this base offset (named by its stem)
        self.store = store

    @property
    def name(self) -> str:
        """The base-offset name (``00000000000000000251``): the segment in rows and reports; the stem
        (``<name>-<segment id>``) for one of several tiered copies at one base offset (:attr:`copies`)."""
        return self.stem if self.copies else f"{self.base_offset:020d}"

    @property
    def stem(self) -> str:
        """Its files' names without the suffix: :attr:`name`, or ``<name>-<segment id>`` for a segment
        Kafka's ``LocalTieredStorage`` copied (``names.tiered_segment_id``)."""
        for path in (self.log, self.index, self.timeindex, self.txnindex):
            if path is not None:
                return names.stem(path)
        return self.name

    def open(self, log_gate: How | None = None) -> OpenSegment:
        """Its ``.index`` and ``.timeindex`` opened, with ``log_gate`` its ``.log`` too (through that gate:
        :func:`kseg.storage.records.open_for_read`, the one place a log is opened), and then the ``.log``'s
        identity asked, in one call to its store (as Kafka's ``LogSegment.open`` opens a segment's files
        together): the checks read the files from here.  A file that could not be opened is its error."""
        store = self.store
        wanted: list[tuple[str, How] | None] = [(path, -1) if path else None for path in (self.index, self.timeindex)]
        wanted.append((self.log, log_gate) if self.log and log_gate is not None else None)
        (index, timeindex, log), identity = open_together(store, wanted, self.log)
        return OpenSegment(index, timeindex, identity, log)

    def log_size(self) -> int:
        original = self.store.original_size(self.log) if self.log else None
        if original is not None:  # a tiered segment: the manifest's size, not the object's
            return original
        if self.log_bytes is not None:
            return self.log_bytes
        try:
            return os.path.getsize(self.log) if self.log else 0
        except OSError:
            return 0


class OpenSegment(NamedTuple):
    """A segment's files, opened once (:meth:`Segment.open`): each an open file, the error opening it raised
    (:class:`KsegError`), or None (no such file in the segment, or not asked for); :meth:`close` closes what
    was opened."""

    offset_index: ReadFile | KsegError | None
    time_index: ReadFile | KsegError | None
    identity: str | KsegError | None  # the .log's (``--resume``)
    log: ReadFile | KsegError | None = None  # the .log, when a gate was given (its reader takes it over)

    def close(self) -> None:
        for f in (self.offset_index, self.time_index, self.log):  # (a file closed twice stays closed)
            if f is not None and not isinstance(f, KsegError):
                f.close()


class Partition(Value):
    """One partition directory (or a set of loose segment files) and the store holding it."""

    _fields = ("path", "segments", "snapshots", "error", "head_left_out", "leader_epochs")  # (not the store)

    def __init__(
        self,
        path: str,
        segments: list[Segment] | None = None,
        snapshots: list[str] | None = None,
        error: str | None = None,
        head_left_out: bool = False,
        *,
        store: Store,
        leader_epochs: bool | None = None,
    ) -> None:
        self.path = path
        self.segments: list[Segment] = [] if segments is None else segments
        self.snapshots: list[str] = [] if snapshots is None else snapshots
        self.error = error  # the directory could not be listed: nothing of it was verified
        self.head_left_out = head_left_out  # segments[0] is not the log's first (a command left the first ones out)
        self.store = store
        #: whether the directory's listing held a ``leader-epoch-checkpoint`` (:func:`leader_epochs_listed`;
        #: None: not listed, so a reader asks): known when the partition is found, not asked of its store again
        self.leader_epochs = leader_epochs

    @property
    def name(self) -> str:
        if self.store.remote:
            return location.basename(self.path)
        return os.path.basename(os.path.normpath(os.path.abspath(self.path)))

    @property
    def log_dir(self) -> str:
        """The log directory holding this partition directory (absolute): with :attr:`name`, its identity.

        A broker keeps a partition in one of its log directories (``LogManager`` refuses a second copy),
        so ``b1/data/orders-0`` and ``b2/data/orders-0`` are two brokers' replicas: two logs."""
        if self.store.remote:
            return location.dirname(self.path)
        return os.path.dirname(os.path.normpath(os.path.abspath(self.path)))


def is_partition_dir(path: str, store: Store) -> bool:
    """True when ``path`` holds at least one segment file."""
    try:
        return names.holds_segment(e.path for e in store.list(path) if store.stat(e.path).kind == "file")
    except InputError:
        return False


def scan_partition(path: str, notes: list[str] | None = None, *, store: Store) -> Partition:
    """List the segments of one partition directory (or URI prefix) of ``store``, in base-offset order; the
    read context's watcher (:mod:`kseg.storage.watch`) is told."""
    with watch.listing(path, store.context.watcher) as told:
        told.noun = "key" if store.remote else "file"  # what the store lists: an object store's keys, or files
        entries = store.list(path)  # a directory that cannot be listed: the OS's (or the store's) reason
        told.keys, told.partitions = len(entries), int(names.holds_segment(e.path for e in entries))
    return partition_from_listing(store.names.directory(path), entries, notes, store)


def partition_from_listing(
    path: str, entries: Sequence[ListedFile], notes: list[str] | None, store: Store
) -> Partition:
    """The partition whose directory ``path`` holds ``entries`` (``LocalLog``'s naming rules: files in
    transition and names without a base offset are skipped with a note; a listed size is kept)."""
    part = Partition(path, store=store)
    part.leader_epochs = leader_epochs_listed(path, entries, store)
    by_key: dict[tuple[int, str | None], Segment] = {}
    for entry in entries:
        full = entry.path
        name = location.basename(full)
        if name.endswith(TRANSITION_FILE_SUFFIXES):
            if notes is not None:
                notes.append(f"{full}: skipped, a file in transition ({name.rsplit('.', 1)[1]})")
            continue
        sfx = names.suffix(name)
        tiered_base = names.base_offset_from_name(name) if is_indexes_object(full) else None
        if tiered_base is not None:  # Aiven's layout: a segment's indexes in one object, read as files
            seg = by_key.setdefault((tiered_base, names.tiered_segment_id(name)), Segment(tiered_base, store=store))
            for index in (names.INDEX, names.TIME_INDEX, names.TXN_INDEX, names.SNAPSHOT):
                inside = full[: -len(".indexes")] + index
                if not store.exists(inside):  # the manifest says (read once; a transaction index may be absent)
                    continue
                if index == names.SNAPSHOT:  # the producer state at the segment's end (kseg.storage.snapshots)
                    part.snapshots.append(inside)
                else:
                    setattr(seg, _SLOT[index], inside)
            continue
        if sfx == names.SNAPSHOT:
            part.snapshots.append(full)
            continue
        if sfx not in SEGMENT_SUFFIXES:
            continue
        base = names.base_offset_from_name(name)
        if base is None:
            if notes is not None:
                notes.append(f"{full}: skipped, the name carries no base offset")
            continue
        seg = by_key.setdefault((base, names.tiered_segment_id(name)), Segment(base, store=store))
        setattr(seg, _SLOT[sfx], full)
        if sfx == names.LOG and entry.size is not None:
            seg.log_bytes = entry.size
    part.segments = [by_key[k] for k in sorted(by_key, key=lambda k: (k[0], k[1] or ""))]
    copies = tiered_copies(part)
    if notes is not None:
        notes.extend(copies)
    return part


def leader_epochs_listed(path: str, entries: Sequence[ListedFile], store: Store) -> bool:
    """Whether the partition directory ``path``, listed as ``entries``, holds a ``leader-epoch-checkpoint``
    (:attr:`Partition.leader_epochs`): an object store's listing answers; a file system's names a dangling
    link too, so a name listed is asked whether anything is there (what a reader asked before reading it:
    a dangling link is absent, an unreadable file or a FIFO is there and refused by its reader)."""
    if not any(location.basename(e.path) == LEADER_EPOCHS for e in entries):
        return False
    return store.remote or store.exists(store.names.join(path, LEADER_EPOCHS))


def tiered_copies(part: Partition) -> list[str]:
    """Several ``LocalTieredStorage`` copies of one segment (``<offset>-<segment id>.log`` under two ids):
    ``RemoteLogManager`` gives every copy attempt a new ``RemoteLogSegmentId`` (``generateNew``), and a copy
    that failed retriably or was cut short by a crash stays (``COPY_SEGMENT_STARTED``) until its cleanup
    deletes it.  Which copy is live is in the remote log metadata, not in the files: each is its own
    segment, named by its stem (:attr:`Segment.copies` set), and a note names them all: the notes returned."""
    found = []
    by_base: dict[int, list[Segment]] = {}
    for seg in part.segments:
        by_base.setdefault(seg.base_offset, []).append(seg)
    for base, segs in by_base.items():
        if len(segs) < 2:
            continue
        for seg in segs:
            seg.copies = True
        names = ", ".join(location.basename(seg.log or seg.stem) for seg in segs)
        found.append(
            f"{part.path}: {len(segs)} tiered copies of the segment at base offset {base}: {names}: each read "
            "as its own segment (RemoteLogManager copies a segment again under a new segment id after a "
            "failed or interrupted copy; the remote log metadata, not the files, says which is live)"
        )
    return found


def nothing_in(partitions: Sequence[Any]) -> bool:
    """True when ``partitions`` hold no segment and no failed directory: a run over them would read
    nothing (e.g. only files whose names carry no base offset, a tiered segment's ``<base>-<uuid>.log``),
    and a verdict on nothing is none -- the caller raises :func:`nothing_found`.  ``partitions``: each a
    :class:`Partition` or a compact :class:`~kseg.storage.listing.Listed` (its length its segments)."""
    return not any(len(p.segments if isinstance(p, Partition) else p) or p.error is not None for p in partitions)


def nothing_found(paths: list[str]) -> InputError:
    """The error for a run whose paths hold no segment at all (only empty Kafka log directories)."""
    return InputError("nothing to read: no segment files under " + ", ".join(paths), hint=LAYOUT_HINT)


def natural_key(name: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key putting ``orders-2`` before ``orders-10``: digit runs compare as numbers."""
    parts = re.split(r"(\d+)", name)  # (the pattern compiled when first asked, then re's own cache)
    return tuple((0, int(part), part) if part.isdecimal() else (1, 0, part) for part in parts if part)
