"""A broker's log directory read offline (``LogManager.loadLogs`` / ``LogLoader``'s view of it, without a broker).

A log directory holds ``meta.properties``, the four offset checkpoints, ``.kafka_cleanshutdown`` after a
clean shutdown, ``.lock`` (``LogManager.LockFileName``) and, in KRaft's metadata directory,
``bootstrap.checkpoint``; and one directory per partition, ``<topic>-<partition>``
(``UnifiedLog.parseTopicPartitionName``).  Each value is taken from the file that holds it, ``None``
when that file is absent (:mod:`kseg.storage.checkpoints`).  What Kafka does on start with what it finds
(``LogManager.loadLogs``, ``LogLoader.removeTempFilesAndCollectSwapFiles``) is :data:`LEFTOVER_DIRS` and
:data:`LEFTOVER_FILES`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from kseg.errors import InputError, KsegError
from kseg.ops.logdir import recover
from kseg.ops.logdir.log import LogFacts, read_log
from kseg.ops.logdir.rules import offset_problems
from kseg.storage import checkpoints as cp
from kseg.storage import files, leader_epochs, location
from kseg.storage.files import SEGMENT_SUFFIXES, TRANSITION_DIR
from kseg.storage.partition import (
    Partition,
    natural_key,
    partition_from_listing,
    tiered_copies,
)

if TYPE_CHECKING:
    from kseg.storage.context import Store

_T = TypeVar("_T")
METADATA_TOPIC = "__cluster_metadata"  # KRaft's metadata log: the raft layer's, in no LogManager checkpoint
LEFTOVER_DIRS = MappingProxyType(
    {  # UnifiedLog's suffixes, and what LogManager does with such a directory on start
        "delete": "a deleted partition's directory: Kafka deletes it on start",
        "future": "a replica being moved between log directories: Kafka resumes the move on start",
        "stray": "a replica the controller no longer assigns to this broker: Kafka deletes it",
    }
)
LEFTOVER_FILES = MappingProxyType(
    {  # LogFileUtils' suffixes, and what LogLoader does with such a file on start
        ".swap": "an interrupted cleaning or split: Kafka completes the swap on start (renames it into place)",
        ".index.swap": "an index of an interrupted swap: Kafka deletes it on start (and rebuilds the index)",
        ".timeindex.swap": "an index of an interrupted swap: Kafka deletes it on start (and rebuilds the index)",
        ".txnindex.swap": "an index of an interrupted swap: Kafka deletes it on start (and rebuilds the index)",
        ".cleaned": "an interrupted cleaning: Kafka deletes it on start",
        ".deleted": "a segment whose deletion was interrupted: Kafka deletes it on start",
        ".tmp": "an interrupted atomic write: Kafka ignores it (the file it was replacing is read)",
    }
)
LOG_DIR_FILES = (*cp.OFFSET_CHECKPOINTS, cp.META_PROPERTIES, cp.CLEAN_SHUTDOWN, ".lock", "bootstrap.checkpoint")
PARTITION_FILES = (leader_epochs.FILE_NAME, cp.PARTITION_METADATA, cp.QUORUM_STATE)
PARTITION_SUFFIXES = (*SEGMENT_SUFFIXES, files.SNAPSHOT, ".checkpoint")  # .checkpoint: a KRaft snapshot


@dataclass
class PartitionReport:
    """One partition directory: its values, each from the file holding it (None: that file is absent)."""

    log_dir: str
    name: str
    path: str
    topic_id: str | None = None
    log_start: int | None = None
    high_watermark: int | None = None
    recovery_point: int | None = None
    cleaner: int | None = None
    leader_epoch: int | None = None
    log: LogFacts = field(default_factory=LogFacts)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # files that could not be read (the OS's reason): exit 2
    unread: list[str] = field(default_factory=list)  # its log directory's checkpoints that could not be read
    store: Store = field(compare=False, repr=False, kw_only=True)  # its log directory's

    @property
    def status(self) -> str:
        if self.errors or self.unread or any(r.failed for r in self.log.reads):
            return "failed"
        if self.problems or not self.log.complete:
            return "problems"
        return "clean"


@dataclass
class LogDirReport:
    """One log directory: ``meta.properties``, ``.kafka_cleanshutdown``, the checkpoints, its partitions."""

    path: str
    meta: cp.MetaProperties | None = None
    clean_shutdown: bool = False
    broker_epoch: int | None = None
    checkpoints: list[str] = field(default_factory=list)  # the offset checkpoint files present
    offsets: dict[str, dict[tuple[str, int], cp.OffsetEntry] | None] = field(default_factory=dict)
    partitions: list[PartitionReport] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # the offset checkpoints that could not be read (errors)
    notes: list[str] = field(default_factory=list)  # what could not be checked, and why (not problems)
    store: Store = field(compare=False, repr=False, kw_only=True)  # chosen once for the root it lies in


def _read(report: LogDirReport | PartitionReport, directory: str, name: str) -> cp.Text | None:
    """A file to read; one that cannot be opened is an error (exit 2)."""
    try:
        return cp.open_text(directory, name, store=report.store)
    except InputError as exc:
        report.errors.append(exc.describe())
    except KsegError as exc:
        report.problems.append(f"malformed: {exc.describe()}")
    return None


def _parse(
    report: LogDirReport | PartitionReport, directory: str, name: str, parse: Callable[[cp.Text, str], _T]
) -> _T | None:
    """``parse(text, path)`` of a file (read as it parses), or None when it is absent, unreadable or over its
    bound (an error) or malformed (a problem)."""
    text = _read(report, directory, name)
    if text is None:
        return None
    try:
        return parse(text, files.display(location.join(directory, name), store=report.store))
    except InputError as exc:
        report.errors.append(exc.describe())
        return None
    except KsegError as exc:
        report.problems.append(f"malformed: {exc.describe()}")
        return None


Target = tuple[str, str, tuple[str, int]]  # a partition directory to read: (path, name, (topic, partition))


def listing(path: str, store: Store) -> list[tuple[str, bool]]:
    """(name, is a directory) of each entry of a local directory or a URI prefix, in natural order
    (an object store's "directories" are the first parts of the keys under it: one recursive listing);
    raises :class:`InputError` when it cannot be listed."""
    if store.remote:
        base = path.rstrip("/") + "/"
        seen: dict[str, bool] = {}
        for entry in location.list_tree(path):
            first, sep, _ = entry.path[len(base) :].partition("/")
            seen[first] = seen.get(first, False) or bool(sep)
        return sorted(seen.items(), key=lambda e: natural_key(e[0]))
    try:
        with os.scandir(path) as it:
            return sorted(((e.name, e.is_dir()) for e in it), key=lambda e: natural_key(e[0]))
    except OSError as exc:
        raise InputError(f"cannot list the directory: {exc.strerror or exc}", path=path) from None


def open_log_dir(path: str, store: Store, only: str | None = None) -> tuple[LogDirReport, list[Target]]:
    """The log directory's own files read (``meta.properties``, ``.kafka_cleanshutdown``, the offset
    checkpoints, leftovers) and its partition directories to read (all, or the one named ``only``):
    :func:`read_partition` each, then :func:`finish`.  Raises :class:`InputError` when it cannot be listed."""
    entries = listing(path, store)
    report = LogDirReport(store.names.canonical(path), store=store)
    report.meta = _parse(report, path, cp.META_PROPERTIES, cp.parse_meta_properties)
    names = {name for name, is_dir in entries if not is_dir}
    if cp.META_PROPERTIES not in names:
        report.notes.append(f"{path}: no meta.properties: the cluster, node and directory IDs are unknown")
    if cp.CLEAN_SHUTDOWN in names:  # present: a clean shutdown, whatever it holds (LogLoader's test)
        report.clean_shutdown = True
        report.broker_epoch = _parse(report, path, cp.CLEAN_SHUTDOWN, cp.parse_clean_shutdown)
    for name in cp.OFFSET_CHECKPOINTS:
        if name in names:
            report.checkpoints.append(name)
            before = len(report.errors)
            report.offsets[name] = _parse(report, path, name, cp.parse_offsets)
            if len(report.errors) > before:  # unreadable: every partition's value from it unknown, none clean
                report.unread.append(name)
    targets = []
    for name, is_dir in entries:
        if only is not None and name != only:
            continue
        full = location.join(path, name)
        if is_dir:
            target = _directory(report, full, name)
            if target is not None:
                targets.append(target)
        elif only is None:
            _log_dir_file(report, full, name)
    return report, targets


def finish(report: LogDirReport, only: str | None) -> None:
    """The checks of the log directory once its partitions are read (``report.partitions``, in order)."""
    if only is None:
        _entries_without_directory(report)


UNFINISHED_SWAP = (
    "a swap of an unfinished cleaning (a .cleaned file at or below its base offset): Kafka deletes it on start"
)


def _leftover(name: str, cleaned_from: int | None = None) -> str | None:
    """What Kafka does on start with a file of this name (``LogLoader.removeTempFilesAndCollectSwapFiles``:
    the longest suffix decides; a ``.log.swap`` at or above the lowest ``.cleaned`` base offset is an
    unfinished cleaning's, deleted), or None for a name that is no leftover."""
    for suffix in sorted(LEFTOVER_FILES, key=len, reverse=True):
        if name.endswith(suffix):
            base = files.base_offset_from_name(name[: -len(suffix)])
            if suffix == ".swap" and cleaned_from is not None and base is not None and base >= cleaned_from:
                return UNFINISHED_SWAP
            return LEFTOVER_FILES[suffix]
    return None


def _cleaned_from(names: list[str]) -> int | None:
    """The lowest base offset of the ``.cleaned`` files (``minCleanedFileOffset``), or None."""
    bases = [files.base_offset_from_name(n[: -len(".cleaned")]) for n in names if n.endswith(".cleaned")]
    return min((b for b in bases if b is not None), default=None)


def _log_dir_file(report: LogDirReport, full: str, name: str) -> None:
    if name in LOG_DIR_FILES:
        return
    what = _leftover(name)
    report.problems.append(f"leftover: {full}: {what}" if what else f"unknown file: {full}: not a file Kafka writes")


def _directory(report: LogDirReport, full: str, name: str) -> Target | None:
    if name == "lost+found":
        return None
    kind = TRANSITION_DIR.match(name)
    if kind is not None:
        report.problems.append(f"leftover: {full}: {LEFTOVER_DIRS[kind.group(1)]}")
        return None
    tp = cp.topic_partition(name)
    if tp is None:
        report.problems.append(
            f"unknown directory: {full}: not <topic>-<partition>, Kafka refuses to start "
            "(UnifiedLog.parseTopicPartitionName)"
        )
        return None
    return full, name, tp


def read_partition(report: LogDirReport, target: Target) -> tuple[PartitionReport, list[str]]:
    """One partition directory of ``report``'s log directory read and checked, and the notes it added to
    ``report.notes`` (a Spark task returns them: its copy of the report is not the driver's)."""
    before = len(report.notes)
    part = partition(report, *target)
    return part, report.notes[before:]


def partition(report: LogDirReport, full: str, name: str, tp: tuple[str, int]) -> PartitionReport:
    """One partition directory of ``report``'s log directory, read and checked."""
    part = PartitionReport(report.path, name, full, store=report.store)
    try:
        names = [entry for entry, _ in listing(full, report.store)]
        entries = [location.Entry(location.join(full, n), None) for n in names]
        listed = partition_from_listing(full, entries, None, report.store)
    except KsegError as exc:
        part.errors.append(exc.describe())
        return part
    report.notes.extend(tiered_copies(listed))  # (leftovers and unknown names are problems below)
    cleaned_from = _cleaned_from(names)
    for entry in names:
        _partition_file(part, location.join(full, entry), entry, cleaned_from)
    part.topic_id = _topic_id(part, full)
    if cp.PARTITION_METADATA not in names and tp[0] != METADATA_TOPIC and report.meta and report.meta.version == 1:
        part.problems.append(
            f"no {cp.PARTITION_METADATA} on a KRaft broker (meta.properties version 1): Kafka takes the replica "
            "for a stray one (LogManager.isStrayKraftReplica: no topic ID) and renames it -stray"
        )
    epochs = _epochs(part, full)
    if leader_epochs.FILE_NAME not in names:
        report.notes.append(f"{full}: no leader-epoch-checkpoint: leader epochs not checked")
    if tp[0] == METADATA_TOPIC:
        _parse(part, full, cp.QUORUM_STATE, cp.parse_quorum_state)
    check = None
    if epochs is not None:
        part.leader_epoch = epochs[-1].epoch if epochs else None
        check = leader_epochs.EpochCheck(
            epochs,
            files.display(location.join(full, leader_epochs.FILE_NAME), store=report.store),
        )
    plan = recover.plan_of(report.clean_shutdown, _entry(report, cp.RECOVERY_POINT, tp), tp[0] == METADATA_TOPIC)
    part.log = read_log(listed, check, plan)
    part.problems.extend(part.log.load_failures)
    part.errors.extend(part.log.errors)
    report.notes.extend(part.log.rebuilt)
    found, part.log.log_end = recover.problems(
        part.log.truncations, plan, _entry(report, cp.LOG_START, tp), part.log.log_end
    )
    part.problems.extend(found)
    if (note := recover.unchecked_note(full, plan, part.log.unchecked)) is not None:
        report.notes.append(note)
    _offsets_from_checkpoints(report, part, tp, listed)
    part.problems.extend(
        offset_problems(
            part.log,
            {
                cp.HIGH_WATERMARK: part.high_watermark,
                cp.RECOVERY_POINT: part.recovery_point,
                cp.CLEANER: part.cleaner,
                cp.LOG_START: part.log_start,
            },
            part.log_start,
            report.clean_shutdown,
        )
    )
    if check is not None:
        part.problems.extend(check.problems())
    return part


def identify(report: LogDirReport, target: Target) -> PartitionReport:
    """A partition directory's name and topic ID (``partition.metadata``) alone, its segments not read: what a
    KRaft broker's stray test on start looks at (``kseg metadata --logdir`` compares it with the image)."""
    full, name, _ = target
    part = PartitionReport(report.path, name, full, store=report.store)
    part.topic_id = _topic_id(part, full)
    return part


def _topic_id(part: PartitionReport, full: str) -> str | None:
    return _parse(part, full, cp.PARTITION_METADATA, cp.parse_partition_metadata)


def _epochs(part: PartitionReport, full: str) -> list[leader_epochs.EpochEntry] | None:
    return _parse(part, full, leader_epochs.FILE_NAME, leader_epochs.parse)


def _partition_file(part: PartitionReport, full: str, name: str, cleaned_from: int | None) -> None:
    what = _leftover(name, cleaned_from)
    if what is not None:
        part.problems.append(f"leftover: {full}: {what}")
    elif name not in PARTITION_FILES and not name.endswith(PARTITION_SUFFIXES):
        part.problems.append(f"unknown file: {full}: not a file Kafka writes")
    elif name.endswith(SEGMENT_SUFFIXES) and files.base_offset_from_name(name) is None:
        part.problems.append(f"unknown file: {full}: a segment file whose name carries no base offset")


def _offsets_from_checkpoints(report: LogDirReport, part: PartitionReport, tp: tuple[str, int], log: Partition) -> None:
    """The partition's entries in the log directory's checkpoints; a directory missing from the high
    watermark and recovery point checkpoints of a broker that shut down cleanly is a problem (both list
    every partition of the directory: ``ReplicaManager.checkpointHighWatermarks``,
    ``LogManager.checkpointRecoveryOffsetsInDir``).  ``log-start-offset-checkpoint`` lists only logs whose
    start is past their first segment's base offset (``LogManager.checkpointLogStartOffsetsInDir``), so a
    file without an entry means the first segment's base offset."""

    part.unread = list(report.unread)
    part.high_watermark = _entry(report, cp.HIGH_WATERMARK, tp)
    part.recovery_point = _entry(report, cp.RECOVERY_POINT, tp)
    part.cleaner = _entry(report, cp.CLEANER, tp)
    part.log_start = _entry(report, cp.LOG_START, tp)
    if part.log_start is None and report.offsets.get(cp.LOG_START) is not None and log.segments:
        part.log_start = log.segments[0].base_offset
    if not report.clean_shutdown or tp[0] == METADATA_TOPIC:
        return
    for name in (cp.HIGH_WATERMARK, cp.RECOVERY_POINT):
        table = report.offsets.get(name)
        if table is not None and tp not in table:
            part.problems.append(
                f"missing from {name}: the broker shut down cleanly (.kafka_cleanshutdown) but its "
                f"checkpoint has no entry for {tp[0]} {tp[1]}"
            )


def _entry(report: LogDirReport, name: str, tp: tuple[str, int]) -> int | None:
    """The partition's offset in the log directory's checkpoint ``name`` (None: no file, no entry)."""
    table = report.offsets.get(name)
    found = table.get(tp) if table else None
    return None if found is None else found.offset


ENTRIES_SHOWN = 100  # entries without a directory named one a line, per checkpoint; the rest counted


def _entries_without_directory(report: LogDirReport) -> None:
    """Checkpoint entries naming a partition with no directory here (``LogManager`` would never write one):
    the first :data:`ENTRIES_SHOWN` of each file, then how many more (a file of 65536 such entries is one
    cause, not 65536 lines held and printed)."""
    present = {tp for p in report.partitions if (tp := cp.topic_partition(p.name)) is not None}
    for name in report.checkpoints:
        table = report.offsets.get(name) or {}
        path = location.join(report.path, name)
        missing = [tp for tp in table if tp not in present]
        for tp in sorted(missing)[:ENTRIES_SHOWN]:
            e = table[tp]
            report.problems.append(
                f"entry without a directory: {path}: line {e.line}: "
                f"{tp[0]} {tp[1]} {e.offset}, but there is no directory {tp[0]}-{tp[1]}"
            )
        if len(missing) > ENTRIES_SHOWN:
            report.problems.append(
                f"entry without a directory: {path}: {len(missing) - ENTRIES_SHOWN} more entries name partitions "
                "with no directory here"
            )


def topic_id_problems(reports: list[LogDirReport]) -> None:
    """A partition whose replicas (the same name in several log directories) carry different topic IDs: the
    topic was deleted and recreated under one of them ("Topic Id in memory does not match")."""
    by_name: dict[str, list[PartitionReport]] = {}
    for report in reports:
        for part in report.partitions:
            if part.topic_id is not None:
                by_name.setdefault(part.name, []).append(part)
    for parts in by_name.values():
        ids = sorted({p.topic_id for p in parts if p.topic_id is not None})
        if len(ids) > 1:
            where = ", ".join(f"{p.topic_id} in {p.log_dir}" for p in parts)
            for p in parts:
                p.problems.append(f"topic ID differs between replicas: {where}")
