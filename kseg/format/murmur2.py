"""Kafka's key hash: ``Utils.murmur2`` and ``Utils.toPositive`` (clients, ``org.apache.kafka.common.utils``).

``Utils.murmur2`` is the 32-bit MurmurHash2 with seed ``0x9747b28c`` over a byte array, in Java's ``int``
arithmetic (wrapping multiplications, ``>>>`` shifts); the producer's default partitioner
(``BuiltInPartitioner.partitionForKey``) and the tiered-storage metadata partitioner
(``RemoteLogMetadataTopicPartitioner``) both hash with it.  ``Utils.toPositive`` clears the sign bit.
Checked against Kafka's ``UtilsTest.testMurmur2`` vectors and values Kafka's own ``Utils.murmur2`` computed
(``tests/ops/grep/test_partitioner.py``, ``tests/ops/tiered/test_partitioner.py``).
"""

from __future__ import annotations

_M = 0x5BD1E995
_SEED = 0x9747B28C
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """``Utils.murmur2(data)``: a Java ``int`` (signed 32 bits)."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length & ~3
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = (h * _M) & _MASK
        h ^= k
    rest = length & 3
    if rest:  # Java's switch falls through: 3 takes byte 2, then 1, then 0
        if rest == 3:
            h ^= data[whole + 2] << 16
        if rest >= 2:
            h ^= data[whole + 1] << 8
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(number: int) -> int:
    """``Utils.toPositive``: ``number & 0x7fffffff``."""
    return number & 0x7FFFFFFF
