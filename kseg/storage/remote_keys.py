"""The object keys two tiered-storage plugins give a remote log segment (KIP-405).

**Aiven's tiered-storage-for-apache-kafka** (``ObjectKeyFactory``, ``core/src/main/java/io/aiven/
kafka/tieredstorage/ObjectKeyFactory.java``): ``key()`` is ``prefix + mainPath + "." + suffix``, and
``mainPath`` is ``<topic>-<topicId>/<partition>/<start offset>-<segmentId>`` with the start offset
padded to 20 digits (``filenamePrefixFromOffset``: ``NumberFormat`` with ``setMinimumIntegerDigits(20)``,
no grouping) and both ids Kafka's ``Uuid.toString()`` (22 characters of URL-safe base64).  The prefix
is ``rsm.config.storage.key.prefix``, prepended as is (no separator is added: ``someprefix/`` in
Aiven's example); custom metadata may override the prefix (``object_prefix``) and the main path
(``object_key``).  Since commit 107d165 ("concat indexes in the same object", October 2023) the
suffixes are ``log``, ``indexes`` and ``rsm-manifest`` (``ObjectKeyFactory.Suffix``); before it
each index was its own object: ``index``, ``timeindex``, ``snapshot``, ``txnindex`` (only when the
segment has a transaction index) and ``leader-epoch-checkpoint``.

**Kafka's LocalTieredStorage** (the reference ``RemoteStorageManager`` of Kafka's tests,
``RemoteTopicPartitionDirectory`` and ``RemoteLogSegmentFileset`` in ``storage/src/test/java/org/
apache/kafka/server/log/remote/storage/``): a directory ``<topic>-<partition>-<topicId>`` under
the storage directory, and in it ``<start offset>-<segmentId><suffix>`` with the start offset *not*
padded (``toFilename``: ``startOffset + "-" + uuid``; files are matched as ``\\d+-`` then 22
characters of ``[a-zA-Z0-9_-]`` then ``\\.[a-z_]+``) and the suffixes ``.log``, ``.index``,
``.timeindex``, ``.txnindex`` (optional), ``.leader_epoch_checkpoint``, ``.snapshot``
(``RemoteLogSegmentFileType``).

Suffixes are kept here without their dot (``log``, ``leader_epoch_checkpoint``).  A key matches at
most one layout: Aiven's segment objects sit in a directory of digits (the partition), Kafka's in
``<topic>-<partition>-<topicId>``.  A prefix that does not end in ``/`` cannot be told from the topic
name when a key is parsed: the parsed prefix is everything up to the last ``/`` before the topic's
directory, and the topic takes the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Literal, Mapping

from kseg.format.kafka_names import TOPIC as _TOPIC
from kseg.format.kafka_names import UUID as _UUID
from kseg.format.rsm_custom import CustomMetadata
from kseg.format.uuid import parse_uuid
from kseg.limits import INT32_MAX, INT64_MAX

Layout = Literal["aiven", "local"]

#: What Aiven's plugin writes for a segment since October 2023 (``ObjectKeyFactory.Suffix``).
AIVEN_SUFFIXES: tuple[str, ...] = ("log", "indexes", "rsm-manifest")
#: What Aiven's plugin wrote before: one object per index (``txnindex`` only when there is one).
AIVEN_LEGACY_SUFFIXES: tuple[str, ...] = (
    "log",
    "index",
    "timeindex",
    "snapshot",
    "txnindex",
    "leader-epoch-checkpoint",
    "rsm-manifest",
)
#: What Kafka's ``LocalTieredStorage`` writes for a segment (``RemoteLogSegmentFileType``).
LOCAL_SUFFIXES: tuple[str, ...] = ("log", "index", "timeindex", "txnindex", "leader_epoch_checkpoint", "snapshot")
#: The suffixes a layout may leave out of a complete segment (a segment without a transaction index).
OPTIONAL_SUFFIXES: Mapping[Layout, frozenset[str]] = MappingProxyType(
    {"aiven": frozenset({"txnindex"}), "local": frozenset({"txnindex"})}
)
#: Every suffix each layout has ever written (Aiven's current and older objects together).
SUFFIXES: Mapping[Layout, frozenset[str]] = MappingProxyType(
    {"aiven": frozenset(AIVEN_SUFFIXES + AIVEN_LEGACY_SUFFIXES), "local": frozenset(LOCAL_SUFFIXES)}
)


def _alternatives(suffixes: frozenset[str]) -> str:
    return "|".join(re.escape(s) for s in sorted(suffixes, key=len, reverse=True))


_AIVEN = re.compile(
    rf"(?P<prefix>(?:.*/)?)(?P<topic>{_TOPIC})-(?P<topic_id>{_UUID})/(?P<partition>[0-9]+)/"
    rf"(?P<offset>[0-9]{{20}})-(?P<segment_id>{_UUID})\.(?P<suffix>{_alternatives(SUFFIXES['aiven'])})\Z",
    re.DOTALL,
)
_LOCAL = re.compile(
    rf"(?P<prefix>(?:.*/)?)(?P<topic>{_TOPIC})-(?P<partition>[0-9]+)-(?P<topic_id>{_UUID})/"
    rf"(?P<offset>[0-9]+)-(?P<segment_id>{_UUID})\.(?P<suffix>{_alternatives(SUFFIXES['local'])})\Z",
    re.DOTALL,
)


@dataclass(frozen=True)
class RemoteObjectKey:
    """One object of a remote log segment: the parts its plugin built its key from.

    ``prefix`` is what precedes the topic's directory (Aiven's key prefix, or the storage directory of
    ``LocalTieredStorage`` with its trailing ``/``; '' when none); ``suffix`` has no dot."""

    layout: Layout
    prefix: str
    topic: str
    topic_id: str
    partition: int
    start_offset: int
    segment_id: str
    suffix: str

    @property
    def key(self) -> str:
        """The object key (or the file's path) this value stands for."""
        return object_key(
            self.layout,
            self.prefix,
            self.topic,
            self.topic_id,
            self.partition,
            self.start_offset,
            self.segment_id,
            self.suffix,
        )

    @property
    def partition_prefix(self) -> str:
        """The key prefix under which the plugin keeps every segment of this topic-partition."""
        return partition_prefix(self.layout, self.prefix, self.topic, self.topic_id, self.partition)

    @property
    def segment_stem(self) -> str:
        """The key without its ``.suffix``: what every object of this segment shares."""
        return self.key[: -len(self.suffix) - 1]

    def with_suffix(self, suffix: str) -> RemoteObjectKey:
        """The same segment's object of another suffix (which must be one its layout writes)."""
        if suffix not in SUFFIXES[self.layout]:
            raise ValueError(f"{suffix!r} is not a suffix of the {self.layout} layout")
        return replace(self, suffix=suffix)


def partition_prefix(layout: Layout, prefix: str, topic: str, topic_id: str, partition: int) -> str:
    """Aiven: ``<prefix><topic>-<topicId>/<partition>/``; local: ``<prefix><topic>-<partition>-<topicId>/``."""
    if layout == "aiven":
        return f"{prefix}{topic}-{topic_id}/{partition}/"
    if layout == "local":
        return f"{prefix}{topic}-{partition}-{topic_id}/"
    raise ValueError(f"unknown layout {layout!r}")


def object_key(
    layout: Layout,
    prefix: str,
    topic: str,
    topic_id: str,
    partition: int,
    start_offset: int,
    segment_id: str,
    suffix: str,
) -> str:
    """The key the layout's plugin writes (Aiven's ``ObjectKeyFactory.key``, Kafka's
    ``RemoteLogSegmentFileType.toFilename`` in its partition directory); ``suffix`` without a dot."""
    if suffix not in SUFFIXES.get(layout, frozenset()):
        raise ValueError(f"{suffix!r} is not a suffix of the {layout!r} layout")
    base = partition_prefix(layout, prefix, topic, topic_id, partition)
    offset = f"{start_offset:020d}" if layout == "aiven" else str(start_offset)
    return f"{base}{offset}-{segment_id}.{suffix}"


def parse_key(key: str, prefix: str | None = None) -> RemoteObjectKey | None:
    """The parts of a segment object's key in either layout; ``None`` for any other key (ids that are
    no ``Uuid``, a partition past Java's ``int`` or an offset past its ``long`` included).  A URI or an
    absolute path parses too: its scheme and directories are part of the prefix.

    With ``prefix`` (the plugin's key prefix, or a segment's ``object_prefix``: :class:`CustomMetadata`)
    the key must start with it, and the rest is the main path: a prefix without a trailing ``/``
    (``tiered-``) is then not taken for part of the topic's name."""
    if prefix is not None:
        if not key.startswith(prefix):
            return None
        rest = parse_key("/" + key[len(prefix) :])  # the rest alone: the topic starts right after the prefix
        if rest is None or rest.prefix != "/":
            return None
        return replace(rest, prefix=prefix)
    for layout, pattern in (("aiven", _AIVEN), ("local", _LOCAL)):
        m = pattern.match(key)
        if m is None:
            continue
        partition, offset = int(m["partition"]), int(m["offset"])
        if partition > INT32_MAX or offset > INT64_MAX:
            return None
        if parse_uuid(m["topic_id"]) is None or parse_uuid(m["segment_id"]) is None:
            return None
        return RemoteObjectKey(
            layout="aiven" if layout == "aiven" else "local",
            prefix=m["prefix"],
            topic=m["topic"],
            topic_id=m["topic_id"],
            partition=partition,
            start_offset=offset,
            segment_id=m["segment_id"],
            suffix=m["suffix"],
        )
    return None


def main_path(topic: str, topic_id: str, partition: int, start_offset: int, segment_id: str) -> str:
    """Aiven's ``ObjectKeyFactory.mainPath``: ``<topic>-<topicId>/<partition>/<20-digit offset>-<segmentId>``."""
    return object_key("aiven", "", topic, topic_id, partition, start_offset, segment_id, "log")[: -len(".log")]


def custom_key(custom: CustomMetadata | None, default: RemoteObjectKey) -> str:
    """The key Aiven's plugin reads a segment's object from (``ObjectKeyFactory.key(fields, metadata,
    suffix)``), given the segment's custom metadata (``SegmentCustomMetadataField``,
    :mod:`kseg.format.rsm_custom`) and ``default``, its key under the configured prefix
    (``rsm.config.storage.key.prefix``): ``object_prefix`` else that prefix, then ``object_key`` (the main path
    at upload) else the main path, then ``.`` and the suffix.  A segment copied before the prefix changed
    stays under its old one."""
    if default.layout != "aiven":
        raise ValueError("custom metadata keys are Aiven's")
    prefix = default.prefix if custom is None or custom.object_prefix is None else custom.object_prefix
    main = default.segment_stem[len(default.prefix) :]
    if custom is not None and custom.object_key is not None:
        main = custom.object_key
    return f"{prefix}{main}.{default.suffix}"
