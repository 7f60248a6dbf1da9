"""The offset checkpoints of a log directory, read offline, and a partition's entry in them (its log start
offset as Kafka's load takes it), with the frame of Kafka's ``CheckpointFile`` they share with
``leader-epoch-checkpoint`` (:func:`read_frame`, read once for both: :mod:`kseg.storage.leader_epochs` hands
it its entry parser and its texts): apart from :mod:`kseg.storage.checkpoints` (the other files of a log
directory, which re-exports these names) so that a lookup loads no reader of JSON, properties or UUIDs.

Offset checkpoints (``CheckpointFile`` with ``OffsetCheckpointFile.Formatter``; ``LogManager`` writes
``recovery-point-offset-checkpoint`` and ``log-start-offset-checkpoint``, ``ReplicaManager``
``replication-offset-checkpoint`` (high watermarks), ``LogCleanerManager`` ``cleaner-offset-checkpoint``)::

    0                         version (OffsetCheckpointFile.CURRENT_VERSION)
    N                         entry count
    <topic> <partition> <offset>   N lines, separated by whitespace

``CheckpointReadBuffer.read``: no first line is an empty checkpoint, a version other than 0 is an
``IOException``, no second line is an empty checkpoint, an entry that is not three fields of a topic, an
``int`` and a ``long`` is "Malformed line in checkpoint file", and a count other than N is "Expected [N]
entries in checkpoint file, but found only [M]".  Lines end as ``BufferedReader.readLine`` ends them
(``\\n``, ``\\r`` or ``\\r\\n``); ``Integer.parseInt``/``Long.parseLong`` take an optional sign and ASCII
digits, nothing else.  A later entry of the same partition replaces an earlier one (Kafka reads them into a map).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import NamedTuple, TypeVar, Union

from kseg.errors import CheckpointError, InputError, KsegError
from kseg.format import java_numbers
from kseg.limits import INT32_MAX, INT64_MAX, INT64_MIN
from kseg.storage import files, location
from kseg.storage.context import Store
from kseg.storage.names import LOG_START, topic_partition
from kseg.storage.read import AuxFile, Kind, lines_of_text
from kseg.storage.tiered_names import aiven_key
from kseg.valueclass import FrozenValue

VERSION = 0  # OffsetCheckpointFile.CURRENT_VERSION, PartitionMetadataFile.CURRENT_VERSION
INT32_MIN = java_numbers.INT32_MIN
#: The entries kseg holds of an offset checkpoint (a partition of the log directory a line): Kafka reads any
#: count it is told (``new ArrayList<>(expectedSize)``), kseg a count far above any broker's log directory.
MAX_OFFSET_ENTRIES = 1 << 16
#: Kafka writes ``<topic> <partition> <offset>``: a topic name is at most 249 characters, an int 11, a long 20.
MAX_OFFSET_LINE = 249 + 1 + 11 + 1 + 20
OFFSETS = Kind(
    "offset checkpoint",
    16 + MAX_OFFSET_ENTRIES * (MAX_OFFSET_LINE + 2),
    f"{MAX_OFFSET_ENTRIES} partitions, a line each, each line at most {MAX_OFFSET_LINE} bytes as Kafka writes it",
)
#: The entries kseg holds of a ``leader-epoch-checkpoint``: Kafka reads any count it is told, and keeps an entry
#: per leader election of the log it still has (``truncateFromStart`` drops older ones); kseg holds 65536.
MAX_EPOCH_ENTRIES = 1 << 16
MAX_EPOCH_LINE = 11 + 1 + 20  # "<epoch> <startOffset>" as Kafka writes it: an int and a long
LEADER_EPOCHS = Kind(
    "leader-epoch-checkpoint",
    16 + MAX_EPOCH_ENTRIES * (MAX_EPOCH_LINE + 2),
    f"{MAX_EPOCH_ENTRIES} leader epochs, a line each, each line at most {MAX_EPOCH_LINE} bytes as Kafka writes it",
)
#: A file's text: in memory (a test, a caller that has it) or a file to read a line at a time.
Text = Union[str, AuxFile]


# OffsetCheckpointFile's WHITESPACES_PATTERN, Java's "\\s+": ASCII blanks only (Python's \s would also split
# at a no-break space or U+001C..U+001F, where Kafka sees one token and a malformed line)
@lru_cache(maxsize=None)  # (compiled for a checkpoint's lines only)
def _blanks() -> re.Pattern[str]:
    return re.compile(r"[ \t\n\x0b\f\r]+")


class OffsetEntry(NamedTuple):
    """One line of an offset checkpoint: a topic partition and its offset, and the line it is on."""

    topic: str
    partition: int
    offset: int
    line: int


def lines_of(text: Text) -> Iterator[str]:
    """The lines as ``BufferedReader.readLine`` returns them (a last line without an end is a line), read
    from the file a piece at a time (:meth:`kseg.storage.read.AuxFile.lines`)."""
    return lines_of_text(text) if isinstance(text, str) else text.lines()


def too_many(path: str, kind: Kind, declared: int, bound: int) -> InputError:
    """The refusal of a checkpoint declaring more entries (line 2) than kseg holds of its kind."""
    return kind.refusal(path, f"{declared} entries declared on line 2", f"{bound} entries")


def java_split(line: str, pattern: re.Pattern[str] | None = None) -> list[str]:
    """``Pattern.compile("\\s+").split(line)`` (or another ``pattern``'s) as Java does it: at runs of Java's
    (ASCII) blanks, the trailing empty strings removed (``"a 0 5 "`` is three tokens), a leading one kept
    (``" a 0 5"`` is four), and a line with no blank is one token."""
    if pattern is None and line.isprintable() and "  " not in line:
        # the usual line: its only blanks single spaces (tab, LF, VT, FF and CR are not printable), where
        # str.split gives the pattern's pieces at a fraction of its cost (a checkpoint of 65536 lines: ~2 s)
        if " " not in line:
            return [line]
        parts = line.split(" ")
    else:
        pattern = _blanks() if pattern is None else pattern
        if not pattern.search(line):
            return [line]
        parts = pattern.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_int(text: str, low: int = INT32_MIN, high: int = INT32_MAX) -> int | None:
    """``text`` as ``Integer.parseInt`` (or, with the ``long`` range, ``Long.parseLong``) reads it, or None
    (:func:`kseg.format.java_numbers.parse_int`, the one rule)."""
    return java_numbers.parse_int(text, low, high)


E = TypeVar("E")


class Frame(FrozenValue):
    """One kind of ``CheckpointFile`` (its ``Formatter``'s version, the file :class:`Kind` and the entries kseg
    holds of it) and how it says a frame is wrong, each text made for the file's path: a version or count line
    that is no ``int`` (``malformed``: the line's number and the line), a version other than ``version``
    (``unknown_version``), a count the entries do not match (``miscount``: expected, found, the last line's
    number)."""

    _fields = ("version", "kind", "max_entries", "malformed", "unknown_version", "miscount")
    version: int
    kind: Kind
    max_entries: int
    malformed: Callable[[str, int, str], KsegError]
    unknown_version: Callable[[str, int], KsegError]
    miscount: Callable[[str, int, int, int], KsegError]

    def __init__(
        self,
        version: int,
        kind: Kind,
        max_entries: int,
        malformed: Callable[[str, int, str], KsegError],
        unknown_version: Callable[[str, int], KsegError],
        miscount: Callable[[str, int, int, int], KsegError],
    ) -> None:
        self._set(
            version=version,
            kind=kind,
            max_entries=max_entries,
            malformed=malformed,
            unknown_version=unknown_version,
            miscount=miscount,
        )


def read_frame(text: Text, path: str, frame: Frame, entry: Callable[[int, str], E]) -> Iterator[E]:
    """The entries of a ``CheckpointFile`` (``CheckpointReadBuffer.read``) in file order, a line at a time,
    each line past the first two made an entry by ``entry`` (the line's number and the line; it raises at a
    malformed one): no first line, or no second, is no entry; a version or count line that is no ``int`` or a
    version other than the frame's raises; a count above ``frame.max_entries`` is refused before any entry is
    read; no more entries than the count are given (the lines past it are read, and parsed, to count them),
    and a count that differs raises after the last entry."""
    lines = enumerate(lines_of(text), start=1)
    first = next(lines, None)
    if first is None:
        return
    version = java_int(first[1])
    if version is None:
        raise frame.malformed(path, 1, first[1])
    if version != frame.version:
        raise frame.unknown_version(path, version)
    second = next(lines, None)
    if second is None:
        return
    expected = java_int(second[1])
    if expected is None:
        raise frame.malformed(path, 2, second[1])
    if expected > frame.max_entries:
        raise too_many(path, frame.kind, expected, frame.max_entries)
    n = 2
    for n, line in lines:
        item = entry(n, line)
        if n - 2 <= expected:
            yield item
    if n - 2 != expected:
        raise frame.miscount(path, expected, n - 2, n)


def _malformed(path: str, n: int, line: str) -> CheckpointError:
    return CheckpointError(f"line {n}: Malformed line in checkpoint file: {line!r}", path=path)


def _unknown_version(path: str, version: int) -> CheckpointError:
    return CheckpointError(f"line 1: Unrecognised version: {version}, expecting: {VERSION}", path=path)


def _miscount(path: str, expected: int, found: int, last: int) -> CheckpointError:
    return CheckpointError(
        f"Expected [{expected}] entries in checkpoint file, but found only [{found}] (lines 3 to {last})", path=path
    )


#: Offset checkpoints' frame, in Kafka's texts (``CheckpointReadBuffer``'s, with the line kseg adds).
OFFSET_FRAME = Frame(VERSION, OFFSETS, MAX_OFFSET_ENTRIES, _malformed, _unknown_version, _miscount)


def parse_offsets(text: Text, path: str) -> dict[tuple[str, int], OffsetEntry]:
    """An offset checkpoint's entries by (topic, partition) (``CheckpointReadBuffer.read``, module docstring):
    :func:`iter_offsets`, a later entry of a partition replacing an earlier one."""
    return {(e.topic, e.partition): e for e in iter_offsets(text, path)}


def iter_offsets(text: Text, path: str) -> Iterator[OffsetEntry]:
    """An offset checkpoint's entries in file order, read a line at a time: a count on line 2 above
    :data:`MAX_OFFSET_ENTRIES` is refused before any entry is read, no more entries than the count are given
    (the lines past it are read to count them), and a count that differs raises after the last entry
    (:func:`read_frame`, :data:`OFFSET_FRAME`)."""

    def entry(n: int, line: str) -> OffsetEntry:  # OffsetCheckpointFile.Formatter.fromString
        parts = java_split(line)
        if len(parts) != 3:
            raise _malformed(path, n, line)
        partition, offset = java_int(parts[1]), java_int(parts[2], INT64_MIN, INT64_MAX)
        if partition is None or offset is None:
            raise _malformed(path, n, line)
        # one string a topic, however many of its partitions are listed (an interned string lives as long as
        # an entry holds it: a line past the count keeps nothing)
        return OffsetEntry(sys.intern(parts[0]), partition, offset, n)

    return read_frame(text, path, OFFSET_FRAME, entry)


def open_aux(path: str, kind: Kind, store: Store) -> AuxFile:
    """The file at ``path`` (local, on a store, or inside a tiered segment) for the bounded reader
    (:mod:`kseg.storage.read`), to be read once: a local file that is no regular file is refused here,
    without being opened; an unreadable one raises :class:`InputError` (the OS's reason)."""
    if aiven_key(path) is None and os.path.lexists(path):  # a file on this machine, read as it is
        return AuxFile.local(path, kind, files.display(path, store))
    f = files.open_readonly(path, store=store)
    try:
        size = files.size_of(f)
    except BaseException:
        f.close()
        raise
    return AuxFile(lambda: f, files.display(path, store), size, kind)


def _open_offsets(log_dir: str, name: str, store: Store) -> AuxFile | None:
    """The offset checkpoint ``log_dir/name`` for the bounded reader, or None when there is no such file (an
    unreadable one raises :class:`kseg.errors.InputError`, the OS's reason)."""
    path = location.join(log_dir, name)
    if not files.exists(path, store):
        return None
    return open_aux(path, OFFSETS, store)


class Checkpointed(FrozenValue):
    """A partition's entry in one offset checkpoint of its log directory (the partition directory's parent):
    ``value`` the offset the file holds for it, None when the file is absent, has no entry for it, or
    could not be read or parsed -- ``note`` then says which (never a guess, never a problem: a healthy
    directory from an old Kafka, or a partition directory copied on its own, has no such file)."""

    _fields = ("name", "file", "present", "value", "note", "parsed")
    name: str  # the checkpoint's file name
    file: str  # where it was looked for (display path)
    present: bool  # the file exists
    value: int | None
    note: str | None
    parsed: bool  # the file was read and parsed (so no value means: no entry for the partition)

    def __init__(
        self, name: str, file: str, present: bool, value: int | None, note: str | None = None, parsed: bool = False
    ) -> None:
        self._set(name=name, file=file, present=present, value=value, note=note, parsed=parsed)


MAX_TABLES = 8  # checkpoints held at once (each up to MAX_OFFSET_ENTRIES offsets)


def file_version(directory: str, name: str, store: Store) -> object:
    """What tells one state of a local file from another (its stat), so a file rewritten between two reads
    in one process is read again; None for an object store's (a command reads it once)."""
    if store.remote:
        return None
    try:
        st = os.stat(os.path.join(store.names.canonical(directory), name))
    except OSError:
        return "absent"
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _table(log_dir: str, name: str, store: Store) -> tuple[bool, dict[tuple[str, int], int] | None, str | None]:
    """(present, offsets by partition or None, why not) of ``log_dir/name``, read once per run (a fleet's
    partitions share their log directory's checkpoints), a line at a time, only the offsets held."""
    return _read_table(store.names.canonical(log_dir), log_dir, name, file_version(log_dir, name, store), store)


@lru_cache(maxsize=MAX_TABLES)
def _read_table(
    where: str, log_dir: str, name: str, version: object, store: Store
) -> tuple[bool, dict[tuple[str, int], int] | None, str | None]:
    """:func:`_table` of one state of the file (``version``, :func:`file_version`), read once per process
    (``where``, the log directory's absolute path, with ``name``, ``version`` and the ``store`` read: the
    cache's key)."""
    path = files.display(location.join(log_dir, name), store)
    try:
        text = _open_offsets(log_dir, name, store)
        offsets = None if text is None else {(e.topic, e.partition): e.offset for e in iter_offsets(text, path)}
    except KsegError as exc:  # unreadable (the OS's reason), over its bound or malformed: not used, and said so
        return (True, None, f"{exc.describe()}: not used")
    return (False, None, None) if offsets is None else (True, offsets, None)


def partition_entry(partition_path: str, name: str, store: Store) -> Checkpointed:
    """The entry for the partition directory ``partition_path`` (of ``store``) in its log directory's checkpoint
    ``name``."""
    if store.remote:
        log_dir, dir_name = location.dirname(partition_path), location.basename(partition_path)
    else:  # the log directory in the form the partition's path was given (outputs show it so), absolute where
        # that form has none to show (``orders-0``'s is the working directory, ``.``'s its parent)
        full = os.path.normpath(partition_path)
        log_dir, dir_name = os.path.dirname(full) or os.curdir, os.path.basename(os.path.abspath(full))
        if log_dir == os.curdir or os.path.basename(full) in (os.curdir, os.pardir):
            log_dir = os.path.dirname(os.path.abspath(full))
    path = files.display(location.join(log_dir, name), store)
    tp = topic_partition(dir_name)
    if tp is None:
        return Checkpointed(name, path, False, None, f"{dir_name} is not <topic>-<partition>: {name} not read")
    present, table, why = _table(log_dir, name, store)
    if not present:
        return Checkpointed(name, path, False, None, f"no {name} in {files.display(log_dir, store)}")
    if table is None:
        return Checkpointed(name, path, True, None, why)
    offset = table.get(tp)
    if offset is None:
        return Checkpointed(name, path, True, None, f"{path} has no entry for {tp[0]} {tp[1]}", parsed=True)
    return Checkpointed(name, path, True, offset, parsed=True)


class LogStart(FrozenValue):
    """A partition's log start offset as Kafka's load takes it, and where it came from."""

    _fields = ("offset", "file", "note")
    offset: int
    file: str | None  # the checkpoint it was taken from; None: the first segment's base offset
    note: str | None  # why the first segment's base offset was taken (None when the file gave it)

    def __init__(self, offset: int, file: str | None, note: str | None) -> None:
        self._set(offset=offset, file=file, note=note)


def log_start_offset(partition_path: str, first_base: int, store: Store) -> LogStart:
    """``LogLoader``: the larger of the partition's ``log-start-offset-checkpoint`` entry and the first
    segment's base offset (a checkpoint written before retention deleted segments lags).  A file without
    an entry means the first segment's base offset: ``LogManager.checkpointLogStartOffsetsInDir`` writes
    only log starts past it.  Without the file (a copied partition, an old broker) the first segment's
    base offset stands in, and the note says so."""
    entry = partition_entry(partition_path, LOG_START, store)
    if entry.value is None:
        return LogStart(first_base, None, f"{entry.note}: the first segment's base offset {first_base} taken")
    if entry.value < first_base:
        return LogStart(
            first_base,
            None,
            f"log start offset {entry.value} in {entry.file} is below the first segment's base offset "
            f"{first_base}: {first_base} taken, as Kafka's load takes it (LogLoader)",
        )
    return LogStart(entry.value, entry.file, None)
