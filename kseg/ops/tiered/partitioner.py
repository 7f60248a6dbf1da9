"""Which ``__remote_log_metadata`` partition holds a topic-partition's remote segments.

``RemoteLogMetadataTopicPartitioner.metadataPartition``: ``Utils.toPositive(Utils.murmur2(bytes)) %
remote.log.metadata.topic.num.partitions`` where ``bytes`` is the big-endian 4-byte form of
``Objects.hash(topicId.getLeastSignificantBits(), topicId.getMostSignificantBits(), partition)`` --
``Arrays.hashCode`` over a ``Long``, a ``Long`` and an ``Integer`` (``31 * h + e.hashCode()`` from 1, in
32-bit ``int`` arithmetic; ``Long.hashCode`` is ``(int) (v ^ (v >>> 32))``).  ``Utils.murmur2`` is
Kafka's 32-bit MurmurHash2 with seed ``0x9747b28c`` (the hash of the default producer partitioner);
``Utils.toPositive`` is ``n & 0x7fffffff``.  The topic has 50 partitions by default
(``TopicBasedRemoteLogMetadataManagerConfig.DEFAULT_REMOTE_LOG_METADATA_TOPIC_PARTITIONS``).
"""

from __future__ import annotations

from kseg.format.murmur2 import murmur2, to_positive
from kseg.format.v2 import java_int

METADATA_TOPIC = "__remote_log_metadata"  # TopicBasedRemoteLogMetadataManagerConfig.REMOTE_LOG_METADATA_TOPIC_NAME
DEFAULT_PARTITIONS = 50
_M32 = 0xFFFFFFFF


def _long_hash(v: int) -> int:
    """``Long.hashCode(v)`` of a signed 64-bit ``v``."""
    u = v & 0xFFFFFFFFFFFFFFFF
    return java_int(u ^ (u >> 32))


def topic_id_partition_hash(topic_id: bytes, partition: int) -> int:
    """``Objects.hash(least, most, partition)`` of a 16-byte topic id (``Uuid``: most significant first)."""
    most = int.from_bytes(topic_id[:8], "big", signed=True)
    least = int.from_bytes(topic_id[8:], "big", signed=True)
    h = 1
    for element in (_long_hash(least), _long_hash(most), java_int(partition)):
        h = java_int(31 * h + element)
    return h


def metadata_partition(topic_id: bytes, partition: int, partitions: int = DEFAULT_PARTITIONS) -> int:
    """The ``__remote_log_metadata`` partition of ``topic_id``-``partition`` among ``partitions``."""
    key = (topic_id_partition_hash(topic_id, partition) & _M32).to_bytes(4, "big")
    return to_positive(murmur2(key)) % partitions
