"""The cluster metadata image (Kafka's ``MetadataImage``) and the delta being built on it.

Kafka builds a ``MetadataDelta`` over an immutable ``MetadataImage`` and, when the loader flushes
(``MetadataBatchLoader.maybeFlushBatches``), applies it into the next image; an aborted metadata
transaction's delta is dropped.  Here the image is changed in place and the :class:`Delta` keeps an undo
log, so dropping a delta is undoing it, and what a few records ask of the delta's *starting* image
(``ConfigurationsDelta.replay(RemoveTopicRecord)``, ``AclsDelta.replay(RemoveAccessControlEntryRecord)``,
``TopicsDelta.replay(RemoveTopicRecord)``) is remembered the first time the delta touches a key.  The
image's size bounds the memory, never the log's: a delta holds only what it changed.

Values are Kafka's as read (UUIDs as 16 bytes, enums as their ids); :mod:`kseg.render.metadata` names them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

MISSING: Any = object()  # a key the mapping did not hold, in the undo log


class Refused(Exception):
    """A record Kafka's delta throws on (``IllegalStateException``, ``RuntimeException``): the message is
    Kafka's; the loader reports it and goes on."""


def b64(raw: bytes) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 without padding, in Kafka's messages."""
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass(frozen=True, slots=True)
class Endpoint:
    name: str
    host: str
    port: int
    security_protocol: int


@dataclass(frozen=True, slots=True)
class Broker:
    """``BrokerRegistration`` (``fromRecord``, ``cloneWith``)."""

    id: int
    epoch: int
    incarnation_id: bytes
    endpoints: tuple[Endpoint, ...]
    features: tuple[tuple[str, int, int], ...]  # name, min, max supported
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    is_migrating_zk_broker: bool
    directories: tuple[bytes, ...]  # sorted, as BrokerRegistration's constructor keeps them
    cordoned_directories: tuple[bytes, ...] | None


@dataclass(frozen=True, slots=True)
class Controller:
    """``ControllerRegistration`` (``Builder(RegisterControllerRecord)``)."""

    id: int
    incarnation_id: bytes
    zk_migration_ready: bool
    endpoints: tuple[Endpoint, ...]
    features: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True, slots=True)
class PartitionState:
    """``PartitionRegistration``: directories are one per replica (``DirectoryId.MIGRATING`` when none)."""

    replicas: tuple[int, ...]
    directories: tuple[bytes, ...]
    isr: tuple[int, ...]
    removing: tuple[int, ...]
    adding: tuple[int, ...]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    elr: tuple[int, ...]
    last_known_elr: tuple[int, ...]


@dataclass(slots=True)
class Topic:
    name: str
    id: bytes
    partitions: dict[int, PartitionState] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Acl:
    """``StandardAclWithId``: enums as Kafka's byte ids."""

    id: bytes
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class Scram:
    """``ScramCredentialData`` without its salt, stored key and server key (never shown)."""

    name: str
    mechanism: int
    iterations: int


@dataclass(frozen=True, slots=True)
class Token:
    """``DelegationTokenData`` (``TokenInformation``) without its HMAC."""

    token_id: str
    owner: str
    requester: str
    renewers: tuple[str, ...]
    issue_timestamp: int
    max_timestamp: int
    expiry_timestamp: int


@dataclass
class Provenance:
    """``MetadataProvenance``: the last offset, epoch and append time the image contains (-1: none)."""

    offset: int = -1
    epoch: int = -1
    time: int = -1


class Image:
    """``MetadataImage``: every section, keyed as Kafka keys them."""

    def __init__(self) -> None:
        self.provenance = Provenance()
        self.features: dict[str, int] = {}  # finalized levels, metadata.version apart
        self.scalars: dict[str, int] = {}  # metadataVersion, nextProducerId (absent: none)
        self.brokers: dict[int, Broker] = {}
        self.controllers: dict[int, Controller] = {}
        self.topics: dict[bytes, Topic] = {}
        self.topic_ids: dict[str, bytes] = {}  # TopicsImage.topicsByName
        self.configs: dict[tuple[int, str], dict[str, str]] = {}
        self.quotas: dict[tuple[tuple[str, str | None], ...], dict[str, float]] = {}
        self.acls: dict[bytes, Acl] = {}
        self.scram: dict[tuple[int, str], Scram] = {}
        self.tokens: dict[str, Token] = {}

    @property
    def metadata_version(self) -> int | None:
        return self.scalars.get("metadataVersion")

    @property
    def next_producer_id(self) -> int:
        """``ProducerIdsImage.nextProducerId`` (-1 in the empty image)."""
        return self.scalars.get("nextProducerId", -1)

    def topic_named(self, name: str) -> Topic | None:
        tid = self.topic_ids.get(name)
        return None if tid is None else self.topics.get(tid)


class Delta:
    """The changes since the last flush, as an undo log over the image, and what the starting image held
    of each key the delta touched (``started``)."""

    def __init__(self, image: Image) -> None:
        self.image = image
        self.undo: list[tuple[dict, Any, Any]] = []
        self.started: dict[tuple[str, Any], Any] = {}  # (section, key) -> its value in the starting image
        self.owned: set[int] = set()  # inner dicts already copied by this delta (copy on first write)
        self.deleted_topics: set[bytes] = set()  # TopicsDelta.deletedTopicIds: starting-image topics removed
        self.records = 0

    @property
    def empty(self) -> bool:
        return not self.undo

    def at_start(self, section: str, mapping: dict, key: Any) -> Any:
        """What ``mapping[key]`` held when the delta began (MISSING: nothing)."""
        return self.started.get((section, key), mapping.get(key, MISSING))

    def put(self, section: str, mapping: dict, key: Any, value: Any) -> None:
        self._touch(section, mapping, key)
        mapping[key] = value

    def drop(self, section: str, mapping: dict, key: Any) -> None:
        if key in mapping:
            self._touch(section, mapping, key)
            del mapping[key]

    def own(self, section: str, mapping: dict, key: Any, fresh: Any) -> Any:
        """``mapping[key]`` made this delta's to change in place: copied on the delta's first write
        (``fresh()`` when absent), so an undo puts the image's object back."""
        current = mapping.get(key, MISSING)
        if current is not MISSING and id(current) in self.owned:
            return current
        mine = fresh() if current is MISSING else _copy(current)
        self.put(section, mapping, key, mine)
        self.owned.add(id(mine))
        return mine

    def _touch(self, section: str, mapping: dict, key: Any) -> None:
        old = mapping.get(key, MISSING)
        self.started.setdefault((section, key), old)
        self.undo.append((mapping, key, old))

    def rollback(self) -> None:
        """Drop the delta: the image as it was when the delta began."""
        for mapping, key, old in reversed(self.undo):
            if old is MISSING:
                mapping.pop(key, None)
            else:
                mapping[key] = old
        self.clear()

    def clear(self) -> None:
        """The delta applied (``MetadataDelta.apply``): the next one starts from this image."""
        self.undo.clear()
        self.started.clear()
        self.owned.clear()
        self.deleted_topics.clear()
        self.records = 0


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, Topic):
        return Topic(value.name, value.id, dict(value.partitions))
    raise TypeError(f"cannot copy {type(value).__name__}")  # pragma: no cover - a programming error
