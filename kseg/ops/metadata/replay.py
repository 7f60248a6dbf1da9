"""Each metadata record's effect on the image, as Kafka's ``MetadataDelta.replay`` hands it to the section's
delta (``metadata/src/main/java/org/apache/kafka/image/*Delta.java``), one function per record type.

A record Kafka's delta refuses (``IllegalStateException``/``RuntimeException``: fencing an unregistered
broker, removing an unknown topic or ACL, ...) raises :class:`Refused` with Kafka's message; the loader
(:mod:`kseg.ops.metadata.loader`) reports it and goes on, as a broker's ``MetadataLoader`` fault handler does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType

from kseg.ops.metadata.image import (
    MISSING,
    Acl,
    Broker,
    Controller,
    Delta,
    Endpoint,
    PartitionState,
    Scram,
    Token,
    Topic,
)

MIGRATING = bytes(16)  # DirectoryId.MIGRATING
NO_LEADER_CHANGE = -2  # PartitionChangeRecord.Leader's default
TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"


class Refused(Exception):
    """A record Kafka's delta throws on: the message is Kafka's."""


def _endpoints(entries: list[dict]) -> tuple[Endpoint, ...]:
    # BrokerRegistration keeps a map by listener name: the last of a name wins
    by_name = {e["name"]: Endpoint(e["name"], e["host"], e["port"], e["securityProtocol"]) for e in entries}
    return tuple(by_name[n] for n in sorted(by_name))


def _features(entries: list[dict]) -> tuple[tuple[str, int, int], ...]:
    by_name = {f["name"]: (f["name"], f["minSupportedVersion"], f["maxSupportedVersion"]) for f in entries}
    return tuple(by_name[n] for n in sorted(by_name))


def _sorted_uuids(values: list[bytes]) -> tuple[bytes, ...]:
    """``Uuid::compareTo`` order (each half a signed long), as ``BrokerRegistration`` sorts its directories."""
    return tuple(
        sorted(
            values, key=lambda u: (int.from_bytes(u[:8], "big", signed=True), int.from_bytes(u[8:], "big", signed=True))
        )
    )


def _uuid_list(values: list[bytes] | None) -> tuple[bytes, ...] | None:
    return None if values is None else tuple(values)


# -- cluster: ClusterDelta --------------------------------------------------------------------------------
def register_broker(d: Delta, r: dict) -> None:
    broker = Broker(
        r["brokerId"],
        r["brokerEpoch"],
        r["incarnationId"],
        _endpoints(r["endPoints"]),
        _features(r["features"]),
        r["rack"],
        r["fenced"],
        r["inControlledShutdown"],
        r["isMigratingZkBroker"],
        _sorted_uuids(r["logDirs"]),
        _uuid_list(r["cordonedLogDirs"]),
    )
    d.put("brokers", d.image.brokers, broker.id, broker)


def unregister_broker(d: Delta, r: dict) -> None:
    d.drop("brokers", d.image.brokers, r["brokerId"])


def _broker_or_refuse(d: Delta, broker_id: int, epoch: int, action: str) -> Broker:
    """``ClusterDelta.getBrokerOrThrow``."""
    broker = d.image.brokers.get(broker_id)
    if broker is None:
        raise Refused(f"Tried to {action} broker {broker_id}, but that broker was not registered.")
    if broker.epoch != epoch:
        raise Refused(
            f"Tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not match the current "
            f"broker epoch, {broker.epoch}"
        )
    return broker


def fence_broker(d: Delta, r: dict) -> None:
    broker = _broker_or_refuse(d, r["id"], r["epoch"], "fence")
    d.put("brokers", d.image.brokers, broker.id, replace(broker, fenced=True))


def unfence_broker(d: Delta, r: dict) -> None:
    broker = _broker_or_refuse(d, r["id"], r["epoch"], "unfence")
    d.put("brokers", d.image.brokers, broker.id, replace(broker, fenced=False))


FENCING = MappingProxyType({1: True, 0: None, -1: False})  # BrokerRegistrationFencingChange: FENCE, NONE, UNFENCE
CONTROLLED_SHUTDOWN = MappingProxyType({0: None, 1: True})  # BrokerRegistrationInControlledShutdownChange


def broker_registration_change(d: Delta, r: dict) -> None:
    broker = _broker_or_refuse(d, r["brokerId"], r["brokerEpoch"], "change")
    if r["fenced"] not in FENCING:
        raise Refused(f"Unable to replay the record: unknown value for fenced field: {r['fenced']}")
    if r["inControlledShutdown"] not in CONTROLLED_SHUTDOWN:
        raise Refused(
            f"Unable to replay the record: unknown value for inControlledShutdown field: {r['inControlledShutdown']}"
        )
    fenced, shutdown = FENCING[r["fenced"]], CONTROLLED_SHUTDOWN[r["inControlledShutdown"]]
    dirs = r["logDirs"]  # an empty list changes nothing
    new = replace(
        broker,
        fenced=broker.fenced if fenced is None else fenced,
        in_controlled_shutdown=broker.in_controlled_shutdown if shutdown is None else shutdown,
        directories=_sorted_uuids(dirs) if dirs else broker.directories,
        cordoned_directories=broker.cordoned_directories
        if r["cordonedLogDirs"] is None
        else tuple(r["cordonedLogDirs"]),
    )
    if new != broker:
        d.put("brokers", d.image.brokers, broker.id, new)


def register_controller(d: Delta, r: dict) -> None:
    for e in r["endPoints"]:
        if e["securityProtocol"] not in (0, 1, 2, 3):
            raise Refused(f"Unknown security protocol {e['securityProtocol']}")
    c = Controller(
        r["controllerId"],
        r["incarnationId"],
        r["zkMigrationReady"],
        _endpoints(r["endPoints"]),
        _features(r["features"]),
    )
    d.put("controllers", d.image.controllers, c.id, c)


def unregister_controller(d: Delta, r: dict) -> None:
    d.drop("controllers", d.image.controllers, r["controllerId"])


# -- topics: TopicsDelta, TopicDelta, PartitionRegistration ----------------------------------------------
def topic(d: Delta, r: dict) -> None:
    d.put("topics", d.image.topics, r["topicId"], Topic(r["name"], r["topicId"]))
    d.put("topic_ids", d.image.topic_ids, r["name"], r["topicId"])
    d.owned.add(id(d.image.topics[r["topicId"]]))


def _owned_topic(d: Delta, topic_id: bytes) -> Topic | None:
    if topic_id not in d.image.topics:
        return None
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
        raise Refused(f"Unable to find topic {_b64(r['topicId'])} for partition {r['partitionId']}")
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
        raise Refused(f"Unable to find partition {_b64(r['topicId'])}:{r['partitionId']}")
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
    """``TopicDelta.replay()``: each partition with an ELR or last-known ELR merged with both emptied."""
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
        raise Refused(f"Unable to delete topic with id {_b64(tid)}: no such topic found.")
    name = t.name if t is not None else start.name
    if t is not None:
        d.drop("topics", d.image.topics, tid)
        if d.image.topic_ids.get(name) == tid:
            d.drop("topic_ids", d.image.topic_ids, name)
    resource = (TOPIC_RESOURCE, name)
    if d.at_start("configs", d.image.configs, resource) is not MISSING:
        d.drop("configs", d.image.configs, resource)


# -- configs, features, quotas, producer ids ------------------------------------------------------------
def config(d: Delta, r: dict) -> None:
    """``ConfigurationDelta.replay``: a null value deletes the key; an empty resource leaves the image."""
    resource = (r["resourceType"], r["resourceName"])
    configs = d.own("configs", d.image.configs, resource, dict)
    if r["value"] is None:
        configs.pop(r["name"], None)
    else:
        configs[r["name"]] = r["value"]
    if not configs:
        d.drop("configs", d.image.configs, resource)


def feature_level(d: Delta, r: dict) -> None:
    """``FeaturesDelta.replay``: metadata.version kept apart, kraft.version skipped (KAFKA-18979), a level of
    0 removes the feature."""
    name, level = r["name"], r["featureLevel"]
    if name == METADATA_VERSION:
        d.put("scalars", d.image.scalars, "metadataVersion", level)
    elif name == KRAFT_VERSION:
        return
    elif level == 0:
        d.drop("features", d.image.features, name)
    else:
        d.put("features", d.image.features, name, level)


def client_quota(d: Delta, r: dict) -> None:
    """``ClientQuotaDelta.replay``; an entity with no quota left leaves the image."""
    entity = tuple(sorted(((e["entityType"], e["entityName"]) for e in r["entity"]), key=lambda e: e[0]))
    quotas = d.own("quotas", d.image.quotas, entity, dict)
    if r["remove"]:
        quotas.pop(r["key"], None)
    else:
        quotas[r["key"]] = r["value"]
    if not quotas:
        d.drop("quotas", d.image.quotas, entity)


def producer_ids(d: Delta, r: dict) -> None:
    d.put("scalars", d.image.scalars, "nextProducerId", r["nextProducerId"])


# -- security: AclsDelta, ScramDelta, DelegationTokenDelta --------------------------------------------------
def acl(d: Delta, r: dict) -> None:
    a = Acl(
        r["id"],
        r["resourceType"],
        r["resourceName"],
        r["patternType"],
        r["principal"],
        r["host"],
        r["operation"],
        r["permissionType"],
    )
    d.put("acls", d.image.acls, a.id, a)


def remove_acl(d: Delta, r: dict) -> None:
    """Known to the starting image or added in this delta, else Kafka's ``IllegalStateException``."""
    if r["id"] not in d.image.acls and d.at_start("acls", d.image.acls, r["id"]) is MISSING:
        raise Refused(f"Failed to find existing ACL with ID {_b64(r['id'])} in either image or changes")
    d.drop("acls", d.image.acls, r["id"])


def scram(d: Delta, r: dict) -> None:
    s = Scram(r["name"], r["mechanism"], r["iterations"])  # salt, stored key and server key never kept
    d.put("scram", d.image.scram, (s.mechanism, s.name), s)


def remove_scram(d: Delta, r: dict) -> None:
    d.drop("scram", d.image.scram, (r["mechanism"], r["name"]))


def token(d: Delta, r: dict) -> None:
    t = Token(
        r["tokenId"],
        r["owner"],
        r["requester"],
        tuple(r["renewers"]),
        r["issueTimestamp"],
        r["maxTimestamp"],
        r["expirationTimestamp"],
    )  # the HMAC is never kept
    d.put("tokens", d.image.tokens, t.token_id, t)


def remove_token(d: Delta, r: dict) -> None:
    d.drop("tokens", d.image.tokens, r["tokenId"])


def nothing(d: Delta, r: dict) -> None:
    """NoOpRecord; ZkMigrationStateRecord (a no-op since 4.0)."""


#: MetadataDelta.replay's switch: record name -> effect
EFFECTS: Mapping[str, Callable[[Delta, dict], None]] = MappingProxyType(
    {
        "RegisterBrokerRecord": register_broker,
        "UnregisterBrokerRecord": unregister_broker,
        "TopicRecord": topic,
        "PartitionRecord": partition,
        "ConfigRecord": config,
        "PartitionChangeRecord": partition_change,
        "FenceBrokerRecord": fence_broker,
        "UnfenceBrokerRecord": unfence_broker,
        "RemoveTopicRecord": remove_topic,
        "DelegationTokenRecord": token,
        "UserScramCredentialRecord": scram,
        "FeatureLevelRecord": feature_level,
        "ClientQuotaRecord": client_quota,
        "ProducerIdsRecord": producer_ids,
        "BrokerRegistrationChangeRecord": broker_registration_change,
        "AccessControlEntryRecord": acl,
        "ClearElrRecord": clear_elr,
        "RemoveAccessControlEntryRecord": remove_acl,
        "RemoveUserScramCredentialRecord": remove_scram,
        "RemoveDelegationTokenRecord": remove_token,
        "NoOpRecord": nothing,
        "ZkMigrationStateRecord": nothing,
        "RegisterControllerRecord": register_controller,
        "UnregisterControllerRecord": unregister_controller,
    }
)


def apply(d: Delta, name: str, record: dict) -> None:
    """``MetadataDelta.replay(record)``: raises :class:`Refused` where Kafka throws."""
    effect = EFFECTS.get(name)
    if effect is None:  # MetadataRecordType's name: BeginTransactionRecord -> BEGIN_TRANSACTION_RECORD
        raise Refused("Unknown metadata record type " + re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).upper())
    effect(d, record)
    d.records += 1


def _b64(raw: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(raw).decode().rstrip("=")
