"""Each metadata record's effect on the image, as Kafka's ``MetadataDelta.replay`` hands it to the section's
delta (``metadata/src/main/java/org/apache/kafka/image/*Delta.java``), one function per record type (the
topics' in :mod:`kseg.ops.metadata.topics`).

A record Kafka's delta refuses (``IllegalStateException``/``RuntimeException``: fencing an unregistered
broker, removing an unknown topic or ACL, ...) raises :class:`Refused` with Kafka's message; the loader
(:mod:`kseg.ops.metadata.loader`) reports it and goes on, as a broker's ``MetadataLoader`` fault handler does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType

from kseg.ops.metadata.image import MISSING, Acl, Broker, Controller, Delta, Endpoint, Refused, Scram, Token, b64
from kseg.ops.metadata.topics import clear_elr, partition, partition_change, remove_topic, topic

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"


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
        raise Refused(f"Failed to find existing ACL with ID {b64(r['id'])} in either image or changes")
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
