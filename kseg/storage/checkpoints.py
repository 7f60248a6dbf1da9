"""A broker's checkpoint and metadata files, read offline: the other half of a log directory.

Each reader takes the file's text and returns its values, or raises :class:`CheckpointError` naming the
file, the line (1-based) and what was expected and found -- Kafka's words where it has them.

Offset checkpoints (``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
``replication-offset-checkpoint``, ``cleaner-offset-checkpoint``): :mod:`kseg.storage.offset_checkpoints`
(the lookups read only those), whose names this module re-exports.

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
import re
from dataclasses import dataclass
from itertools import islice
from types import MappingProxyType

from kseg.errors import CheckpointError
from kseg.format.uuid import parse_uuid
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
from kseg.storage.offset_checkpoints import (
    INT32_MIN,
    LEADER_EPOCHS,
    MAX_EPOCH_ENTRIES,
    MAX_EPOCH_LINE,
    MAX_OFFSET_ENTRIES,
    MAX_OFFSET_LINE,
    MAX_TABLES,
    OFFSETS,
    VERSION,
    Checkpointed,
    LogStart,
    OffsetEntry,
    Text,
    file_version,
    iter_offsets,
    java_int,
    java_split,
    lines_of,
    log_start_offset,
    open_aux,
    parse_offsets,
    partition_entry,
    too_many,
)
from kseg.storage.read import AuxFile, Kind

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
    # the offset checkpoints (kseg.storage.offset_checkpoints), for this module's users
    "LEADER_EPOCHS",
    "MAX_EPOCH_ENTRIES",
    "MAX_EPOCH_LINE",
    "INT32_MIN",
    "MAX_OFFSET_ENTRIES",
    "MAX_OFFSET_LINE",
    "MAX_TABLES",
    "OFFSETS",
    "VERSION",
    "Checkpointed",
    "LogStart",
    "OffsetEntry",
    "Text",
    "file_version",
    "iter_offsets",
    "java_int",
    "java_split",
    "lines_of",
    "log_start_offset",
    "open_aux",
    "parse_offsets",
    "partition_entry",
    "too_many",
]
PARTITION_METADATA = "partition.metadata"
QUORUM_STATE = "quorum-state"
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
# PartitionMetadataReadBuffer's WHITE_SPACES_PATTERN, Java's ":\\s+": a colon and ASCII blanks (a no-break
# space or an em space after the colon is no separator to Kafka: the line is one token, malformed)
_METADATA_SEP = re.compile(r":[ \t\n\x0b\f\r]+")


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
