"""``--transaction-log-decoder``: ``__transaction_state`` records.

Kafka's ``TransactionLog.formatRecordKeyAndValue`` (``kafka.coordinator.transaction``):

* key = version int16 | ``TransactionLogKey`` (valid version 0).  Another
  version prints ``unknown::version=V`` and no payload; version 0 prints
  ``transaction_metadata::transactionalId=<id>``.
* value = version int16 | ``TransactionLogValue`` (valid 0-1), or null:
  ``<DELETE>``.  Otherwise the payload is::

    producerId:<pid>,producerEpoch:<epoch>,state=<State>,partitions=[t-0,t-1],txnLastUpdateTimestamp=<ms>,txnTimeoutMs=<ms>

  ``state`` is the ``TransactionState`` name for the status byte (Empty,
  Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead,
  PrepareEpochFence).  The partitions (none for Empty) are ``TopicPartition``s
  collected in a Scala 2.13 ``mutable.HashSet`` and print in that set's
  iteration order (:class:`ScalaHashSetOrder`), not in record order.

Kafka's tool has no error handling here: any failure (unknown value
version, unknown state, a truncated record, a null key) kills it.  kseg raises
:class:`~kseg.decoders.base.UncaughtJavaException` with Kafka's message.
"""

from __future__ import annotations

from typing import Any

from kseg.decoders import schema
from kseg.decoders.base import UncaughtJavaException
from kseg.decoders.coordinator import _CoordinatorParser
from kseg.decoders.decode import read
from kseg.decoders.jvm import (
    IllegalArgumentException,
    IllegalStateException,
    JavaException,
    NullPointerException,
    int32,
    java_string_hash,
)
from kseg.decoders.wire import Reader
from kseg.format import releases
from kseg.format.releases import Release

#: ``TransactionState.fromId`` (tests/decoders/test_parsers.py restates it from Kafka on purpose: a test
#: of this table must not read it)
TRANSACTION_STATES = (
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
)
#: ``TransactionVersion`` feature levels (``fromFeatureLevel`` allows unstable ones).
TRANSACTION_VERSIONS = (0, 1, 2)

_KEY_VERSIONS = (0, 0)
_VALUE_VERSIONS = (0, 1)


def topic_partition_hash(topic: str | None, partition: int) -> int:
    """``TopicPartition.hashCode()``."""
    h = 31 + partition
    return int32(31 * h + (0 if topic is None else java_string_hash(topic)))


class ScalaHashSetOrder:
    """Iteration order of a Scala 2.13 ``mutable.HashSet`` built by successive ``++=``.

    The set is a table of ``2**k`` buckets (16 to start, load factor 0.75);
    an element's bucket is ``improved & (len - 1)`` with ``improved = h ^ (h >>>
    16)``; a bucket keeps its elements sorted by ``improved`` (a signed int).
    ``++=`` first grows the table for the added set's size; a set of up to 4
    elements is then added one by one (each may double the table), a larger
    (CHAMP) set without further growth.  Iteration walks the buckets in order.
    """

    def __init__(self) -> None:
        self.length = 16
        self.threshold = 12
        self.entries: dict = {}  # element -> (improved hash, insertion number)

    @staticmethod
    def _table_size_for(capacity: int) -> int:
        return min(1 << (max(capacity - 1, 4).bit_length() - 1) << 1, 1 << 30)

    def _grow(self, new_length: int) -> None:
        self.length = new_length
        self.threshold = int(new_length * 0.75)

    def add_all(self, elements: list, hashes: list[int]) -> None:
        """``set ++= immutableSet`` where ``elements`` are distinct, with their ``hashCode``s."""
        target = self._table_size_for(int((len(elements) + 1) / 0.75))
        if target > self.length:
            self._grow(target)
        one_by_one = len(elements) <= 4
        for elem, h in zip(elements, hashes, strict=True):
            if one_by_one and len(self.entries) + 1 >= self.threshold:
                self._grow(self.length * 2)
            if elem not in self.entries:
                u = h & 0xFFFFFFFF
                self.entries[elem] = (int32(u ^ (u >> 16)), len(self.entries))

    def ordered(self) -> list:
        mask = self.length - 1
        return sorted(self.entries, key=lambda e: (self.entries[e][0] & mask, self.entries[e][0], self.entries[e][1]))


def format_partitions(partitions: list[dict]) -> str:
    """``topicPartitions.mkString("[", ",", "]")`` after ``addPartitions`` per schema entry."""
    order = ScalaHashSetOrder()
    for entry in partitions:
        topic = entry["topic"]
        distinct = list(dict.fromkeys((topic, p) for p in entry["partitionIds"]))
        order.add_all(distinct, [topic_partition_hash(t, p) for t, p in distinct])
    return "[" + ",".join(f"{t}-{p}" for t, p in order.ordered()) + "]"


def _read_key(key: bytes | None) -> tuple[bool, int, str | None]:
    """``readTxnRecordKey``: (known version?, version, transactional id)."""
    if key is None:
        raise NullPointerException('Cannot invoke "java.nio.ByteBuffer.getShort()" because "buffer" is null')
    r = Reader(key)
    version = r.int16()
    if _KEY_VERSIONS[0] <= version <= _KEY_VERSIONS[1]:
        return True, version, read(schema.message("TransactionLogKey").struct, r, version)["transactionalId"]
    return False, version, None


def _format_value(value: bytes, kafka_28: bool = False) -> str:
    r = Reader(value)
    version = r.int16()
    if not _VALUE_VERSIONS[0] <= version <= (0 if kafka_28 else _VALUE_VERSIONS[1]):  # 2.8: version 0 only
        raise IllegalStateException(f"Unknown version {version} from the transaction log message value")
    v = read(schema.message("TransactionLogValue").struct, r, version)
    status = v["transactionStatus"]
    if not 0 <= status < len(TRANSACTION_STATES):
        if kafka_28:  # TransactionMetadata.byteToState
            raise IllegalStateException(f"Unknown transaction state byte {status} from the transaction status message")
        raise IllegalStateException(f"Unknown transaction state id {status} from the transaction status message")
    state = TRANSACTION_STATES[status]
    if v["clientTransactionVersion"] not in TRANSACTION_VERSIONS:
        raise IllegalArgumentException(
            f"No feature:transaction.version with feature level {v['clientTransactionVersion']}"
        )
    partitions = "[]"
    if state != "Empty":
        if v["transactionPartitions"] is None:
            raise NullPointerException(
                'Cannot invoke "java.util.List.forEach(java.util.function.Consumer)" because the return value of '
                '"org.apache.kafka.coordinator.transaction.generated.TransactionLogValue.transactionPartitions()" '
                "is null"
            )
        partitions = format_partitions(v["transactionPartitions"])
    return (
        f"producerId:{v['producerId']},producerEpoch:{v['producerEpoch']},state={state},"
        f"partitions={partitions},txnLastUpdateTimestamp={v['transactionLastUpdateTimestampMs']},"
        f"txnTimeoutMs={v['transactionTimeoutMs']}"
    )


def format_record_key_and_value(
    key: bytes | None, value: bytes | None, kafka_28: bool = False
) -> tuple[str, str | None]:
    """``TransactionLog.formatRecordKeyAndValue``; raises :class:`JavaException` where Kafka throws.

    ``kafka_28``: Kafka 2.8's ``TransactionLog.scala@3893458``: an unknown key version is
    ``IllegalStateException`` "Unknown version V from the transaction log message" (3.0: ``unknown::version=V``),
    a value of version 1 "Unknown version 1 from the transaction log message value"."""
    known, version, transactional_id = _read_key(key)
    if not known:
        if kafka_28:
            raise IllegalStateException(f"Unknown version {version} from the transaction log message")
        return f"unknown::version={version}", None
    key_text = f"transaction_metadata::transactionalId={transactional_id}"
    return key_text, "<DELETE>" if value is None else _format_value(value, kafka_28)


class JsonTransactionLogParser(_CoordinatorParser):
    """Kafka 4.1+'s ``TransactionLogMessageParser`` (a ``CoordinatorRecordMessageParser`` over
    ``TransactionCoordinatorRecordSerde``, KAFKA-18616): key ``{"type":"0","data":{...}}``, value
    ``{"version":"V","data":{...}}``.  From 4.4 (KAFKA-20712) ``transactionStatus`` is the
    ``TransactionState`` name, or the id as a string for an unknown id."""

    types = {0: "TransactionLog"}
    topic_name = "transaction log"  # not printed: 4.1+ says "the specified decoder"

    def value_tree(self, name: str, value: dict[str, Any], version: int) -> dict[str, Any]:
        tree = super().value_tree(name, value, version)
        if self.release.txn_status_name and name == "TransactionLogValue":
            sid = value["transactionStatus"]
            tree["transactionStatus"] = TRANSACTION_STATES[sid] if 0 <= sid < len(TRANSACTION_STATES) else str(sid)
        return tree


class TransactionLogMessageParser:
    """``--transaction-log-decoder``, Kafka's ``TransactionLogMessageParser``: up to 4.0 the text of
    ``TransactionLog.formatRecordKeyAndValue``; from 4.1 :class:`JsonTransactionLogParser`'s JSON."""

    def __init__(self, release: Release = releases.LATEST) -> None:
        self.release = release
        self._json = JsonTransactionLogParser(release) if release.txn_log_json else None

    def parse(self, offset: int, key: bytes | None, value: bytes | None) -> tuple[str | None, str | None]:
        if self._json is not None:
            return self._json.parse(offset, key, value)
        try:
            return format_record_key_and_value(key, value, self.release.coordinator_28)
        except JavaException as exc:
            raise UncaughtJavaException(exc, offset) from None
