"""The remote segments of each topic-partition, folded from ``__remote_log_metadata`` as Kafka folds them.

Kafka's ``TopicBasedRemoteLogMetadataManager`` consumes the topic (``ConsumerTask``) into a
``RemotePartitionMetadataStore``: per ``TopicIdPartition`` a ``RemoteLogMetadataCache`` (segment id ->
``RemoteLogSegmentMetadata``, and per leader epoch a ``RemoteLogLeaderEpochState``).  The rules folded here:

* a ``RemoteLogSegmentMetadataRecord`` is ``addCopyInProgressSegment``: its state must be
  ``COPY_SEGMENT_STARTED`` (else ``IllegalArgumentException``), and an existing entry is replaced only by the
  self transition;
* a ``RemoteLogSegmentMetadataUpdateRecord`` is ``updateRemoteLogSegmentMetadata``: for a segment with no
  metadata Kafka logs ``RemoteResourceNotFoundException`` and drops it; a transition
  ``RemoteLogSegmentState.isValidTransition`` refuses (STARTED -> FINISHED | DELETE_STARTED, FINISHED ->
  DELETE_STARTED, DELETE_STARTED -> DELETE_FINISHED, or the same state again) is logged and dropped; an
  update to COPY_SEGMENT_STARTED throws; otherwise ``createWithUpdates`` takes the update's state, broker,
  event time and custom metadata, and DELETE_SEGMENT_FINISHED removes the segment (kept here as
  ``deleted``: its objects should be gone);
* a ``RemotePartitionDeleteMetadataRecord`` is ``handleRemotePartitionDeleteMetadata``: its state is kept, and
  DELETE_PARTITION_FINISHED drops the partition's whole cache (segments not deleted by then are reported);
  ``RemotePartitionDeleteState.isValidTransition`` (MARKED -> STARTED -> FINISHED) is checked here, which the
  store does not;
* ``RemoteLogSegmentMetadataSnapshotRecord`` belongs to a file-based snapshot, never to the topic: noted.

Each refused event is a problem naming the metadata record (partition and offset) that carried it (the first
:data:`MAX_LISTED` of a topic-partition; the rest counted).

Memory is one entry per live remote segment, never one per record: a segment whose deletion finished is
counted, and its id kept only when ``remember`` says its objects matter (the store listed holds some: an
orphan's cause names it).
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kseg.format.rsm_custom import CustomMetadata, parse_custom_metadata
from kseg.format.strings import uuid_to_string

STARTED, FINISHED, DELETE_STARTED, DELETE_FINISHED = (
    "COPY_SEGMENT_STARTED",
    "COPY_SEGMENT_FINISHED",
    "DELETE_SEGMENT_STARTED",
    "DELETE_SEGMENT_FINISHED",
)
SEGMENT_STATES = (STARTED, FINISHED, DELETE_STARTED, DELETE_FINISHED)  # RemoteLogSegmentState ids 0..3
PARTITION_STATES = ("DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED")
_VALID = MappingProxyType(
    {  # RemoteLogSegmentState.isValidTransition: source -> targets (besides the same state)
        None: {STARTED},
        STARTED: {FINISHED, DELETE_STARTED},
        FINISHED: {DELETE_STARTED},
        DELETE_STARTED: {DELETE_FINISHED},
        DELETE_FINISHED: set(),
    }
)
ADD, UPDATE = 0, 1  # MetadataRecordType's api keys of RemoteLogSegmentMetadataRecord, ...UpdateRecord
#: A segment record's values as the fold applies them: ``(kind, topic, segment id, state id, broker, event
#: time, custom metadata)`` and, for :data:`ADD`, ``start offset, end offset, leader epochs (epoch -> first
#: offset, sorted), segment size, max timestamp, txnIndexEmpty``.  ``segment id`` is the Uuid's 16 bytes;
#: ``topic`` the ``TopicIdPartitionEntry``'s bytes as read on the fast road (:mod:`kseg.ops.tiered.fast`).
View = tuple[Any, ...]
MAX_UNDECODABLE = 10
MAX_LISTED = 20  # refused events (and notes) listed per topic-partition (or run); the rest counted
PARTITION_DELETED = "DELETE_PARTITION_FINISHED"
_PARTITION_VALID = MappingProxyType(
    {
        None: frozenset({PARTITION_STATES[0]}),
        PARTITION_STATES[0]: frozenset({PARTITION_STATES[1]}),
        PARTITION_STATES[1]: frozenset({PARTITION_STATES[2]}),
    }
)


def valid_transition(source: str | None, target: str) -> bool:
    """``RemoteLogSegmentState.isValidTransition``."""
    return source == target or target in _VALID.get(source, ())


def next_states() -> Mapping[str, frozenset[int]]:
    """For each state a live segment can be in, the state ids of the updates :meth:`Fold.update_segment`
    applies (:func:`valid_transition`, COPY_SEGMENT_STARTED never an update's)."""
    return MappingProxyType(
        {
            source: frozenset(
                i for i, target in enumerate(SEGMENT_STATES) if target != STARTED and valid_transition(source, target)
            )
            for source in SEGMENT_STATES
        }
    )


@dataclass(slots=True)
class RemoteSegment:
    """One ``RemoteLogSegmentMetadata`` as the cache holds it, and where its record was read."""

    segment_id: str
    start: int
    end: int
    epochs: dict[int, int]  # leader epoch -> its first offset in the segment (a TreeMap: sorted)
    size: int  # segmentSizeInBytes: the local segment's size
    state: str
    broker: int
    max_timestamp: int
    event_timestamp: int
    custom: CustomMetadata | None
    txn_index_empty: bool
    record: str  # "<metadata partition>@<offset>" of the record that added it
    updated: str  # ... and of the last event applied


@dataclass
class TopicPartition:
    """A ``TopicIdPartition``'s cache: its segments (live, and those whose deletion finished)."""

    topic: str
    topic_id: str
    partition: int
    metadata_partition: str  # the __remote_log_metadata partition directory it was read from
    segments: dict[str, RemoteSegment] = field(default_factory=dict)
    #: segment id -> DELETE_SEGMENT_FINISHED or DELETE_PARTITION_FINISHED, for the ids the fold remembers
    deleted: dict[str, str] = field(default_factory=dict)
    deleted_count: int = 0  # segments whose deletion finished (remembered or not)
    delete_state: str | None = None
    problems: list[str] = field(default_factory=list)
    unlisted: int = 0  # refused events past MAX_LISTED, counted
    #: the live segments again, by their id's 16 bytes as read (an update finds its segment without the text)
    by_raw: dict[bytes, RemoteSegment] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    def problem(self, text: str) -> None:
        """A refused event: said while fewer than :data:`MAX_LISTED` were, counted after."""
        if len(self.problems) < MAX_LISTED:
            self.problems.append(text)
        else:
            self.unlisted += 1

    def all_problems(self) -> list[str]:
        """The problems said, and one line counting the rest."""
        more = [f"{self.unlisted} more refused events (not listed)"] if self.unlisted else []
        return self.problems + more

    def live(self) -> list[RemoteSegment]:
        """The segments the cache holds, by start offset then end offset."""
        return sorted(self.segments.values(), key=lambda s: (s.start, s.end, s.segment_id))


@dataclass
class Fold:
    """Every topic-partition met, by ``(topic id, partition)`` (the id's 16 bytes: made text once, when met),
    and what was not folded."""

    partitions: dict[tuple[bytes, int], TopicPartition] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # records that could not be decoded
    records: int = 0
    undecodable_counts: dict[str, int] = field(default_factory=dict)  # metadata partition -> records
    #: the segment ids whose deletion is remembered (None: every one): those with objects in the store
    remember: Container[str] | None = None
    unlisted_notes: int = 0
    #: the topic-partitions again, by the bytes of a ``TopicIdPartitionEntry`` that named them (the fast road)
    by_topic: dict[bytes, TopicPartition] = field(default_factory=dict, repr=False)

    def note(self, text: str) -> None:
        if len(self.notes) < MAX_LISTED:
            self.notes.append(text)
        else:
            self.unlisted_notes += 1

    def all_notes(self) -> list[str]:
        more = [f"{self.unlisted_notes} more records not folded (not listed)"] if self.unlisted_notes else []
        return self.notes + more

    def _forget(self, tp: TopicPartition, seg_id: str, state: str) -> None:
        """A segment whose deletion finished: counted, its id kept when :attr:`remember` holds it."""
        tp.deleted_count += 1
        if self.remember is None or seg_id in self.remember:
            tp.deleted[seg_id] = state

    def undecodable(self, where: str, message: str) -> None:
        """A record ``RemoteLogMetadataSerde`` cannot read (Kafka's consumer task fails on it): a problem, the
        first :data:`MAX_UNDECODABLE` of each metadata partition in words, the rest counted."""
        name = where.rpartition("@")[0]
        seen = self.undecodable_counts.get(name, 0) + 1
        self.undecodable_counts[name] = seen
        if seen <= MAX_UNDECODABLE:
            self.problems.append(f"{where}: not a remote log metadata record: {message}")

    def undecodable_tail(self) -> list[str]:
        """One line per metadata partition with more undecodable records than were said."""
        return [
            f"{name}: {n - MAX_UNDECODABLE} more records not remote log metadata (not listed)"
            for name, n in self.undecodable_counts.items()
            if n > MAX_UNDECODABLE
        ]

    def _partition(self, entry: dict, where: str) -> TopicPartition:
        key = (entry["id"], entry["partition"])
        tp = self.partitions.get(key)
        if tp is None:
            tp = TopicPartition(entry["name"], uuid_to_string(key[0]), key[1], where.rpartition("@")[0])
            self.partitions[key] = tp
        return tp

    def apply(self, name: str, m: dict, where: str) -> TopicPartition | None:
        """One decoded record (``kseg.decoders.remote.read_record``'s name and values) read at ``where``; the
        topic-partition it names (None for a snapshot's record)."""
        self.records += 1
        if name == "RemoteLogSegmentMetadataUpdateRecord":
            tp = self._partition(m["remoteLogSegmentId"]["topicIdPartition"], where)
            self._update(tp, m, where)
        elif name == "RemoteLogSegmentMetadataRecord":
            tp = self._partition(m["remoteLogSegmentId"]["topicIdPartition"], where)
            self._add(tp, m, where)
        elif name == "RemotePartitionDeleteMetadataRecord":
            tp = self._partition(m["topicIdPartition"], where)
            self._partition_delete(tp, m, where)
        else:
            self.note(f"{where}: a {name} (a file-based snapshot's record, not the topic's): not folded")
            return None
        return tp

    def _segment_event(self, tp: TopicPartition, m: dict, where: str) -> tuple[str, str] | None:
        """The segment id and state a segment record names; None (a problem) when it comes after the
        partition's deletion finished."""
        seg_id = uuid_to_string(m["remoteLogSegmentId"]["id"])
        if tp.delete_state == PARTITION_DELETED and _after_partition_deleted(tp, where, seg_id):
            return None
        return seg_id, SEGMENT_STATES[m["remoteLogSegmentState"]]

    def _add(self, tp: TopicPartition, m: dict, where: str) -> None:
        event = self._segment_event(tp, m, where)
        if event is None:
            return
        seg_id, state = event
        if state != STARTED:
            tp.problem(
                f"{where}: segment {seg_id} added with state {state}: Kafka's addCopyInProgressSegment "
                f"accepts only {STARTED} (IllegalArgumentException), the record is not applied"
            )
            return
        existing = tp.segments.get(seg_id)
        if existing is not None and not valid_transition(existing.state, state):
            tp.problem(_refused(where, seg_id, existing.state, state))
            return
        epochs = {e["leaderEpoch"]: e["offset"] for e in m["segmentLeaderEpochs"]}
        view = (
            ADD,
            b"",
            m["remoteLogSegmentId"]["id"],
            0,
            m["brokerId"],
            m["eventTimestampMs"],
            m["customMetadata"],
            m["startOffset"],
            m["endOffset"],
            dict(sorted(epochs.items())),
            m["segmentSizeInBytes"],
            m["maxTimestampMs"],
            bool(m.get("txnIndexEmpty")),
        )
        self.add_segment(tp, seg_id, view, where)

    def add_segment(self, tp: TopicPartition, seg_id: str, v: View, where: str) -> None:
        """A segment added, COPY_SEGMENT_STARTED, by the record read at ``where`` whose values are ``v``."""
        custom = v[6]
        tp.segments[seg_id] = tp.by_raw[v[2]] = RemoteSegment(
            seg_id,
            v[7],
            v[8],
            v[9],
            v[10],
            STARTED,
            v[4],
            v[11],
            v[5],
            None if custom is None else _custom(custom, tp, where),
            v[12],
            where,
            where,
        )

    def _update(self, tp: TopicPartition, m: dict, where: str) -> None:
        raw = m["remoteLogSegmentId"]["id"]
        seg = tp.by_raw.get(raw)
        state = SEGMENT_STATES[m["remoteLogSegmentState"]]
        if seg is None or not valid_transition(seg.state, state) or state == STARTED:
            self._refuse_update(tp, m, where)
            return
        view = (UPDATE, b"", raw, m["remoteLogSegmentState"], m["brokerId"], m["eventTimestampMs"])
        self.update_segment(tp, seg, view + (m["customMetadata"],), where)

    def update_segment(self, tp: TopicPartition, seg: RemoteSegment, v: View, where: str) -> None:
        """A live segment updated to a state it may take (:func:`next_states`) by the record read at ``where``
        whose values are ``v``."""
        state = SEGMENT_STATES[v[3]]
        seg.state = state
        seg.broker = v[4]
        seg.event_timestamp = v[5]
        seg.updated = where
        seg.custom = None if v[6] is None else _custom(v[6], tp, where)
        if state == DELETE_FINISHED:
            del tp.segments[seg.segment_id], tp.by_raw[v[2]]
            self._forget(tp, seg.segment_id, DELETE_FINISHED)

    def _refuse_update(self, tp: TopicPartition, m: dict, where: str) -> None:
        """An update :meth:`_update` does not apply: the problem, the first of these that holds."""
        event = self._segment_event(tp, m, where)
        if event is None:
            return
        seg_id, state = event
        seg = tp.segments.get(seg_id)
        if seg is None:
            gone = "its deletion already finished" if seg_id in tp.deleted else "no metadata record added it"
            if seg_id not in tp.deleted and self.remember is not None and seg_id not in self.remember:
                gone = "no live metadata holds it (never added, or its deletion finished)"
            tp.problem(
                f"{where}: update to {state} for segment {seg_id}: {gone} (Kafka drops it: "
                "RemoteResourceNotFoundException)"
            )
            return
        tp.problem(_refused(where, seg_id, seg.state, state))

    def _partition_delete(self, tp: TopicPartition, m: dict, where: str) -> None:
        state = PARTITION_STATES[m["remotePartitionDeleteState"]]
        if tp.delete_state != state and state not in _PARTITION_VALID.get(tp.delete_state, set()):
            tp.problem(
                f"{where}: partition delete {tp.delete_state or 'not marked'} -> {state}: not a transition "
                "RemotePartitionDeleteState.isValidTransition allows (Kafka's store applies it all the same)"
            )
        tp.delete_state = state
        if state == PARTITION_STATES[2] and tp.segments:
            ids = sorted(tp.segments)
            more = f" and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else ""
            tp.problem(
                f"{where}: partition deletion finished before the deletion of segments "
                f"{', '.join(ids[:MAX_LISTED])}{more}: Kafka drops their metadata, their objects may be left"
            )
            for seg_id in tp.segments:
                self._forget(tp, seg_id, PARTITION_DELETED)
            tp.segments.clear()
            tp.by_raw.clear()


def _after_partition_deleted(tp: TopicPartition, where: str, seg_id: str) -> bool:
    """A segment event after DELETE_PARTITION_FINISHED: Kafka's store has dropped the partition's cache and
    throws ``IllegalStateException`` ("No partition metadata found"); a problem, the event not applied."""
    if tp.delete_state != PARTITION_STATES[2]:
        return False
    tp.problem(
        f"{where}: segment {seg_id}: an event after the partition's deletion finished (Kafka's store throws "
        "IllegalStateException: no partition metadata), not applied"
    )
    return True


def _refused(where: str, seg_id: str, source: str, target: str) -> str:
    return (
        f"{where}: segment {seg_id}: {source} -> {target} is not a valid transition "
        "(RemoteLogSegmentState.isValidTransition): Kafka drops the event"
    )


def _custom(data: bytes, tp: TopicPartition, where: str) -> CustomMetadata | None:
    try:
        return parse_custom_metadata(data)
    except ValueError as exc:
        tp.problem(f"{where}: custom metadata of {len(data)} bytes not Aiven's tagged fields: {exc}")
        return None
