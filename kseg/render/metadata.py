"""``kseg metadata``'s output: the image as one JSON row (``image``, docs/metadata.md) or as text in
sections (cluster, topics like ``kafka-topics --describe``, configs, quotas, ACLs, SCRAM users, delegation
tokens, producer ids), fitting 80 columns.  Enums by Kafka's names, UUIDs in Kafka's base64 form; SCRAM
salts and keys and token HMACs are never kept (:mod:`kseg.ops.metadata.image`), and config values whose
names mark them sensitive are not shown."""

from __future__ import annotations

import base64
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from types import MappingProxyType

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.metadata.image import Broker, Controller, Endpoint, Image, PartitionState, Topic
from kseg.ops.metadata.read import Replay
from kseg.render.txn import iso
from kseg.words import plural

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


def uuid(raw: bytes) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


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


def image_row(replay: Replay, only: Filter = Filter()) -> dict:
    """The one ``image`` row (docs/metadata.md)."""
    im = replay.image
    damaged = replay.damaged
    features = dict(sorted(im.features.items()))
    if im.metadata_version is not None:
        features = {"metadata.version": im.metadata_version, **features}
    topics = [t for t in sorted(im.topics.values(), key=lambda t: t.name) if only.topic(t)]
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
        "topics": [
            {
                "name": t.name,
                "id": uuid(t.id),
                "partitions": [partition_json(n, p) for n, p in sorted(t.partitions.items()) if only.partition(p)],
            }
            for t in topics
        ],
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


# -- text ----------------------------------------------------------------------------------------------------
def _wrap(text: str, indent: int) -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent=" " * (indent + 2), break_on_hyphens=False) or [""]


def _line(out: list[str], text: str, indent: int = 2) -> None:
    out.extend(_wrap(" " * indent + text, indent))


def _ids(values: Iterable[int]) -> str:
    return ",".join(map(str, values)) or "-"


def stop_text(replay: Replay) -> str | None:
    """Why the image stops short of the point asked: where reading or applying stopped."""
    if replay.halt is not None:
        h = replay.halt
        return f"nothing applied from offset {h.offset}, at byte {h.position} of {h.path}"
    damaged = replay.damaged
    if damaged is None:
        return None
    where = f"byte {damaged.position} of " if damaged.position is not None else ""
    return f"not read past {where}{damaged.path}"


def headline(replay: Replay) -> list[str]:
    p = replay.image.provenance
    stop = stop_text(replay)
    if stop is not None:
        head = f"Partial image, as of offset {p.offset} ({stop}): not the cluster's current metadata"
    else:
        head = f"Cluster metadata as of offset {p.offset}"
    out = _wrap(head, 0)
    when = f"epoch {p.epoch}, {iso(p.time)}" if p.offset >= 0 else "nothing applied"
    snap = replay.snapshot
    if snap is None:
        source = "the log from offset 0"
    else:
        source = f"snapshot {snap.path.rsplit('/', 1)[-1]}"
        if replay.last_read is not None and replay.last_read > snap.last_offset:
            source += f" and the log to offset {replay.last_read}"
    _line(out, f"{when}; from {source}")
    return out


def cluster_lines(replay: Replay, only: Filter) -> list[str]:
    im = replay.image
    out = ["", "Features"]
    if im.metadata_version is not None:
        name = METADATA_VERSIONS.get(im.metadata_version, "unknown")
        _line(out, f"metadata.version {im.metadata_version} ({name})")
    for name, level in sorted(im.features.items()):
        _line(out, f"{name} {level}")
    if replay.loader.kraft_version is not None:
        _line(out, f"kraft.version {replay.loader.kraft_version} (from the log's control records)")
    if len(out) == 2:
        _line(out, "none")
    out += ["", f"Controllers ({len(im.controllers)})"]
    for c in sorted(im.controllers.values(), key=lambda c: c.id):
        _line(
            out,
            f"{c.id}  incarnation {uuid(c.incarnation_id)}" + ("  zkMigrationReady" if c.zk_migration_ready else ""),
        )
        _line(out, _endpoint_text(c.endpoints), 6)
    brokers = [b for n, b in sorted(im.brokers.items()) if only.broker(n)]
    out += ["", f"Brokers ({len(brokers)})"]
    for b in brokers:
        state = "fenced" if b.fenced else "unfenced"
        if b.in_controlled_shutdown:
            state += ", in controlled shutdown"
        _line(out, f"{b.id}  epoch {b.epoch}  {state}  rack {b.rack if b.rack is not None else '-'}")
        _line(out, f"incarnation {uuid(b.incarnation_id)}", 6)
        _line(out, _endpoint_text(b.endpoints), 6)
        if b.directories:
            _line(out, "directories " + " ".join(uuid(d) for d in b.directories), 6)
        if b.cordoned_directories:
            _line(out, "cordoned " + " ".join(uuid(d) for d in b.cordoned_directories), 6)
    return out


def _endpoint_text(eps: Iterable[Endpoint]) -> str:
    listed = [
        f"{e.name}://{e.host}:{e.port}"
        + (
            ""
            if e.name == SECURITY_PROTOCOLS.get(e.security_protocol)
            else f" ({SECURITY_PROTOCOLS.get(e.security_protocol, e.security_protocol)})"
        )
        for e in eps
    ]
    return "endpoints " + (" ".join(listed) if listed else "none")


def topic_lines(replay: Replay, only: Filter) -> list[str]:
    topics = [t for t in sorted(replay.image.topics.values(), key=lambda t: t.name) if only.topic(t)]
    out = ["", f"Topics ({len(topics)})"]
    for t in topics:
        _line(out, f"{t.name}  ID {uuid(t.id)}  {plural(len(t.partitions), 'partition')}")
        for pid, p in sorted(t.partitions.items()):
            if only.partition(p):
                _line(out, _partition_text(pid, p), 4)
    return out


def _partition_text(pid: int, p: PartitionState) -> str:
    parts = [
        f"{pid}: leader {p.leader} (epoch {p.leader_epoch})",
        f"replicas {_ids(p.replicas)}",
        f"isr {_ids(p.isr)}",
        f"partition epoch {p.partition_epoch}",
    ]
    if p.elr:
        parts.append(f"elr {_ids(p.elr)}")
    if p.last_known_elr:
        parts.append(f"last known elr {_ids(p.last_known_elr)}")
    if p.adding:
        parts.append(f"adding {_ids(p.adding)}")
    if p.removing:
        parts.append(f"removing {_ids(p.removing)}")
    if p.leader_recovery_state != 0:
        parts.append(RECOVERY_STATES.get(p.leader_recovery_state, str(p.leader_recovery_state)))
    if any(d != bytes(16) for d in p.directories):
        parts.append("directories " + " ".join(uuid(d) for d in p.directories))
    return "  ".join(parts)


def security_lines(replay: Replay, only: Filter) -> list[str]:
    im = replay.image
    row = image_row(replay, only)
    out = ["", f"Configs ({len(row['configs'])})"]
    for c in row["configs"]:
        _line(out, f"{c['resourceType'].lower()} {c['resourceName'] or '(default)'}")
        for k, v in c["configs"].items():
            _line(out, f"{k}={HIDDEN if v is None else v}", 6)
    out += ["", f"Client quotas ({len(row['clientQuotas'])})"]
    for q in row["clientQuotas"]:
        who = ", ".join(f"{k}={'(default)' if v is None else v}" for k, v in q["entity"].items())
        _line(out, f"{who}: " + ", ".join(f"{k}={v:g}" for k, v in q["quotas"].items()))
    out += ["", f"ACLs ({len(row['acls'])})"]
    for a in row["acls"]:
        _line(
            out,
            f"{a['permissionType']} {a['principal']} {a['operation']} from {a['host']} on "
            f"{a['resourceType']}:{a['patternType']}:{a['resourceName']}",
        )
    out += ["", f"SCRAM users ({len(row['scramUsers'])})"]
    for s in row["scramUsers"]:
        _line(out, f"{s['name']}  {s['mechanism']}  {s['iterations']} iterations  credentials present")
    out += ["", f"Delegation tokens ({len(row['delegationTokens'])})"]
    for t in row["delegationTokens"]:
        _line(out, f"{t['tokenId']}  owner {t['owner']}  requester {t['requester']}")
        _line(
            out,
            f"renewers {','.join(t['renewers']) or '-'}  issued {iso(t['issueTimestamp'])}  "
            f"expires {iso(t['expiryTimestamp'])}  max {iso(t['maxTimestamp'])}",
            6,
        )
    out += ["", "Producer IDs"]
    _line(out, f"next producer id {im.next_producer_id}" if im.next_producer_id >= 0 else "none allocated")
    return out


def problem_lines(replay: Replay) -> list[str]:
    faults = replay.loader.faults
    if not faults:
        return []
    out = ["", f"Records Kafka's loader would refuse ({len(faults)}): not applied"]
    for f in faults:
        _line(out, f"offset {f.offset} {f.record}: {f.message}")
    return out


def text_lines(replay: Replay, only: Filter = Filter()) -> list[str]:
    """The image in sections; with --topic only the topics and their configs."""
    out = headline(replay)
    if only.topics:
        out += topic_lines(replay, only)
        row = image_row(replay, only)
        out += ["", f"Configs ({len(row['configs'])})"]
        for c in row["configs"]:
            _line(out, f"{c['resourceType'].lower()} {c['resourceName']}")
            for k, v in c["configs"].items():
                _line(out, f"{k}={HIDDEN if v is None else v}", 6)
    else:
        out += cluster_lines(replay, only) + topic_lines(replay, only) + security_lines(replay, only)
    return out + problem_lines(replay)


def image_is_empty(im: Image) -> bool:
    return not (im.topics or im.brokers or im.controllers or im.features or im.scalars)
