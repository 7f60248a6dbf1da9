"""Discovery: the paths of a command line turned into partitions holding their store.

Each path given is an input root: its store is chosen once (:func:`kseg.storage.stores.discover.store_for`)
and listed through it -- a local log root directory by directory, an object store's prefix by a few
delimiter listings (:mod:`kseg.storage.prefixes`), log directories found at most :data:`kseg.storage.roots.DEPTH`
levels below (:mod:`kseg.storage.roots`).  What is found are :class:`~kseg.storage.partition.Partition` and
:class:`~kseg.storage.partition.Segment` nouns holding the store they were listed from, as Kafka's ``LogSegment``
holds its files: the readers below take the store from them and never come back here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import NamedTuple, TypeVar, cast

from kseg.errors import InputError
from kseg.storage import files, location, prefixes, roots, watch
from kseg.storage.context import ReadContext, Store, running
from kseg.storage.names import SEGMENT_SUFFIXES, TRANSITION_DIR
from kseg.storage.partition import LAYOUT_HINT, Partition, natural_key, partition_from_listing, scan_partition
from kseg.storage.stores.discover import store_for, store_of

T = TypeVar("T")


class Root(NamedTuple):
    """An input root a command reads without discovering partitions in it (``tiered --logdir``, a file
    ``dump`` or ``salvage`` is given, ``diff --roots``' directories): the path as given and its store,
    chosen once here and carried to every read under it."""

    path: str
    store: Store


def root(path: str, context: ReadContext | None = None) -> Root:
    """The root ``path`` names, its store chosen now (under ``context``; the running command's when None)."""
    return Root(path, store_for(path, context or running()))


def discover_uri(uri: str, notes: list[str], context: ReadContext | None = None) -> list[Partition]:
    """:func:`discover_uri_as` keeping the :class:`Partition` objects."""
    return [part for _, part in discover_uri_as(uri, notes, _same, store_for(uri, context or running()))]


def _same(part: Partition) -> Partition:
    return part


def discover_uri_as(uri: str, notes: list[str], shape: Callable[[Partition], T], store: Store) -> list[tuple[str, T]]:
    """The partitions under ``uri`` (a prefix or one segment file), listed log directory by log directory.

    On an object store there are no directories, only keys, and a round trip
    per "directory" would make 10^5 partitions 10^5 sequential requests; so
    the prefix is listed by :func:`kseg.storage.prefixes.each_listing` (a
    few delimiter listings find the log directories, each is listed
    recursively, a few at once) and each listing is grouped here as it
    arrives: every "directory" holding segment files is a partition
    directory, its parent the log directory, at any depth (a broker's log
    root, a partition directory, many brokers' roots, plain segment files
    under any prefix).  Partitions and notes come in natural order over the
    whole of ``uri``, as one recursive listing would give them.  Raises
    :class:`InputError` when nothing under ``uri`` is a segment file.  Each
    partition is ``(its path, shape(partition))``, shaped as it is made (a
    listing's entries let go once their directory is).
    """
    location.check_uri(uri)
    uri = uri.rstrip("/")
    kind = store.stat(uri).kind
    if kind == "file":
        base = files.base_offset_from_name(uri)
        if base is None:
            raise InputError("not a segment file: the name carries no base offset", path=uri, hint=LAYOUT_HINT)
        directory = location.dirname(uri)
        whole = partition_from_listing(directory, store.list(directory), notes, store)
        whole.segments = [s for s in whole.segments if s.base_offset == base]
        return [(whole.path, shape(whole))]
    # each listing's (directory, the partition directory in transition holding it or its own notes, shaped),
    # in natural order: folded in the listing threads as each listing arrives, the listings in no order
    listings: list[tuple[str, list[tuple[str, str | list[str] | None, T | None]]]] = []

    def take(prefix: str, groups: Iterator[tuple[str, list[location.Entry]]]) -> None:
        records: list[tuple[str, str | list[str] | None, T | None]] = []
        for directory, group in groups:
            if not files.holds_segment(e.path for e in group):
                continue
            skipped = _beyond(directory, uri)
            if skipped:
                records.append((directory, skipped, None))
                continue
            own: list[str] = []
            shaped = shape(partition_from_listing(directory, group, own, store))
            records.append((directory, own or None, shaped))
        records.sort(key=lambda record: natural_key(record[0]))
        listings.append((prefix, records))

    if not prefixes.each_listing(uri, take, watcher=store.context.watcher) and kind == "missing":
        raise location.not_found(uri)
    # by prefix + '/': all of a listing's directories sort together there ('a/' after 'a-b/', as 'a/x' after 'a-b/y')
    listings.sort(key=lambda listing: natural_key(listing[0] + "/"), reverse=True)
    partitions = []
    skipped: set[str] = set()
    while listings:  # each listing let go once taken
        for directory, said, shaped in listings.pop()[1]:
            if isinstance(said, str):
                if said not in skipped:
                    skipped.add(said)
                    notes.append(said)
                continue
            notes.extend(said or ())
            partitions.append((directory, cast(T, shaped)))
    if not partitions:
        raise InputError("no partition directories or segment files found", path=uri, hint=LAYOUT_HINT)
    return partitions


def _beyond(directory: str, root: str) -> str | None:
    """The note skipping the partition directory ``directory`` under ``root``: on the way to it a directory
    in transition (``*-delete`` & co.), or its log directory deeper than :data:`roots.DEPTH` levels below
    ``root`` (:mod:`kseg.storage.roots`); else None."""
    rel = directory[len(root) :].strip("/")
    path = root
    for level, part in enumerate(rel.split("/") if rel else [], start=1):
        path = path + "/" + part
        if TRANSITION_DIR.match(part):
            return f"{path}: skipped, a partition directory in transition"
        if level > roots.DEPTH + 1:
            deep = location.dirname(path)
            return f"{deep}: not read, more than {roots.DEPTH} levels below {root} (where log directories are found)"
    return None


def discover(paths: list[str], notes: list[str], context: ReadContext | None = None) -> list[Partition]:
    """Resolve command-line paths to partitions, each once, in the order given.

    * a directory holding segment files is a partition directory;
    * any other directory is a log root: each subdirectory holding segment
      files is a partition (transition directories skipped with a note);
    * a file is taken as one segment: its siblings of the same base offset
      join it.

    A partition is its directory: the same directory reached twice (given
    twice, through a symbolic link, or directly and through its log root)
    is listed once, and a whole directory supersedes single files of it.
    The same partition name under two log roots is two partitions.  A
    directory that cannot be listed becomes a partition with ``error`` set
    (a ``failed`` row, never silently dropped).

    Raises :class:`InputError` for a path that does not exist or holds
    nothing to verify (with a hint about the expected layout); an empty
    Kafka log directory (``meta.properties``, checkpoints) is only noted,
    and the caller refuses a run that found nothing at all
    (:func:`nothing_found`).

    Each path given is an input root: its store is chosen once
    (:func:`kseg.storage.stores.discover.store_for`, with ``context``, by
    default a plain one) and held by the partitions and segments found.
    """
    return discover_as(paths, notes, _same, context)


def discover_as(
    paths: list[str], notes: list[str], shape: Callable[[Partition], T], context: ReadContext | None = None
) -> list[T]:
    """:func:`discover`, each partition turned into ``shape(partition)`` (e.g. a compact
    :class:`~kseg.storage.listing.Listed`): a remote listing's as each is found, local ones at the end."""
    context = context or running()
    stores = {path: store_for(path, context) for path in paths}  # each root's store: chosen once, here
    roots = {path: store.remote for path, store in stores.items()}
    found = _Found(notes, context, next((store for store in stores.values() if not store.remote), None))
    listed: dict[str, T] = {}  # the remote partitions, already shaped
    place = Partition("", store=found.store)  # a remote partition's place among the local ones: one for all
    remote = _list_remote([p for p in paths if roots[p]], shape, context)
    for path in paths:
        if roots[path]:
            parts, remote_notes = remote[path]
            notes.extend(remote_notes)
            for key, part in parts:
                if key not in found.partitions:
                    found.partitions[key] = place  # its place in the order given
                    listed[key] = part
            continue
        path = location.local_path(path)
        check_exists(path, found.store)
        if os.path.isdir(path):
            found.add_directory(path)
        else:
            found.add_file(path)
    return [listed[key] if key in listed else shape(part) for key, part in found.partitions.items()]


class _Found:
    """What :func:`discover` found so far: the partitions by the real path of their directory, in
    order, and which of them were listed whole (not only for single files)."""

    def __init__(self, notes: list[str], context: ReadContext, local: Store | None = None) -> None:
        self.partitions: dict[str, Partition] = {}
        self.whole: set[str] = set()
        self.notes = notes
        self.store = local or store_for("", context)  # the local store: every local root's

    def add_whole(self, path: str) -> None:
        """The partition directory ``path``, listed whole."""
        key = os.path.realpath(path)
        if key in self.whole:
            return
        self.whole.add(key)
        try:
            part = scan_partition(path, self.notes, store=self.store)
        except InputError as exc:
            part = Partition(path, error=exc.describe(), store=self.store)
        self.partitions[key] = part  # single files of it given first: the whole directory replaces them, in place

    def add_failed(self, path: str, exc: OSError) -> None:
        """A directory that cannot be listed: a failed partition."""
        key = os.path.realpath(path)
        if key not in self.whole:
            self.whole.add(key)
            self.partitions[key] = Partition(path, error=_why(path, exc), store=self.store)

    def add_directory(self, path: str) -> None:
        """A directory given: a partition directory, or a log root of them (its listing told to the watcher)."""
        with watch.listing(path, self.store.context.watcher) as told:
            told.noun = "file"
            try:
                entries = _list(path)
            except OSError as exc:
                self.add_failed(path, exc)
                return
            whole = any(not is_dir and name.endswith(SEGMENT_SUFFIXES) for name, is_dir in entries)
            if not whole:  # a partition directory's files are counted by its own listing (add_whole)
                told.keys = sum(not is_dir for _, is_dir in entries)
        if whole:
            self.add_whole(path)
            return
        if not self._add_root(path, entries, roots.DEPTH):
            raise InputError(
                "nothing to read here: no segment files and no partition directories, nor a log directory "
                f"at most {roots.DEPTH} levels below",
                path=path,
                hint=LAYOUT_HINT,
            )

    def _add_root(self, path: str, entries: list[tuple[str, bool]], depth: int) -> bool:
        """``path`` (listed as ``entries``) as a log directory, else the log directories at most ``depth``
        levels below it (:mod:`kseg.storage.roots`, its directories holding none noted): whether any was found."""
        subdirectories = [os.path.join(path, name) for name, is_dir in entries if is_dir]
        if sum(self._add_subdirectory(sub) for sub in subdirectories):
            return True
        if roots.marks_log_dir(name for name, is_dir in entries if not is_dir):
            self.notes.append(f"{path}: a Kafka log directory holding no partitions")
            return True
        if depth == 0:
            return False
        found, empty = False, []
        for sub in (sub for sub in subdirectories if not _skipped(sub)):
            try:
                holds = self._add_root(sub, _list(sub), depth - 1)
            except OSError as exc:  # cannot tell what it holds: a failed row, never a silent skip
                self.add_failed(sub, exc)
                holds = True
            found = found or holds
            if not holds:
                empty.append(sub)
        if found:
            self.notes.extend(f"{sub}: {roots.NO_LOG_DIR}" for sub in empty)
        return found

    def _add_subdirectory(self, sub: str) -> bool:
        """A directory of a log root: whether it is a partition (or one that cannot be listed)."""
        if _skipped(sub):
            self.notes.append(f"{sub}: {_skipped(sub)}")
            return False
        try:
            holds = any(not d and n.endswith(SEGMENT_SUFFIXES) for n, d in _list(sub))
        except OSError as exc:  # cannot tell what it holds: a failed row, never a silent skip
            self.add_failed(sub, exc)
            return True
        if holds:
            self.add_whole(sub)
        return holds

    def add_file(self, path: str) -> None:
        """A file given: one segment, joined by its siblings of the same base offset."""
        base = files.base_offset_from_name(path)
        if base is None or files.suffix(path) not in SEGMENT_SUFFIXES:
            raise InputError(
                "not a segment file (<base offset>.log, .index, .timeindex or .txnindex)", path=path, hint=LAYOUT_HINT
            )
        directory = files.directory_of(path, self.store)  # as given (an absolute path only when given one)
        key = os.path.realpath(directory)
        if key in self.whole:
            return
        part = self.partitions.get(key)
        if part is None:
            part = self.partitions[key] = Partition(directory, store=self.store)
        try:
            listing = scan_partition(directory, None, store=self.store)
        except InputError as exc:
            part.error = exc.describe()
            return
        part.leader_epochs = listing.leader_epochs  # the listing's word on the checkpoint
        for seg in listing.segments:
            if seg.base_offset == base and seg not in part.segments:
                part.segments.append(seg)
        part.segments.sort(key=lambda s: s.base_offset)


def _skipped(sub: str) -> str | None:
    """Why the directory ``sub`` of a root is never read (in transition, lost+found), else None."""
    name = os.path.basename(sub)
    if TRANSITION_DIR.match(name):
        return "skipped, a partition directory in transition"
    if name == "lost+found":
        return "skipped, the file system's lost+found"
    return None


def _list_remote(
    uris: list[str], shape: Callable[[Partition], T], context: ReadContext
) -> dict[str, tuple[list[tuple[str, T]], list[str]]]:
    """Each URI's partitions and notes, the URIs listed concurrently (16 at a time; each log directory
    by log directory, :func:`discover_uri_as`, the listings of all of them sharing
    ``prefixes.AT_ONCE`` slots).  The first error is raised."""
    if not uris:
        return {}
    from concurrent.futures import ThreadPoolExecutor

    def one(uri: str) -> tuple[list[tuple[str, T]], list[str]]:
        notes: list[str] = []
        return discover_uri_as(uri, notes, shape, store_for(uri, context)), notes

    unique = list(dict.fromkeys(uris))
    with ThreadPoolExecutor(max_workers=min(16, len(unique))) as pool:
        return dict(zip(unique, pool.map(one, unique), strict=True))  # one answer per URI


def check_exists(path: str, store: Store | None = None) -> None:
    """Raise :class:`InputError` for a command-line path that does not exist (a typo'd glob says so); its store
    discovery's choice when not given."""
    store = store_of(path) if store is None else store
    location.check_uri(path)
    if store.stat(path).kind == "missing":
        hint = None
        if any(c in path for c in "*?["):
            hint = "the shell passed the pattern as it is: nothing matched it"
        raise InputError("no such file or directory", path=path, hint=hint)


def _list(path: str) -> list[tuple[str, bool]]:
    """(name, is a directory) of each entry, in natural order (:func:`natural_key`); raises OSError."""
    with os.scandir(path) as it:
        return sorted(((e.name, e.is_dir()) for e in it), key=lambda entry: natural_key(entry[0]))


def _why(path: str, exc: OSError) -> str:
    """One line for a directory that cannot be listed."""
    return InputError(f"cannot list the directory: {exc.strerror or exc}", path=path).describe()
