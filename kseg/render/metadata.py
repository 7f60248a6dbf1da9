"""``kseg metadata``'s output: the image as one JSON row (``image``, docs/metadata.md), Kafka's enum
names, and the filters (the text is :mod:`kseg.render.metadata_text`'s).  UUIDs in Kafka's base64 form;
SCRAM salts and keys and token HMACs are never kept (:mod:`kseg.ops.metadata.image`), and config values
whose names mark them sensitive are not shown."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from types import MappingProxyType

from kseg.jsonlines import SCHEMA_VERSION, dumps
from kseg.ops.metadata.image import Broker, Controller, Endpoint, PartitionState, Topic
from kseg.ops.metadata.image import b64 as uuid
from kseg.ops.metadata.read import Replay

WIDTH = 80
SECURITY_PROTOCOLS = MappingProxyType({0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"})
CONFIG_RESOURCES = MappingProxyType(
    {0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
)
RESOURCE_TYPES = MappingProxyType(
    dict(enumerate(["UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"]))
)
PATTERN_TYPES = MappingProxyType(dict(enumerate(["UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"])))
OPERATIONS = MappingProxyType(
    dict(
        enumerate(
            [
                "UNKNOWN",
                "ANY",
                "ALL",
                "READ",
                "WRITE",
                "CREATE",
                "DELETE",
                "ALTER",
                "DESCRIBE",
                "CLUSTER_ACTION",
                "DESCRIBE_CONFIGS",
                "ALTER_CONFIGS",
                "IDEMPOTENT_WRITE",
                "CREATE_TOKENS",
                "DESCRIBE_TOKENS",
                "TWO_PHASE_COMMIT",
            ]
        )
    )
)
PERMISSIONS = MappingProxyType(dict(enumerate(["UNKNOWN", "ANY", "DENY", "ALLOW"])))
SCRAM_MECHANISMS = MappingProxyType({0: "UNKNOWN", 1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"})
RECOVERY_STATES = MappingProxyType({0: "RECOVERED", 1: "RECOVERING"})
#: MetadataVersion's feature levels (IBP_3_3_IV3 = 7 ... IBP_4_4_IV2 = 33)
METADATA_VERSIONS = MappingProxyType(
    dict(
        zip(
            range(7, 34),
            "3.3-IV3 3.4-IV0 3.5-IV0 3.5-IV1 3.5-IV2 3.6-IV0 3.6-IV1 3.6-IV2 3.7-IV0 3.7-IV1 3.7-IV2 3.7-IV3 "
            "3.7-IV4 3.8-IV0 3.9-IV0 4.0-IV0 4.0-IV1 4.0-IV2 4.0-IV3 4.1-IV0 4.1-IV1 4.2-IV0 4.2-IV1 4.3-IV0 "
            "4.4-IV0 4.4-IV1 4.4-IV2".split(),
            strict=True,
        )
    )
)
SENSITIVE = ("password", "secret", "jaas.config", "keystore.key", "truststore.certificates", "keystore.certificate")
HIDDEN = "(sensitive, not shown)"


def sensitive(name: str) -> bool:
    """A config whose value kseg does not print (a password, a secret, a JAAS config, a PEM key)."""
    return any(word in name.lower() for word in SENSITIVE)


@dataclass(frozen=True)
class Filter:
    """``--topic`` and ``--broker``: topics (and their configs) by name; brokers, and partitions that
    have the broker as a replica, by id."""

    topics: frozenset[str] = frozenset()
    brokers: frozenset[int] = frozenset()

    def topic(self, t: Topic) -> bool:
        return not self.topics or t.name in self.topics

    def partition(self, p: PartitionState) -> bool:
        return not self.brokers or any(b in self.brokers for b in p.replicas)

    def broker(self, node: int) -> bool:
        return not self.brokers or node in self.brokers

    def config(self, resource: tuple[int, str]) -> bool:
        kind, name = resource
        if self.topics and not (kind == 2 and name in self.topics):
            return False
        return not self.brokers or kind != 4 or name in {str(b) for b in self.brokers} or name == ""


# -- JSON ----------------------------------------------------------------------------------------------------
def _endpoints(eps: Iterable[Endpoint]) -> list[dict]:
    return [
        {
            "name": e.name,
            "host": e.host,
            "port": e.port,
            "securityProtocol": SECURITY_PROTOCOLS.get(e.security_protocol, str(e.security_protocol)),
        }
        for e in eps
    ]


def _supported(features: Iterable[tuple[str, int, int]]) -> dict:
    return {name: {"min": low, "max": high} for name, low, high in features}


def _broker_json(b: Broker) -> dict:
    return {
        "id": b.id,
        "epoch": b.epoch,
        "incarnationId": uuid(b.incarnation_id),
        "rack": b.rack,
        "fenced": b.fenced,
        "inControlledShutdown": b.in_controlled_shutdown,
        "endpoints": _endpoints(b.endpoints),
        "directories": [uuid(d) for d in b.directories],
        "cordonedDirectories": None if b.cordoned_directories is None else [uuid(d) for d in b.cordoned_directories],
        "supportedFeatures": _supported(b.features),
    }


def _controller_json(c: Controller) -> dict:
    return {
        "id": c.id,
        "incarnationId": uuid(c.incarnation_id),
        "endpoints": _endpoints(c.endpoints),
        "zkMigrationReady": c.zk_migration_ready,
        "supportedFeatures": _supported(c.features),
    }


def partition_json(pid: int, p: PartitionState) -> dict:
    return {
        "partition": pid,
        "replicas": list(p.replicas),
        "isr": list(p.isr),
        "leader": p.leader,
        "leaderEpoch": p.leader_epoch,
        "partitionEpoch": p.partition_epoch,
        "removingReplicas": list(p.removing),
        "addingReplicas": list(p.adding),
        "elr": list(p.elr),
        "lastKnownElr": list(p.last_known_elr),
        "directories": [uuid(d) for d in p.directories],
        "leaderRecoveryState": RECOVERY_STATES.get(p.leader_recovery_state, str(p.leader_recovery_state)),
    }


def _config_value(name: str, value: str) -> str | None:
    return None if sensitive(name) else value


EVERYTHING = Filter()  # no --topic, no --broker


def topics_of(replay: Replay, only: Filter) -> list[Topic]:
    return [t for t in sorted(replay.image.topics.values(), key=lambda t: t.name) if only.topic(t)]


def topic_json(t: Topic, only: Filter = EVERYTHING) -> dict:
    partitions = [partition_json(n, p) for n, p in sorted(t.partitions.items()) if only.partition(p)]
    return {"name": t.name, "id": uuid(t.id), "partitions": partitions}


def image_json(replay: Replay, only: Filter = EVERYTHING) -> Iterator[str]:
    """The ``image`` row's text in pieces, a topic at a time: the image's size in memory once, not thrice."""
    head, tail = dumps(image_row(replay, only, whole=False)).split('"topics":[]', 1)  # the key's first place
    yield head + '"topics":['
    for i, t in enumerate(topics_of(replay, only)):
        yield ("," if i else "") + dumps(topic_json(t, only))
    yield "]" + tail


def image_row(replay: Replay, only: Filter = EVERYTHING, whole: bool = True) -> dict:
    """The one ``image`` row (docs/metadata.md); ``whole=False``: its topics left out (:func:`image_json`)."""
    im = replay.image
    damaged = replay.damaged
    features = dict(sorted(im.features.items()))
    if im.metadata_version is not None:
        features = {"metadata.version": im.metadata_version, **features}
    topics = topics_of(replay, only) if whole else []
    return {
        "type": "image",
        "v": SCHEMA_VERSION,
        "directory": replay.directory,
        "offset": im.provenance.offset,
        "epoch": im.provenance.epoch,
        "time": im.provenance.time,
        "complete": not replay.partial,
        "stoppedAt": None if damaged is None else damaged.as_json(),
        "halted": halt_json(replay),
        "snapshot": None if replay.snapshot is None else replay.snapshot.path,
        "kraftVersion": replay.loader.kraft_version,
        "openTransaction": replay.loader.begun_at,
        "features": features,
        "brokers": [_broker_json(b) for n, b in sorted(im.brokers.items()) if only.broker(n)],
        "controllers": [_controller_json(c) for _, c in sorted(im.controllers.items())],
        "topics": [topic_json(t, only) for t in topics] if whole else [],
        "configs": [
            {
                "resourceType": CONFIG_RESOURCES.get(kind, str(kind)),
                "resourceName": name,
                "configs": {k: _config_value(k, v) for k, v in sorted(values.items())},
            }
            for (kind, name), values in sorted(im.configs.items())
            if only.config((kind, name))
        ],
        "producerIds": {"nextProducerId": im.next_producer_id},
        "acls": [
            {
                "id": uuid(a.id),
                "resourceType": RESOURCE_TYPES.get(a.resource_type, str(a.resource_type)),
                "resourceName": a.resource_name,
                "patternType": PATTERN_TYPES.get(a.pattern_type, str(a.pattern_type)),
                "principal": a.principal,
                "host": a.host,
                "operation": OPERATIONS.get(a.operation, str(a.operation)),
                "permissionType": PERMISSIONS.get(a.permission_type, str(a.permission_type)),
            }
            for a in sorted(im.acls.values(), key=lambda a: (a.resource_type, a.resource_name, a.principal, a.id))
        ],
        "clientQuotas": [
            {"entity": dict(entity), "quotas": dict(sorted(q.items()))}
            for entity, q in sorted(im.quotas.items(), key=_entity_key)
        ],
        "scramUsers": [
            {
                "name": s.name,
                "mechanism": SCRAM_MECHANISMS.get(s.mechanism, str(s.mechanism)),
                "iterations": s.iterations,
            }
            for _, s in sorted(im.scram.items(), key=lambda kv: (kv[0][1], kv[0][0]))
        ],
        "delegationTokens": [
            {
                "tokenId": t.token_id,
                "owner": t.owner,
                "requester": t.requester,
                "renewers": list(t.renewers),
                "issueTimestamp": t.issue_timestamp,
                "maxTimestamp": t.max_timestamp,
                "expiryTimestamp": t.expiry_timestamp,
            }
            for _, t in sorted(im.tokens.items())
        ],
        "problems": [{"offset": f.offset, "record": f.record, "message": f.message} for f in replay.loader.faults],
    }


def halt_json(replay: Replay) -> dict | None:
    """Where a record that is not a metadata record halted the replay (``halted``), or None."""
    h = replay.halt
    return None if h is None else {"offset": h.offset, "path": h.path, "position": h.position, "reason": h.reason}


def _entity_key(item: tuple) -> list:
    return [(kind, name or "") for kind, name in item[0]]
