"""Each topic-partition's remote segments checked: against each other, the remote store and a local log.

* **overlap / gap** (the metadata alone): the segments whose copy finished (``COPY_SEGMENT_FINISHED``, the
  ones ``RemoteLogManager`` serves fetches from), by start offset: a segment starting at or before the
  previous one's end overlaps it (two copies of the same offsets, e.g. from two leaders, that retention has
  not yet removed), one starting past the previous end + 1 leaves offsets no remote segment holds.
* **missing objects** (with the store): a finished segment whose objects are not all listed -- the objects
  its layout writes (``kseg.storage.remote_keys``: Aiven's ``log``, ``rsm-manifest`` and ``indexes`` or the
  older per-index objects; ``LocalTieredStorage``'s six files, ``txnindex`` optional): data loss, a fetch of
  its offsets fails.  A ``LocalTieredStorage`` ``.log`` is the segment byte for byte: its size must be
  ``segmentSizeInBytes``; Aiven's objects together must hold the custom metadata's ``remote_size``.
* **orphans** (with the store): objects of a segment the metadata holds in no finished state -- a copy that
  never finished (``COPY_SEGMENT_STARTED``), a deletion that started but never finished, a segment whose
  deletion finished or that no record names -- with their total size.  Only for topic-partitions whose
  ``__remote_log_metadata`` partition (``partitioner.metadata_partition``) was read to its end: otherwise
  their objects are not judged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType

from kseg.format.uuid import parse_uuid
from kseg.ops.tiered.partitioner import METADATA_TOPIC, metadata_partition
from kseg.ops.tiered.state import (
    DELETE_FINISHED,
    DELETE_STARTED,
    FINISHED,
    STARTED,
    RemoteSegment,
    TopicPartition,
)
from kseg.ops.tiered.store import StoredObject, StoreListing
from kseg.storage import location
from kseg.storage.remote_keys import (
    AIVEN_LEGACY_SUFFIXES,
    LOCAL_SUFFIXES,
    OPTIONAL_SUFFIXES,
    Layout,
    custom_key,
    object_key,
    parse_key,
)

PARTITION_DELETED = "DELETE_PARTITION_FINISHED"
_AIVEN_INDEXES = frozenset(AIVEN_LEGACY_SUFFIXES) - {"log", "rsm-manifest", "txnindex"}
ORPHAN_WHY = MappingProxyType(
    {
        STARTED: "a copy that never finished (COPY_SEGMENT_STARTED)",
        DELETE_STARTED: "a deletion that never finished (DELETE_SEGMENT_STARTED)",
        DELETE_FINISHED: "a segment whose deletion finished (DELETE_SEGMENT_FINISHED)",
        None: "no metadata record names the segment",
        PARTITION_DELETED: "a segment of a partition whose deletion finished (DELETE_PARTITION_FINISHED)",
    }
)


@dataclass
class Problem:
    """One finding: its kind (docs/tiered-metadata.md) and the sentence."""

    kind: str  # transition | undecodable | overlap | gap | missing | size | orphan | local-gap | log-start
    text: str


@dataclass
class Orphan:
    """Objects of one segment no finished metadata holds."""

    segment_id: str
    state: str | None
    objects: list[StoredObject]

    @property
    def bytes(self) -> int:
        return sum(o.size for o in self.objects)


@dataclass
class PartitionCheck:
    """A topic-partition's segments and what was found about them."""

    tp: TopicPartition
    known: bool = True  # its metadata partition was read to its end (else: no verdict)
    objects: dict[str, list[StoredObject]] = field(default_factory=dict)  # segment id -> its listed objects
    orphans: list[Orphan] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    local_start: int | None = None  # --logdir: the first local segment's base offset
    log_start: int | None = None  # --logdir: log-start-offset-checkpoint

    @property
    def orphan_bytes(self) -> int:
        return sum(o.bytes for o in self.orphans)

    @property
    def status(self) -> str:
        if not self.known:
            return "incomplete"
        return "problems" if self.problems else "clean"


def finished(tp: TopicPartition) -> list[RemoteSegment]:
    """The segments fetches are served from, by start offset."""
    return [s for s in tp.live() if s.state == FINISHED]


def highest_remote_end(tp: TopicPartition) -> int | None:
    ends = [s.end for s in finished(tp)]
    return max(ends) if ends else None


def offset_problems(check: PartitionCheck) -> None:
    """Overlaps and gaps among the finished segments."""
    previous: RemoteSegment | None = None
    for seg in finished(check.tp):
        if previous is not None and seg.start <= previous.end:
            check.problems.append(
                Problem(
                    "overlap",
                    f"segment {seg.segment_id} ({seg.start}-{seg.end}, epochs {_epochs(seg)}) overlaps "
                    f"{previous.segment_id} ({previous.start}-{previous.end}, epochs {_epochs(previous)})",
                )
            )
        elif previous is not None and seg.start > previous.end + 1:
            check.problems.append(
                Problem(
                    "gap",
                    f"offsets {previous.end + 1}-{seg.start - 1} are in no remote segment (between "
                    f"{previous.segment_id} and {seg.segment_id})",
                )
            )
        if previous is None or seg.end > previous.end:
            previous = seg


def _epochs(seg: RemoteSegment) -> str:
    return ",".join(str(e) for e in seg.epochs)


def expected_key(tp: TopicPartition, seg: RemoteSegment, layout: Layout = "aiven", root: str | None = None) -> str:
    """The ``.log`` object's key: the layout's rule under the store's ``root`` (when given), with Aiven's
    custom metadata applied as the plugin's fetch path does (:func:`kseg.storage.remote_keys.custom_key`):
    an ``object_prefix`` is the key's start in the bucket (``root`` not added), an ``object_key`` its main path."""
    key = object_key(layout, "", tp.topic, tp.topic_id, tp.partition, seg.start, seg.segment_id, "log")
    custom = seg.custom
    default = parse_key(key) if layout == "aiven" and custom is not None else None
    if custom is not None and default is not None:
        key = custom_key(custom, default)
        if custom.object_prefix is not None:
            return key
    return key if root is None else location.join(root, key)


def _missing_suffixes(objects: list[StoredObject]) -> list[str]:
    have = {o.key.suffix for o in objects}
    layout = objects[0].key.layout if objects else "aiven"
    if layout == "local":
        need = set(LOCAL_SUFFIXES) - OPTIONAL_SUFFIXES["local"]
        return sorted(need - have)
    missing = sorted({"log", "rsm-manifest"} - have)
    if "indexes" not in have and not _AIVEN_INDEXES <= have:
        missing.append("indexes")
    return missing


def object_problems(check: PartitionCheck, store: StoreListing, layout: Layout = "aiven") -> None:
    """Missing objects of finished segments (and a ``LocalTieredStorage`` ``.log`` of the wrong size)."""
    tp = check.tp
    for seg in tp.live():
        objects = store.by_segment.get(seg.segment_id, [])
        check.objects[seg.segment_id] = objects
        if seg.state != FINISHED:
            continue
        missing = _missing_suffixes(objects)
        if missing:
            what = "no object" if not objects else "no " + ", ".join("." + s for s in missing) + " object"
            key = expected_key(tp, seg, objects[0].key.layout if objects else layout, store.root)
            check.problems.append(
                Problem(
                    "missing",
                    f"segment {seg.segment_id} (offsets {seg.start}-{seg.end}) is COPY_SEGMENT_FINISHED but the "
                    f"store holds {what} of it (expected {key}): data loss, fetches of these "
                    "offsets fail",
                )
            )
        _remote_size_problem(check, seg, objects, missing)
        for obj in objects:
            if obj.key.layout == "local" and obj.key.suffix == "log" and obj.size != seg.size:
                check.problems.append(
                    Problem(
                        "size",
                        f"{obj.path}: {obj.size} bytes, the metadata says segmentSizeInBytes={seg.size} "
                        "(LocalTieredStorage copies the segment byte for byte)",
                    )
                )


def _remote_size_problem(
    check: PartitionCheck, seg: RemoteSegment, objects: list[StoredObject], missing: list[str]
) -> None:
    """Aiven's ``remote_size`` is the bytes it uploaded for the segment (``SegmentCustomMetadataBuilder.totalSize``:
    the sum over its objects): a whole set of objects of another total was changed after the copy."""
    remote_size = None if seg.custom is None else seg.custom.remote_size
    if remote_size is None or missing or not objects or objects[0].key.layout != "aiven":
        return
    total = sum(o.size for o in objects)
    if total != remote_size:
        check.problems.append(
            Problem(
                "size",
                f"segment {seg.segment_id}: its {len(objects)} objects hold {total} bytes, the custom metadata's "
                f"remote_size (the bytes Aiven's RSM uploaded) says {remote_size}",
            )
        )


def orphan_problems(
    checks: dict[tuple[str, int], PartitionCheck], store: StoreListing, known: Callable[[str, int], bool]
) -> None:
    """Objects of segments no finished metadata holds, each in its topic-partition's check (one made for a
    topic-partition the metadata never names; ``known(topic id, partition)``: its metadata partition was read
    to its end)."""
    for seg_id, objects in store.by_segment.items():
        first = objects[0].key
        check = checks.get((first.topic_id, first.partition))
        if check is None:
            tp = TopicPartition(first.topic, first.topic_id, first.partition, "")
            check = PartitionCheck(tp, known=known(first.topic_id, first.partition))
            checks[(first.topic_id, first.partition)] = check
        tp = check.tp
        state = _orphan_state(tp, seg_id)
        if state == FINISHED:
            continue
        orphan = Orphan(seg_id, state, objects)
        check.orphans.append(orphan)
        if not check.known:
            continue  # its metadata partition was not read (to its end): listed, not judged
        check.problems.append(
            Problem(
                "orphan",
                f"segment {seg_id}: {len(objects)} object(s), {orphan.bytes} bytes, under "
                f"{first.partition_prefix}: {ORPHAN_WHY[state]}",
            )
        )


def _orphan_state(tp: TopicPartition, seg_id: str) -> str | None:
    """The state the metadata leaves a segment in (``PARTITION_DELETED`` for one the partition's deletion dropped)."""
    seg = tp.segments.get(seg_id)
    if seg is not None:
        return seg.state
    seg = tp.deleted.get(seg_id)
    if seg is None:
        return None
    return seg.state if seg.state == DELETE_FINISHED else PARTITION_DELETED


def placed_in(topic_id: str, partition: int, partitions: int) -> str:
    """The metadata partition directory's name that holds ``topic_id``-``partition``."""
    raw = parse_uuid(topic_id)
    assert raw is not None  # parse_key accepted it
    return f"{METADATA_TOPIC}-{metadata_partition(raw, partition, partitions)}"
