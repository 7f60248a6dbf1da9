"""Which partition of an internal topic holds a consumer group or a transactional id.

Kafka places a group's offsets and metadata in ``__consumer_offsets`` partition
``Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions`` (``GroupMetadataManager.partitionFor`` in
the classic coordinator, ``GroupCoordinatorService.partitionFor`` in the new one) and a transactional
id's state in ``__transaction_state`` partition ``Utils.abs(transactionalId.hashCode()) %
transaction.state.log.num.partitions`` (``TransactionStateManager.partitionFor``); both topics have 50
partitions by default, and the count used is the topic's own (``BrokerMetadataPublisher``: the metadata's
partition count, the config only before the topic exists).  The same rule in both, checked in Kafka's
source from 2.0 to 4.4 and trunk: ``TransactionStateManager.partitionFor`` is still in core's
``kafka/coordinator/transaction/TransactionStateManager.scala`` in 4.x (docs/coordinator.md, "Where
Kafka's source says so").  The broker leading that partition is the group's (the transaction's)
coordinator, so its directory is the one to dump.

``hashCode`` is Java's ``String.hashCode``: ``s[0]*31^(n-1) + ... + s[n-1]`` in 32-bit ``int``
arithmetic over the string's UTF-16 code units (a character outside the Basic Multilingual Plane
counts as its two surrogates), and ``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0 where ``Math.abs``
would leave it negative.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import NamedTuple

from kseg.limits import INT32_MAX

DEFAULT_PARTITIONS = 50  # offsets.topic.num.partitions and transaction.state.log.num.partitions
GROUP, TRANSACTIONAL_ID = "group", "transactionalId"
TOPICS = MappingProxyType({GROUP: "__consumer_offsets", TRANSACTIONAL_ID: "__transaction_state"})
_INT32_MIN = -INT32_MAX - 1


class Coordinator(NamedTuple):
    """Where one id's state lives: ``topic``-``partition`` of ``partitions``, from ``hash_code``."""

    kind: str  # GROUP or TRANSACTIONAL_ID
    id: str
    hash_code: int  # Java's String.hashCode, a signed 32-bit int
    partitions: int
    partition: int

    @property
    def topic(self) -> str:
        return TOPICS[self.kind]

    @property
    def directory(self) -> str:
        """The partition's directory name in a broker's log directory (``__consumer_offsets-12``)."""
        return f"{self.topic}-{self.partition}"


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode``: ``h = 31*h + c`` over the UTF-16 code units, wrapped to a signed int.

    A lone surrogate (Python's ``surrogateescape`` form of a byte that was not UTF-8) is one code unit,
    as it would be in a Java ``String``."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h > INT32_MAX else h


def utils_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: the absolute value of an ``int``, with ``Integer.MIN_VALUE`` mapped to 0."""
    return 0 if n == _INT32_MIN else abs(n)


def partition_for(kind: str, ident: str, partitions: int = DEFAULT_PARTITIONS) -> Coordinator:
    """The partition of ``TOPICS[kind]`` holding ``ident``: ``Utils.abs(ident.hashCode()) % partitions``."""
    if kind not in TOPICS:
        raise ValueError(f"unknown kind {kind!r}")
    if not 1 <= partitions <= INT32_MAX:
        raise ValueError(f"partitions must be 1..{INT32_MAX}, not {partitions}")
    h = java_string_hash(ident)
    return Coordinator(kind, ident, h, partitions, utils_abs(h) % partitions)
