"""A broker's checkpoint and metadata files, read offline: the other half of a log directory.

Each reader takes the file's text and returns its values, or raises :class:`CheckpointError` naming the
file, the line (1-based) and what was expected and found -- Kafka's words where it has them.

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

``partition.metadata`` (``PartitionMetadataFile``, Kafka 2.8+): ``version: 0`` and ``topic_id: <Uuid>``
(``Uuid.toString``: 16 bytes in URL-safe base64 without padding, 22 characters; the zero UUID is invalid),
read by ``PartitionMetadataReadBuffer.read``'s grammar (:func:`parse_partition_metadata`).

``meta.properties`` (``MetaProperties``, a ``java.util.Properties`` file): ``version`` 0 (ZooKeeper:
``broker.id``) or 1 (KRaft: ``node.id``), ``cluster.id``, and since 3.7 ``directory.id``.

``.kafka_cleanshutdown`` (``LogManager``; ``CleanShutdownFileHandler`` since 3.7): present after a clean
shutdown; empty before 3.7, ``{"version":0,"brokerEpoch":N}`` since.

``quorum-state`` (KRaft, ``FileQuorumStateStore``: ``QuorumStateData`` as JSON with ``data_version``):
in the metadata log's directory (``__cluster_metadata-0``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from types import MappingProxyType
from typing import NamedTuple, Union

from kseg.errors import CheckpointError, InputError, KsegError
from kseg.format import java_numbers
from kseg.format.uuid import parse_uuid
from kseg.limits import INT32_MAX, INT64_MAX, INT64_MIN
from kseg.storage import files, location
from kseg.storage.context import Store
from kseg.storage.names import (
    CLEAN_SHUTDOWN,
    CLEANER,
    HIGH_WATERMARK,
    LOG_DIR_FILES,
    LOG_DIR_MARKERS,
    LOG_START,
    META_PROPERTIES,
    OFFSET_CHECKPOINTS,
    RECOVERY_POINT,
    topic_partition,
)
from kseg.storage.read import AuxFile, Kind, lines_of_text
from kseg.storage.tiered_names import aiven_key

__all__ = [  # the files' names (kseg.storage.names), for the readers of their contents
    "RECOVERY_POINT",
    "LOG_START",
    "HIGH_WATERMARK",
    "CLEANER",
    "OFFSET_CHECKPOINTS",
    "META_PROPERTIES",
    "CLEAN_SHUTDOWN",
    "LOG_DIR_FILES",
    "LOG_DIR_MARKERS",
    "topic_partition",
]
PARTITION_METADATA = "partition.metadata"
QUORUM_STATE = "quorum-state"
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
META = Kind("meta.properties", 64 << 10, "Kafka writes a few lines: version, node, cluster and directory IDs")
#: ``PartitionMetadataReadBuffer.read`` reads two lines and nothing after them: neither does kseg.
PARTITION_METADATA_KIND = Kind(
    "partition.metadata",
    1 << 62,
    "Kafka writes 'version: 0' and 'topic_id: ' with 22 characters, and reads only those two lines",
    max_line=4096,
)
CLEAN_SHUTDOWN_KIND = Kind(".kafka_cleanshutdown", 64 << 10, 'Kafka writes {"version":0,"brokerEpoch":N} or nothing')
QUORUM_STATE_KIND = Kind("quorum-state", 1 << 20, "QuorumStateData: the leader, the epoch and the voters, as JSON")
#: The entries kseg holds of a ``leader-epoch-checkpoint``: Kafka reads any count it is told, and keeps an entry
#: per leader election of the log it still has (``truncateFromStart`` drops older ones); kseg holds 65536.
MAX_EPOCH_ENTRIES = 1 << 16
MAX_EPOCH_LINE = 11 + 1 + 20  # "<epoch> <startOffset>" as Kafka writes it: an int and a long
LEADER_EPOCHS = Kind(
    "leader-epoch-checkpoint",
    16 + MAX_EPOCH_ENTRIES * (MAX_EPOCH_LINE + 2),
    f"{MAX_EPOCH_ENTRIES} leader epochs, a line each, each line at most {MAX_EPOCH_LINE} bytes as Kafka writes it",
)
#: The kind of each file a log directory or partition directory holds (the reader's bounds).
KINDS = MappingProxyType(
    {
        LEADER_EPOCHS.name: LEADER_EPOCHS,
        **dict.fromkeys((HIGH_WATERMARK, RECOVERY_POINT, LOG_START, CLEANER), OFFSETS),
        META_PROPERTIES: META,
        PARTITION_METADATA: PARTITION_METADATA_KIND,
        CLEAN_SHUTDOWN: CLEAN_SHUTDOWN_KIND,
        QUORUM_STATE: QUORUM_STATE_KIND,
    }
)
#: A file's text: in memory (a test, a caller that has it) or a file to read a line at a time.
Text = Union[str, AuxFile]
# OffsetCheckpointFile's WHITESPACES_PATTERN, Java's "\\s+": ASCII blanks only (Python's \s would also split
# at a no-break space or U+001C..U+001F, where Kafka sees one token and a malformed line)
_WS = re.compile(r"[ \t\n\x0b\f\r]+")
# PartitionMetadataReadBuffer's WHITE_SPACES_PATTERN, Java's ":\\s+": a colon and ASCII blanks (a no-break
# space or an em space after the colon is no separator to Kafka: the line is one token, malformed)
_METADATA_SEP = re.compile(r":[ \t\n\x0b\f\r]+")


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


def first_lines(text: Text, n: int) -> list[str]:
    """The first ``n`` lines (fewer when the file has fewer); nothing after them is read."""
    lines = lines_of(text)
    try:
        return list(islice(lines, n))
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            close()


def whole_text(text: Text) -> str:
    """The whole text of a file parsed whole (JSON), read up to its kind's bound."""
    if isinstance(text, str):
        return text
    data = text.data()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointError("not UTF-8 text", path=text.name, position=exc.start) from None


def too_many(path: str, kind: Kind, declared: int, bound: int) -> InputError:
    """The refusal of a checkpoint declaring more entries (line 2) than kseg holds of its kind."""
    return kind.refusal(path, f"{declared} entries declared on line 2", f"{bound} entries")


def java_split(line: str, pattern: re.Pattern[str] = _WS) -> list[str]:
    """``Pattern.compile("\\s+").split(line)`` (or another ``pattern``'s) as Java does it: at runs of Java's
    (ASCII) blanks, the trailing empty strings removed (``"a 0 5 "`` is three tokens), a leading one kept
    (``" a 0 5"`` is four), and a line with no blank is one token."""
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


def _malformed(path: str, n: int, line: str) -> CheckpointError:
    return CheckpointError(f"line {n}: Malformed line in checkpoint file: {line!r}", path=path)


def parse_offsets(text: Text, path: str) -> dict[tuple[str, int], OffsetEntry]:
    """An offset checkpoint's entries by (topic, partition) (``CheckpointReadBuffer.read``, module docstring):
    :func:`iter_offsets`, a later entry of a partition replacing an earlier one."""
    return {(e.topic, e.partition): e for e in iter_offsets(text, path)}


def iter_offsets(text: Text, path: str) -> Iterator[OffsetEntry]:
    """An offset checkpoint's entries in file order, read a line at a time: a count on line 2 above
    :data:`MAX_OFFSET_ENTRIES` is refused before any entry is read, no more entries than the count are given
    (the lines past it are read to count them), and a count that differs raises after the last entry."""
    lines = enumerate(lines_of(text), start=1)
    first = next(lines, None)
    if first is None:
        return
    version = java_int(first[1])
    if version is None:
        raise _malformed(path, 1, first[1])
    if version != VERSION:
        raise CheckpointError(f"line 1: Unrecognised version: {version}, expecting: {VERSION}", path=path)
    second = next(lines, None)
    if second is None:
        return
    expected = java_int(second[1])
    if expected is None:
        raise _malformed(path, 2, second[1])
    if expected > MAX_OFFSET_ENTRIES:
        raise too_many(path, OFFSETS, expected, MAX_OFFSET_ENTRIES)
    topics: dict[str, str] = {}  # one string a topic, however many of its partitions are listed
    n = 2
    for n, line in lines:
        parts = java_split(line)
        if len(parts) != 3:
            raise _malformed(path, n, line)
        partition, offset = java_int(parts[1]), java_int(parts[2], INT64_MIN, INT64_MAX)
        if partition is None or offset is None:
            raise _malformed(path, n, line)
        if n - 2 <= expected:
            topic = topics.setdefault(parts[0], parts[0])
            yield OffsetEntry(topic, partition, offset, n)
    found = n - 2
    if found != expected:
        raise CheckpointError(
            f"Expected [{expected}] entries in checkpoint file, but found only [{found}] (lines 3 to {n})",
            path=path,
        )


def parse_partition_metadata(text: Text, path: str) -> str:
    """The topic ID of a ``partition.metadata`` as ``PartitionMetadataReadBuffer.read`` takes it: each of its
    first two lines split at ``:\\s+`` (ASCII blanks, Java's split) into exactly two parts, whatever the
    first part says; the version ``Integer.parseInt`` and at least 0 (a later one is read, for downgrades);
    the topic ID ``Uuid.fromString`` (at most 24 characters of URL-safe base64 decoding to 16 bytes),
    never the zero UUID.  Lines after the second are not read."""
    lines = first_lines(text, 2)
    values = []
    for n, expected in ((1, "version: 0"), (2, "topic_id: <22 characters of URL-safe base64>")):
        if len(lines) < n:
            raise CheckpointError(f"line {n}: no line: expected {expected!r}", path=path)
        parts = java_split(lines[n - 1], _METADATA_SEP)
        if len(parts) != 2:
            raise CheckpointError(
                f"line {n}: Malformed line in checkpoint file: {lines[n - 1]!r} (PartitionMetadataReadBuffer "
                f"expects {expected!r}: two parts split at ':' and ASCII whitespace)",
                path=path,
            )
        values.append(parts[1])
        if n == 1:
            version = java_int(parts[1])
            if version is None:
                raise CheckpointError(f"line 1: Malformed line in checkpoint file: {lines[0]!r}", path=path)
            if version < VERSION:
                raise CheckpointError(f"line 1: Unrecognized version of partition metadata file: {version}", path=path)
    topic_id = values[1][:-2] if len(values[1]) == 24 and values[1].endswith("==") else values[1]
    raw = parse_uuid(topic_id)
    if raw is None:
        raise CheckpointError(f"line 2: not a topic ID (22 characters of URL-safe base64): {values[1]!r}", path=path)
    if raw == bytes(16):
        raise CheckpointError("line 2: Invalid topic ID in partition metadata file (the zero UUID)", path=path)
    return topic_id


@dataclass(frozen=True)
class MetaProperties:
    """``meta.properties``: the cluster, the node (``node.id``, or ``broker.id`` of version 0) and the directory."""

    version: int
    cluster_id: str | None
    node_id: int | None
    directory_id: str | None


def _unescape(text: str) -> str:
    """``Properties.load``'s backslash escapes (``\\:`` ``\\=`` ``\\t`` ``\\uXXXX``...)."""
    simple = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}

    def one(m: re.Match[str]) -> str:
        c = m.group(1)
        if c.startswith("u") and len(c) == 5:
            return chr(int(c[1:], 16))
        return simple.get(c, c)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", one, text)


def parse_properties(text: Text) -> dict[str, tuple[str, int]]:
    """A ``java.util.Properties`` file's keys -> (value, line); comments (``#``, ``!``) and blank lines
    skipped; the key ends at the first unescaped ``=``, ``:`` or whitespace (continuation lines are not
    used by Kafka's writer and are not joined)."""
    found: dict[str, tuple[str, int]] = {}
    for n, raw in enumerate(lines_of(text), start=1):
        line = raw.lstrip(" \t\f")
        if not line or line[0] in "#!":
            continue
        m = re.match(r"((?:\\.|[^=:\s\\])*)\s*[=:]?\s*(.*)\Z", line)
        if m is None:  # pragma: no cover - the pattern matches any line
            continue
        found[_unescape(m.group(1))] = (_unescape(m.group(2)), n)
    return found


def parse_meta_properties(text: Text, path: str) -> MetaProperties:
    """``MetaProperties`` from a ``meta.properties``: version 0 needs ``broker.id``, 1 ``node.id``
    ("Failed to find ..." in Kafka's words)."""
    props = parse_properties(text)
    if "version" not in props:
        raise CheckpointError("Failed to find the 'version' property", path=path)
    value, n = props["version"]
    version = java_int(value)
    if version not in (0, 1):
        raise CheckpointError(f"line {n}: unknown version {value!r}, expected 0 or 1", path=path)
    id_key = "broker.id" if version == 0 else "node.id"
    node_id = None
    if id_key in props:
        node_id = java_int(props[id_key][0])
        if node_id is None:
            raise CheckpointError(f"line {props[id_key][1]}: {id_key} is not an int: {props[id_key][0]!r}", path=path)
    elif version == 1:
        raise CheckpointError("Failed to find the 'node.id' property", path=path)
    cluster = props.get("cluster.id")
    directory = props.get("directory.id")
    return MetaProperties(version, cluster[0] if cluster else None, node_id, directory[0] if directory else None)


def parse_clean_shutdown(source: Text, path: str) -> int | None:
    """The broker epoch of a ``.kafka_cleanshutdown`` (None for the empty file of Kafka before 3.7)."""
    text = whole_text(source)
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the interpreter's stack
        raise CheckpointError(f'expected {{"version":0,"brokerEpoch":N}}, found {text[:60]!r}', path=path) from None
    epoch = data.get("brokerEpoch") if isinstance(data, dict) else None
    if not isinstance(epoch, int) or isinstance(epoch, bool):
        raise CheckpointError(f'expected {{"version":0,"brokerEpoch":N}}, found {text[:60]!r}', path=path)
    return epoch


def parse_quorum_state(source: Text, path: str) -> dict[str, object]:
    """``QuorumStateData`` of a ``quorum-state`` (``FileQuorumStateStore``): a JSON object with
    ``data_version``, ``leaderEpoch`` and ``leaderId``."""
    text = whole_text(source)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CheckpointError(f"line {exc.lineno}: not JSON: {exc.msg}", path=path) from None
    except RecursionError:
        raise CheckpointError("not QuorumStateData: JSON nested deeper than any Kafka writes", path=path) from None
    if not isinstance(data, dict):
        raise CheckpointError("expected a JSON object (QuorumStateData)", path=path)
    for key in ("data_version", "leaderEpoch", "leaderId"):
        value = data.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise CheckpointError(f"expected an integer {key!r} (QuorumStateData), found {value!r}", path=path)
    return data


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


#: A file of another name read by :func:`read_text`: the bound the whole-file reads of kseg always had.
OTHER = Kind("checkpoint", 1 << 26, "a checkpoint of a million partitions is about 50 MB")


def open_text(directory: str, name: str, store: Store) -> AuxFile | None:
    """``directory/name`` for the bounded reader (its kind from :data:`KINDS`), or None when there is no such
    file.  Nothing is read yet: the parse functions read it, a line at a time.  A file that cannot be opened
    raises :class:`kseg.errors.InputError` (the OS's reason); text that is not UTF-8 is a
    :class:`CheckpointError` when it is read."""
    path = location.join(directory, name)
    if not files.exists(path, store):
        return None
    return open_aux(path, KINDS.get(name, OTHER), store)


def read_text(directory: str, name: str, store: Store) -> str | None:
    """The whole text of ``directory/name`` (:func:`open_text`, read now up to its kind's bound and at most
    :data:`OTHER`'s), or None when there is no such file; a parse function reads an :func:`open_text` file
    a line at a time instead."""
    aux = open_text(directory, name, store)
    if aux is None:
        return None
    if aux.kind.max_bytes > OTHER.max_bytes:
        aux = AuxFile(aux.opener, aux.name, aux.size, OTHER)
    return whole_text(aux)


@dataclass(frozen=True)
class Checkpointed:
    """A partition's entry in one offset checkpoint of its log directory (the partition directory's parent):
    ``value`` the offset the file holds for it, None when the file is absent, has no entry for it, or
    could not be read or parsed -- ``note`` then says which (never a guess, never a problem: a healthy
    directory from an old Kafka, or a partition directory copied on its own, has no such file)."""

    name: str  # the checkpoint's file name
    file: str  # where it was looked for (display path)
    present: bool  # the file exists
    value: int | None
    note: str | None = None
    parsed: bool = False  # the file was read and parsed (so no value means: no entry for the partition)


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
        text = open_text(log_dir, name, store)
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


@dataclass(frozen=True)
class LogStart:
    """A partition's log start offset as Kafka's load takes it, and where it came from."""

    offset: int
    file: str | None  # the checkpoint it was taken from; None: the first segment's base offset
    note: str | None  # why the first segment's base offset was taken (None when the file gave it)


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
