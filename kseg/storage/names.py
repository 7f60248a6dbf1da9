"""The names Kafka gives the files of a log directory, and what a name says (``LogFileUtils``,
``Snapshots``, ``UnifiedLog``): rules on strings, asked of no store.

Kafka names segment files by the base offset, 20 zero-padded digits, and a suffix: ``.log``, ``.index``,
``.timeindex``, ``.txnindex``, ``.snapshot``; KRaft snapshots are ``<endOffset 20 digits>-<epoch 10
digits>.checkpoint``.  kseg accepts any integer stem (``00000.log``), as Kafka's tool parses the part before
the first dot with ``Long.parseLong``.

Kafka's ``LocalTieredStorage`` (the file-system ``RemoteStorageManager`` of its tiered-storage tests,
``RemoteLogSegmentFileset``) names a copied segment's files ``<start offset, 20 digits>-<segment id>`` and a
suffix: ``.log``, ``.index``, ``.timeindex``, ``.txnindex`` (optional), ``.snapshot`` and
``.leader_epoch_checkpoint``; the segment id is a ``Uuid`` in its 22-character URL-safe base64 form (Kafka
matches the names as digits, ``-``, 22 characters of ``[a-zA-Z0-9_-]``, then the suffix).  The start offset
is the segment's base offset: :func:`base_offset_from_name` reads it from both forms.

A log directory's own files (``LogManager``: ``meta.properties``, the offset checkpoints,
``.kafka_cleanshutdown``) mark it as one; a partition directory is named ``<topic>-<partition>``
(:func:`topic_partition`).  Every storage module below discovery asks these rules here, never a store.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from kseg.format import java_numbers
from kseg.format.kafka_names import UUID
from kseg.limits import INT64_MAX, INT64_MIN

LOG, INDEX, TIME_INDEX, TXN_INDEX, SNAPSHOT, CHECKPOINT = (
    ".log",
    ".index",
    ".timeindex",
    ".txnindex",
    ".snapshot",
    ".checkpoint",
)
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"
#: A segment's files (``LogFileUtils``): a directory holding one is a partition directory.
SEGMENT_SUFFIXES = (LOG, INDEX, TIME_INDEX, TXN_INDEX)
#: A partition directory in transition (``UnifiedLog``'s ``-delete``, ``-future`` and ``-stray`` suffixes).
TRANSITION_DIR = re.compile(r".*-(delete|future|stray)\Z")
LEADER_EPOCH_CHECKPOINT = ".leader_epoch_checkpoint"  # a LocalTieredStorage segment's leader-epoch file
#: A partition directory's leader-epoch file (``LeaderEpochCheckpointFile``).
LEADER_EPOCHS_FILE = "leader-epoch-checkpoint"
#: The stem of a remote segment's object: ``<start offset>-<segment id>`` (``RemoteLogSegmentFileset``,
#: ``ObjectKeyFactory.mainPath``'s last part).
SEGMENT_STEM = re.compile(rf"([0-9]+)-({UUID})\Z")
_LONG = re.compile(r"[+-]?[0-9]+\Z")

RECOVERY_POINT = "recovery-point-offset-checkpoint"
LOG_START = "log-start-offset-checkpoint"
HIGH_WATERMARK = "replication-offset-checkpoint"
CLEANER = "cleaner-offset-checkpoint"
OFFSET_CHECKPOINTS = (HIGH_WATERMARK, RECOVERY_POINT, LOG_START, CLEANER)
META_PROPERTIES = "meta.properties"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
#: What a broker keeps in each of its log directories (``LogManager``: ``meta.properties`` and the offset
#: checkpoints): an empty log directory still holds them.
LOG_DIR_FILES = (META_PROPERTIES, *OFFSET_CHECKPOINTS)
#: A directory holding one of these is a log directory (``LogManager``'s own files: ``meta.properties``
#: from the first start, the offset checkpoints from the first flush, ``.kafka_cleanshutdown``).
LOG_DIR_MARKERS = (META_PROPERTIES, CLEAN_SHUTDOWN, *OFFSET_CHECKPOINTS)


def suffix(path: str) -> str:
    """The part of the file name from its last dot (Kafka's dispatch key); '' if none."""
    name = os.path.basename(path)
    dot = name.rfind(".")
    return name[dot:] if dot >= 0 else ""


def holds_segment(paths: Iterable[str]) -> bool:
    """True when one of ``paths`` is a segment's file (:data:`SEGMENT_SUFFIXES`, ``LogFileUtils``): the
    directory holding it is a partition directory."""
    return any(suffix(p) in SEGMENT_SUFFIXES for p in paths)


def stem(path: str) -> str:
    """The part of the file name before its first dot."""
    return os.path.basename(path).split(".")[0]


def tiered_segment_id(path: str) -> str | None:
    """The segment id (a ``Uuid``, base64) of a ``LocalTieredStorage`` name ``<offset>-<id>.<suffix>``;
    ``None`` for any other name."""
    m = SEGMENT_STEM.match(stem(path))
    return m.group(2) if m else None


def base_offset_from_name(path: str) -> int | None:
    """``Long.parseLong`` of the stem, or of its offset part in a ``LocalTieredStorage`` name
    (``<offset>-<segment id>``); ``None`` when the name carries no base offset."""
    s = stem(path)
    local_tiered = SEGMENT_STEM.match(s)
    if local_tiered:
        s = local_tiered.group(1)
    elif not _LONG.match(s):
        return None
    value = int(s)
    return value if INT64_MIN <= value <= INT64_MAX else None


def parse_checkpoint_name(path: str) -> tuple[int, int] | None:
    """``Snapshots.parse``: (end offset, epoch) of a KRaft snapshot name."""
    m = re.match(r"([0-9]{20})-([0-9]{10})\.checkpoint\Z", os.path.basename(path))  # (compiled when asked)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2))


def topic_partition(name: str) -> tuple[str, int] | None:
    """``<topic>-<partition>`` of a partition directory's name, or None: ``UnifiedLog.parseTopicPartitionName``
    (the topic before the last ``-``, not empty; the partition after it, ``Integer.parseInt``'s)."""
    topic, sep, number = name.rpartition("-")
    partition = java_numbers.parse_int(number) if sep and topic else None
    return None if partition is None else (topic, partition)
