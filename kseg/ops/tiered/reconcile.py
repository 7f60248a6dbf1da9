"""Each topic-partition's remote segments checked: against each other, the remote store and a local log.

* **overlap / gap** (the metadata alone, here): the segments whose copy finished (``COPY_SEGMENT_FINISHED``,
  the ones ``RemoteLogManager`` serves fetches from), by start offset: a segment starting at or before the
  previous one's end overlaps it (two copies of the same offsets, e.g. from two leaders, that retention has
  not yet removed), one starting past the previous end + 1 leaves offsets no remote segment holds.
* **orphans** (with the store, :mod:`kseg.ops.tiered.keys`): every listed object is the expected key of a
  live segment or an orphan -- a copy that never finished (``COPY_SEGMENT_STARTED``), a deletion that
  started but never finished, a segment whose deletion finished or that no record names, or a live
  segment's object under a key its RSM does not fetch -- with their total size.  Only for topic-partitions
  whose ``__remote_log_metadata`` partition (``partitioner.metadata_partition``) was read to its end:
  otherwise their objects are not judged.
* **missing objects and sizes** (with the store, :mod:`kseg.ops.tiered.objects`): a finished segment whose
  expected keys are not all listed is data loss; the listed ones must have the sizes the metadata and the
  segment's manifest state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType

from kseg.format.uuid import parse_uuid
from kseg.ops.tiered.partitioner import METADATA_TOPIC, metadata_partition
from kseg.ops.tiered.state import (
    DELETE_FINISHED,
    DELETE_STARTED,
    FINISHED,
    PARTITION_DELETED,
    STARTED,
    RemoteSegment,
    TopicPartition,
)
from kseg.ops.tiered.store import StoredObject

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

    kind: str  # transition | undecodable | overlap | gap | missing | size | manifest | orphan | local-gap | log-start
    text: str


@dataclass
class Orphan:
    """Objects of one segment no finished metadata holds."""

    segment_id: str
    state: str | None
    objects: list[StoredObject]
    expected: str | None = None  # a live segment's objects under another key: the key the RSM fetches

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


def orphan_state(tp: TopicPartition, seg_id: str) -> str | None:
    """The state the metadata leaves a segment in (``PARTITION_DELETED`` for one the partition's deletion dropped;
    None when the fold does not remember it)."""
    seg = tp.segments.get(seg_id)
    if seg is not None:
        return seg.state
    return tp.deleted.get(seg_id)


def placed_in(topic_id: str, partition: int, partitions: int) -> str:
    """The metadata partition directory's name that holds ``topic_id``-``partition``."""
    raw = parse_uuid(topic_id)
    assert raw is not None  # parse_key accepted it
    return f"{METADATA_TOPIC}-{metadata_partition(raw, partition, partitions)}"
