"""The paths of a ``kseg logdir`` run as log directories, each read once, and the checks across them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kseg.errors import InputError
from kseg.ops.logdir import across
from kseg.ops.logdir.logdir import (
    PARTITION_FILES,
    LogDirReport,
    Target,
    finish,
    listing,
    open_log_dir,
    read_partition,
)
from kseg.storage import location, outputs, roots
from kseg.storage.files import SEGMENT_SUFFIXES
from kseg.storage.outputs import Destination
from kseg.storage.partition import is_partition_dir, natural_key
from kseg.storage.stores.discover import store_of
from kseg.storage.stores.find import check_exists

if TYPE_CHECKING:
    from kseg.storage.context import Store


@dataclass
class Opened:
    """One log directory's own files read, and its partition directories still to read (``only``: the one
    partition directory given, else None), and the broker directory it lies in (one node's, see
    :mod:`kseg.ops.logdir.across`)."""

    report: LogDirReport
    targets: list[Target]
    only: str | None = None
    broker: str | None = None  # the broker directory of a fleet root it lies in (<root>/<broker>/<log dir>)


def inspect_all(paths: list[str], notes: list[str] | None = None) -> list[LogDirReport]:
    """Each path a log directory, a partition directory (then its log directory, for that partition
    only), or a fleet root (the log directories under it); the same directory given twice is read once.
    Raises :class:`InputError` for a path that is missing, not a directory or cannot be listed, before
    anything is read."""
    opened = open_all(paths, notes)
    for one in opened:
        for target in one.targets:
            one.report.partitions.append(read_partition(one.report, target)[0])
    return finish_all(opened)


SKIPPED = roots.NO_LOG_DIR


def open_all(paths: list[str], notes: list[str] | None = None) -> list[Opened]:
    """The log directories of ``paths`` (:func:`inspect_all`), each one's own files read
    (:func:`open_log_dir`); its partitions are read next, here or on Spark's executors.  ``notes`` gets
    a line for each directory of a fleet root that holds no log directory (never dropped unsaid)."""
    targets: dict[tuple[str, str | None], tuple[str, Store]] = {}  # each log directory, and its root's store
    brokers: dict[tuple[str, str | None], str] = {}
    for path in paths:
        store = store_of(path)  # the root given: its store, chosen once and handed to all under it
        check_exists(path, store)
        remote = store.remote
        if not remote:
            path = location.local_path(path)
            if not os.path.isdir(path):
                raise InputError("not a directory: give a broker's log directory (log.dirs)", path=path)
        if is_partition_dir(path, store):
            parent = location.dirname(path.rstrip("/")) if remote else os.path.dirname(os.path.abspath(path))
            name = location.basename(path.rstrip("/")) if remote else os.path.basename(os.path.abspath(path))
            targets.setdefault((_key(parent, store), name), (parent, store))
            continue
        skipped: list[str] = []
        for log_dir in log_dirs(path, store, skipped):
            targets.setdefault((_key(log_dir, store), None), (log_dir, store))
            broker = _broker(path, log_dir)
            if broker is not None:
                brokers.setdefault((_key(log_dir, store), None), broker)
        if notes is not None:
            notes.extend(f"{d}: {SKIPPED}" for d in skipped)
    return [
        Opened(*open_log_dir(path, store, key[1]), key[1], brokers.get(key)) for key, (path, store) in targets.items()
    ]


def _broker(root: str, log_dir: str) -> str | None:
    """``<root>/<broker>`` when ``log_dir`` is ``<root>/<broker>/<log dir>`` (a broker of a fleet root), else None."""
    inside = log_dir.rstrip("/")[len(root.rstrip("/")) + 1 :] if log_dir != root else ""
    first, sep, rest = inside.partition("/")
    return location.join(root.rstrip("/"), first) if sep and rest and "/" not in rest else None


def finish_all(opened: list[Opened]) -> list[LogDirReport]:
    """The checks once every partition is read: each log directory's, then the replicas' across them."""
    for one in opened:
        finish(one.report, one.only)
    reports = [one.report for one in opened]
    across.judge(reports, [one.broker for one in opened])
    return reports


def _key(path: str, store: Store) -> str:
    return path.rstrip("/") if store.remote else os.path.realpath(path)


def log_dirs(path: str, store: Store, skipped: list[str], depth: int = roots.DEPTH) -> list[str]:
    """``path`` itself when it is a log directory, else the log directories under it (a fleet root:
    ``<root>/<broker>/<log dir>``, at most :data:`kseg.storage.roots.DEPTH` levels down, every command's rule;
    the subdirectories holding none are added to ``skipped``), else ``path`` when a directory in it holds a
    partition's files (read as a log directory), else :class:`InputError` (:data:`NOT_A_LOG_DIR`: an empty
    or foreign directory).
    A log directory holds one of :data:`~kseg.storage.checkpoints.LOG_DIR_MARKERS` or a partition
    directory (one holding a segment file); a store is listed once."""
    if store.remote:
        found = _remote_log_dirs(path.rstrip("/"), depth, skipped)
    else:
        found = _under(path, depth, skipped, store)
    if not found:
        if not _holds_partitions(path, store):  # an unmounted disk, a wrong path: never "0 partitions, clean"
            raise InputError(NOT_A_LOG_DIR, path=path)
        del skipped[:]  # a log directory of partition directories without segments: read, its entries judged
    return found or [path]


NOT_A_LOG_DIR = "not a log directory: no meta.properties, no partition directories"


def _holds_partitions(path: str, store: Store) -> bool:
    """A directory of ``path`` holds a file Kafka keeps in a partition directory (its segments are gone)."""
    return any(
        is_dir
        and name != "lost+found"  # (a fresh file system's: no partition, not read)
        and any(not sub_dir and n in PARTITION_FILES for n, sub_dir in listing(location.join(path, name), store))
        for name, is_dir in listing(path, store)
    )


def _under(path: str, depth: int, skipped: list[str], store: Store) -> list[str]:
    entries = listing(path, store)
    if roots.marks_log_dir(name for name, is_dir in entries if not is_dir):
        return [path]
    subdirectories = [location.join(path, name) for name, is_dir in entries if is_dir]
    if any(is_partition_dir(d, store) for d in subdirectories):
        return [path]
    if depth == 0:
        return []
    out = []
    for d in subdirectories:
        found = _under(d, depth - 1, [], store)
        if not found:
            skipped.append(d)
        out.extend(found)
    return out


def _remote_log_dirs(root: str, depth: int, skipped: list[str]) -> list[str]:
    """:func:`log_dirs` from one recursive listing of a prefix."""
    found: set[str] = set()
    firsts: set[str] = set()  # the prefixes directly under the root
    for entry in location.list_tree(root):
        name, parent = location.basename(entry.path), location.dirname(entry.path)
        first, sep, _ = entry.path[len(root) + 1 :].partition("/")
        if sep:
            firsts.add(location.join(root, first))
        if roots.marks_log_dir([name]):
            found.add(parent)
        elif name.endswith(SEGMENT_SUFFIXES):
            found.add(location.dirname(parent))
    within = [d for d in found if d == root or (d.startswith(root + "/") and roots.levels_below(root, d) <= depth)]
    if root in within:
        return [root]
    skipped.extend(
        sorted((f for f in firsts if not any(d.startswith(f + "/") or d == f for d in within)), key=natural_key)
    )
    return sorted(within, key=natural_key)


def check_report(report: Destination, inputs: list[str], force: bool) -> None:
    """``--report`` checked before any work: a local file, never inside an input, replaced only with
    ``force`` (:class:`kseg.errors.KsegError` says why not)."""
    outputs.refuse_on_inputs(report.path, inputs, "--report")
    if report.store.remote:
        raise InputError("the report is a local file", path=report.path)
    outputs.check_file_target(report.path, force=force, option="--report")
