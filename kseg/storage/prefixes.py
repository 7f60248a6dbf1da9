"""A URI prefix listed log directory by log directory: the driver's peak is a few log directories, not the fleet.

pyarrow returns a listing whole (``FileSelector``: every key's ``FileInfo``
at once, not page by page), so one recursive listing of a fleet's prefix
holds every key of the fleet before a single partition can be folded.  A
broker's disk is laid out by Kafka's ``LogManager``: each *log directory*
(``log.dirs``) holds ``meta.properties``, the offset checkpoints
(``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
``replication-offset-checkpoint``, ``cleaner-offset-checkpoint``) and
``.kafka_cleanshutdown`` (:data:`kseg.storage.names.LOG_DIR_MARKERS`),
and one directory per partition named ``<topic>-<partition>``
(``UnifiedLog.parseTopicPartitionName``, :func:`kseg.storage.names.topic_partition`)
or, in transition, ``<topic>-<partition>.<id>-delete`` (``-future``,
``-stray``: :data:`kseg.storage.names.TRANSITION_DIR`); a partition directory
holds the segment files.  Tiered copies keep the same shape under a
``<topic>-<topicId>`` (Aiven) or ``<topic>-<partition>-<topicId>``
(``LocalTieredStorage``) directory (:func:`kseg.storage.tiered_names.is_tiered_dir`).

So a prefix is first listed one level at a time (``FileSelector(recursive=False)``:
on S3 ``ListObjectsV2`` with a delimiter, one page per 1,000 names).  A level
that holds segment files or a broker's own files, or whose subdirectories are
named like partition (or tiered) directories, is a log directory or within
one: it is listed recursively as one unit.  Any other level -- a fleet root,
``broker-N/`` or date prefixes -- is descended, its subdirectories side by
side; a level with no subdirectory is complete as listed; below :data:`DEPTH`
levels every prefix is listed recursively.  At most :data:`AT_ONCE` listings
run at once, and each recursive listing is handed to the caller's ``take``
directory by directory as it arrives and then let go, so the listing's
transient peak is :data:`AT_ONCE` log directories' keys.  The heuristic only
decides the split: every key under the prefix is listed exactly once
whatever it guesses (a fleet root whose brokers are named ``broker-1``,
``broker-2`` looks like a log directory and is listed whole, as one listing would).
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import TypeVar

from kseg.errors import InputError
from kseg.storage import location, names, watch
from kseg.storage.tiered_names import is_tiered_dir

#: Listings (level or recursive) run at once: the peak is about this many log directories' keys in flight.
AT_ONCE = 4
#: Levels below the prefix listed one at a time at most; a prefix deeper than that is listed recursively.
DEPTH = 4

#: ``take(prefix, its directories)``: one listing under ``prefix``, its files by directory (each group sorted by
#: path), called from the listing threads.
Take = Callable[[str, Iterator[tuple[str, list[location.Entry]]]], None]
#: A prefix to list, its depth below the listed URI, and whether it is listed recursively.
_Task = tuple[str, int, bool]
_Tasks = list[_Task]
_Listing = TypeVar("_Listing")


#: A topic name of Kafka's legal characters (``Topic.LEGAL_CHARS``) with a letter or ``_`` in it: ``2024-05-01``,
#: a date prefix, is not taken for partition 1 of a topic ``2024-05``.
_TOPIC = re.compile(r"[a-zA-Z0-9._-]*[a-zA-Z_][a-zA-Z0-9._-]*\Z")


def looks_like_partition(name: str) -> bool:
    """True for a directory name ``<topic>-<partition>`` (``UnifiedLog.parseTopicPartitionName``), or one in
    transition (``-delete``, ``-future``, ``-stray``)."""
    if names.TRANSITION_DIR.match(name):
        return True
    tp = names.topic_partition(name)
    return tp is not None and _TOPIC.match(tp[0]) is not None


def is_log_dir(prefix: str, dirs: list[str], found: list[location.Entry]) -> bool:
    """True when the level ``prefix``, listed as ``dirs`` (prefixes) and ``found`` (files), is best listed
    whole: it holds segment files or a broker's files, or a subdirectory named like a partition or tiered
    directory, or it is a tiered topic's directory (Aiven's ``<topic>-<topicId>``, holding ``<partition>/``)."""
    if is_tiered_dir(location.basename(prefix)):
        return True
    for e in found:
        if e.path.endswith(names.SEGMENT_SUFFIXES) or location.basename(e.path) in names.LOG_DIR_MARKERS:
            return True
    for d in dirs:
        name = location.basename(d)
        if looks_like_partition(name) or is_tiered_dir(name):
            return True
    return False


def each_listing(
    uri: str, take: Take, at_once: int | None = None, depth: int = DEPTH, watcher: watch.Watcher | None = None
) -> bool:
    """List everything under ``uri``, calling ``take`` once per listing, in no particular order and from up
    to ``at_once`` threads (default :data:`AT_ONCE`; ``take`` must be thread-safe): each "directory" under
    ``uri`` (``uri`` itself included) that directly holds files is in exactly one listing, and the
    directories of one listing are together in natural order (they share its prefix, which no other
    listing's prefix continues: sorted by ``prefix + "/"``, the listings are in that order too).  True when
    any file was found.  A listing that fails stops the others taking more prefixes and, once those under
    way have finished, its error is raised naming ``uri`` (as one listing of ``uri`` would).  The bound is
    the process's: URIs listed side by side (one per broker, ``partition._list_remote``) share the
    ``at_once`` slots."""
    from concurrent.futures import ThreadPoolExecutor  # (a local root never loads it)

    at_once = at_once or AT_ONCE
    plan = _Plan(uri, take, depth, _slots(at_once), watcher)
    with ThreadPoolExecutor(max_workers=at_once) as pool:
        for future in [pool.submit(plan.work) for _ in range(at_once)]:
            future.result()
    if plan.failed is not None:
        raise plan.failed
    return plan.found


class _Plan:
    """The prefixes still to list, shared by the listing threads."""

    def __init__(
        self, uri: str, take: Take, depth: int, slots: threading.BoundedSemaphore, watcher: watch.Watcher | None
    ) -> None:
        self.uri, self.take, self.depth, self.slots, self.watcher = uri, take, depth, slots, watcher
        self.todo: deque[_Task] = deque([(uri, 0, depth <= 0)])
        self.busy = 0
        self.found = False
        self.failed: BaseException | None = None
        self.lock = threading.Condition()

    def work(self) -> None:
        """Take prefixes until none is left and none is being listed (whose listing may add more)."""
        while True:
            with self.lock:
                while not self.todo and self.busy and self.failed is None:
                    self.lock.wait()
                if self.failed is not None or not self.todo:
                    self.lock.notify_all()
                    return
                task = self.todo.popleft()
                self.busy += 1
            more: list[_Task] = []
            try:
                with self.slots:  # held while the listing is in memory: listed and folded
                    more = self.list(*task)
            except BaseException as exc:  # noqa: BLE001 - raised by each_listing once the others finish
                with self.lock:
                    self.failed = self.failed or exc
            with self.lock:
                self.todo.extend(more)
                self.busy -= 1
                self.lock.notify_all()

    def list(self, prefix: str, level: int, whole: bool) -> list[_Task]:
        """List one prefix, telling the watcher (:mod:`kseg.storage.watch`); the prefixes below it still to list."""
        with watch.listing(prefix, self.watcher) as told:
            return self._list(prefix, level, whole, told)

    def _list(self, prefix: str, level: int, whole: bool, told: watch.Told) -> _Tasks:
        """:meth:`list`, setting on ``told`` the keys and partition directories it handed to ``take`` (a level
        listed again whole hands none: each key is counted once, as one recursive listing would list it)."""
        if whole:
            entries = self.listed(location.list_tree, prefix)
            if entries:
                self.found = True
            told.keys = len(entries)
            self.take(prefix, _grouped(entries, told))
            return []
        dirs, found = self.listed(location.list_level, prefix)
        if found:
            self.found = True
        if dirs and is_log_dir(prefix, dirs, found):
            return [(prefix, level, True)]
        if found:  # a level with no subdirectory (all its keys), or files beside descended ones
            told.keys, told.partitions = len(found), int(names.holds_segment(e.path for e in found))
            self.take(prefix, iter([(prefix, found)]))
        return [(d, level + 1, level + 1 >= self.depth) for d in dirs]

    def listed(self, listing: Callable[[str], _Listing], prefix: str) -> _Listing:
        """``listing(prefix)``; its error named as the listed URI's (the store's reason, as one listing of it)."""
        try:
            return listing(prefix)
        except InputError as exc:
            raise InputError(exc.message, path=location.redact(self.uri), hint=exc.hint) from None


_SLOTS_LOCK = threading.Lock()


def _slots(at_once: int) -> threading.BoundedSemaphore:
    """The process's ``at_once`` listing slots (one semaphore per bound, made once under the lock)."""
    with _SLOTS_LOCK:
        return _semaphore(at_once)


@lru_cache(maxsize=None)
def _semaphore(at_once: int) -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(at_once)


def _grouped(entries: list[location.Entry], told: watch.Told) -> Iterator[tuple[str, list[location.Entry]]]:
    """A sorted listing's files by directory, each group in path order (``told.partitions`` counting those
    holding a segment file); ``entries`` is emptied, and each group let go once the caller has taken it."""
    by_dir: dict[str, list[location.Entry]] = {}
    entries.reverse()
    while entries:
        entry = entries.pop()
        by_dir.setdefault(location.dirname(entry.path), []).append(entry)
    for directory in list(by_dir):
        group = by_dir.pop(directory)
        told.partitions += names.holds_segment(e.path for e in group)
        yield directory, group
