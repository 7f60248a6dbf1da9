"""The topics' records, as Kafka's ``TopicsDelta``, ``TopicDelta`` and ``PartitionRegistration`` apply them
(and ``ConfigurationsDelta.replay(RemoveTopicRecord, name)``, which a topic's removal asks)."""

from __future__ import annotations

from types import MappingProxyType

from kseg.ops.metadata.image import MISSING, Delta, PartitionState, Refused, Topic, b64

MIGRATING = bytes(16)  # DirectoryId.MIGRATING
NO_LEADER_CHANGE = -2  # PartitionChangeRecord.Leader's default
TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC


def topic(d: Delta, r: dict) -> None:
    d.put("topics", d.image.topics, r["topicId"], Topic(r["name"], r["topicId"]))
    d.put("topic_ids", d.image.topic_ids, r["name"], r["topicId"])
    d.owned.add(id(d.image.topics[r["topicId"]]))


def _owned_topic(d: Delta, topic_id: bytes) -> Topic | None:
    """``TopicsDelta.getOrCreateTopicDelta``: the topic's delta, or one made from the delta's *starting*
    image -- so a topic removed earlier in this delta is taken again as the starting image held it (the
    delta's changes to it before the removal lost) and ``TopicsDelta.apply`` brings it back."""
    if topic_id not in d.image.topics:
        start = d.at_start("topics", d.image.topics, topic_id)
        if start is MISSING:
            return None
        back = Topic(start.name, start.id, dict(start.partitions))
        d.put("topics", d.image.topics, topic_id, back)
        d.owned.add(id(back))
        if start.name not in d.image.topic_ids:
            d.put("topic_ids", d.image.topic_ids, start.name, topic_id)
        return back
    t: Topic = d.own("topics", d.image.topics, topic_id, lambda: None)
    return t


def _directories(dirs: list[bytes] | None, replicas: int, record: str) -> tuple[bytes, ...] | None:
    """``checkDirectories`` and ``defaultToMigrating``: None when the record leaves them unchanged."""
    if dirs is None:
        return None
    if dirs and len(dirs) != replicas:
        raise Refused(f"The lengths for replicas and directories do not match: {record}")
    return _migrating(tuple(dirs), replicas)


def _migrating(dirs: tuple[bytes, ...], replicas: int) -> tuple[bytes, ...]:
    return (MIGRATING,) * replicas if all(x == MIGRATING for x in dirs) else dirs


def partition(d: Delta, r: dict) -> None:
    t = _owned_topic(d, r["topicId"])
    if t is None:  # getOrCreateTopicDelta on a topic the image lacks: Kafka's NullPointerException
        raise Refused(f"Unable to find topic {b64(r['topicId'])} for partition {r['partitionId']}")
    dirs = _directories(r["directories"], len(r["replicas"]), "PartitionRecord") or ()
    t.partitions[r["partitionId"]] = PartitionState(
        tuple(r["replicas"]),
        _migrating(dirs, len(r["replicas"])),
        tuple(r["isr"]),
        tuple(r["removingReplicas"]),
        tuple(r["addingReplicas"]),
        r["leader"],
        r["leaderRecoveryState"],
        r["leaderEpoch"],
        r["partitionEpoch"],
        tuple(r["eligibleLeaderReplicas"] or ()),
        tuple(r["lastKnownElr"] or ()),
    )


def merge(p: PartitionState, r: dict) -> PartitionState:
    """``PartitionRegistration.merge(PartitionChangeRecord)``: a null field leaves its value."""
    replicas = p.replicas if r["replicas"] is None else tuple(r["replicas"])
    dirs = None if r["directories"] is None else list(r["directories"])
    if dirs and r["replicas"] is not None and len(dirs) != len(replicas):
        raise Refused("The lengths for replicas and directories do not match: PartitionChangeRecord")
    new_dirs = _migrating(p.directories if dirs is None else tuple(dirs), len(replicas))
    leader, epoch = (p.leader, p.leader_epoch) if r["leader"] == NO_LEADER_CHANGE else (r["leader"], p.leader_epoch + 1)
    recovery = p.leader_recovery_state if r["leaderRecoveryState"] == -1 else r["leaderRecoveryState"]

    def pick(old: tuple[int, ...], new: list[int] | None) -> tuple[int, ...]:
        return old if new is None else tuple(new)

    return PartitionState(
        replicas,
        new_dirs,
        pick(p.isr, r["isr"]),
        pick(p.removing, r["removingReplicas"]),
        pick(p.adding, r["addingReplicas"]),
        leader,
        recovery,
        epoch,
        p.partition_epoch + 1,
        pick(p.elr, r["eligibleLeaderReplicas"]),
        pick(p.last_known_elr, r["lastKnownElr"]),
    )


def partition_change(d: Delta, r: dict) -> None:
    t = _owned_topic(d, r["topicId"])
    current = None if t is None else t.partitions.get(r["partitionId"])
    if t is None or current is None:
        raise Refused(f"Unable to find partition {b64(r['topicId'])}:{r['partitionId']}")
    t.partitions[r["partitionId"]] = merge(current, r)


CLEARED = MappingProxyType({"eligibleLeaderReplicas": (), "lastKnownElr": ()})
NO_CHANGE = MappingProxyType(
    {
        "replicas": None,
        "directories": None,
        "isr": None,
        "removingReplicas": None,
        "addingReplicas": None,
        "leader": NO_LEADER_CHANGE,
        "leaderRecoveryState": -1,
    }
)


def _clear_elr(d: Delta, topic_id: bytes) -> None:
    """``TopicDelta.replay()``: each partition with an ELR or last-known ELR merged with both emptied --
    not on a topic this delta removed (``maybeReplayClearElrRecord``), even one a later record brought back."""
    if topic_id in d.deleted_topics:
        return
    t = d.image.topics[topic_id]
    if not any(p.elr or p.last_known_elr for p in t.partitions.values()):
        return
    t = d.own("topics", d.image.topics, topic_id, lambda: None)
    for pid, p in list(t.partitions.items()):
        if p.elr or p.last_known_elr:
            t.partitions[pid] = merge(p, {**NO_CHANGE, **CLEARED})


def clear_elr(d: Delta, r: dict) -> None:
    """``TopicsDelta.replay(ClearElrRecord)``: one topic by name, or every topic (an empty name); a topic
    removed in this delta is left alone."""
    name = r["topicName"]
    if not name:
        for tid in list(d.image.topics):
            _clear_elr(d, tid)
        return
    found = d.image.topic_ids.get(name)
    if found is None or found not in d.image.topics:
        if _removed_in_delta(d, name):
            return
        raise Refused(f"Unable to clear elr for topic with name {name}: no such topic found.")
    _clear_elr(d, found)


def _removed_in_delta(d: Delta, name: str) -> bool:
    was = d.at_start("topic_ids", d.image.topic_ids, name)
    return was is not MISSING and d.at_start("topics", d.image.topics, was) is not MISSING


def remove_topic(d: Delta, r: dict) -> None:
    """``TopicsDelta.replay(RemoveTopicRecord)`` and ``ConfigurationsDelta.replay(RemoveTopicRecord, name)``:
    the topic's configs are deleted only if the delta's starting image held them."""
    tid = r["topicId"]
    t = d.image.topics.get(tid)
    start = d.at_start("topics", d.image.topics, tid)
    if t is None and start is MISSING:
        raise Refused(f"Unable to delete topic with id {b64(tid)}: no such topic found.")
    name = t.name if t is not None else start.name
    if start is not MISSING:
        d.deleted_topics.add(tid)
    if t is not None:
        d.drop("topics", d.image.topics, tid)
        if d.image.topic_ids.get(name) == tid:
            d.drop("topic_ids", d.image.topic_ids, name)
    resource = (TOPIC_RESOURCE, name)
    if d.at_start("configs", d.image.configs, resource) is not MISSING:
        d.drop("configs", d.image.configs, resource)
