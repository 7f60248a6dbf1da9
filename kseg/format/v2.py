"""Record batches of magic v2 (``DefaultRecordBatch``, ``DefaultRecord``).

Batch header, 61 bytes, big-endian::

    baseOffset           int64   0
    batchLength          int32   8   bytes after this field
    partitionLeaderEpoch int32  12
    magic                int8   16   2
    crc                  uint32 17   CRC-32C over bytes 21..end
    attributes           int16  21   low byte: codec(0-2) tsType(3) txn(4) control(5) deleteHorizon(6)
    lastOffsetDelta      int32  23
    baseTimestamp        int64  27   deleteHorizonMs when bit 6 is set
    maxTimestamp         int64  35
    producerId           int64  43
    producerEpoch        int16  51
    baseSequence         int32  53
    recordsCount         int32  57
    records                     61   compressed as a whole when a codec is set

The records themselves: :mod:`kseg.format.v2_records`.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, NamedTuple

from kseg.limits import INT32_MAX, INT64_MAX, INT64_MIN

if TYPE_CHECKING:
    from typing_extensions import Buffer

HEADER = struct.Struct(
    ">"
    "q"  # baseOffset
    "i"  # batchLength
    "i"  # partitionLeaderEpoch
    "b"  # magic
    "I"  # crc (unsigned)
    "h"  # attributes
    "i"  # lastOffsetDelta
    "q"  # baseTimestamp
    "q"  # maxTimestamp
    "q"  # producerId
    "h"  # producerEpoch
    "i"  # baseSequence
    "i"  # recordsCount
)
HEADER_SIZE = HEADER.size  # 61 == RECORD_BATCH_OVERHEAD
# Each field's offset, derived from HEADER as DefaultRecordBatch derives them (each the one before it plus
# its length): 0, 8, 12, 16, 17, 21, 23, 27, 35, 43, 51, 53, 57.
(
    BASE_OFFSET_OFFSET,
    LENGTH_OFFSET,
    PARTITION_LEADER_EPOCH_OFFSET,
    MAGIC_OFFSET,
    CRC_OFFSET,
    ATTRIBUTES_OFFSET,
    LAST_OFFSET_DELTA_OFFSET,
    BASE_TIMESTAMP_OFFSET,
    MAX_TIMESTAMP_OFFSET,
    PRODUCER_ID_OFFSET,
    PRODUCER_EPOCH_OFFSET,
    BASE_SEQUENCE_OFFSET,
    RECORDS_COUNT_OFFSET,
) = (struct.calcsize(HEADER.format[:k]) for k in range(1, len(HEADER.format)))
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1  # Records.HEADER_SIZE_UP_TO_MAGIC: all a batch's framing needs
# The first 27 bytes of a batch, all that its last offset needs (``FileChannelRecordBatch.lastOffset``):
# baseOffset (a v0/v1 entry's offset), batchLength, magic and, for v2, lastOffsetDelta.
LAST_OFFSET_FIELDS = (
    "q"  # baseOffset
    "i"  # batchLength
    "4x"  # partitionLeaderEpoch
    "b"  # magic
    "6x"  # crc, attributes
    "i"  # lastOffsetDelta
)
LAST_OFFSET_HEAD = struct.Struct(">" + LAST_OFFSET_FIELDS)


class BatchHeader(NamedTuple):
    """The 61-byte header of a v2 batch, by name (``DefaultRecordBatch``'s accessors).

    ``V2Batch.header`` and :func:`header_from` give one.  The per-batch paths
    (``V2Batch.h``, ``FileRecords.scan``) keep the plain tuple ``HEADER``
    unpacks, in this order, and read it with the index constants below
    (``h[ATTRIBUTES]``): naming every header costs ~250 ns a batch, measured
    at 10 % of an index check and of a shallow dump of small batches.
    """

    base_offset: int
    batch_length: int  # bytes after this field
    partition_leader_epoch: int
    magic: int
    crc: int  # unsigned: CRC-32C over attributes..end
    attributes: int  # int16; Kafka reads the low byte
    last_offset_delta: int
    base_timestamp: int  # deleteHorizonMs when DELETE_HORIZON_FLAG is set
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int


# Indexes into a BatchHeader, for hot loops (the same order as its fields).
BASE_OFFSET, LENGTH, LEADER_EPOCH, MAGIC, CRC, ATTRIBUTES, LAST_OFFSET_DELTA = range(7)
BASE_TIMESTAMP, MAX_TIMESTAMP, PRODUCER_ID, PRODUCER_EPOCH, BASE_SEQUENCE, COUNT = range(7, 13)

_new_tuple = tuple.__new__
_unpack_from = HEADER.unpack_from


def header_from(buf: Buffer, i: int = 0) -> BatchHeader:
    """The :class:`BatchHeader` at ``buf[i:i+61]``."""
    return _new_tuple(BatchHeader, _unpack_from(buf, i))


CODEC_MASK = 0x07
TIMESTAMP_TYPE_FLAG = 0x08
TRANSACTIONAL_FLAG = 0x10
CONTROL_FLAG = 0x20
DELETE_HORIZON_FLAG = 0x40

NO_SEQUENCE = -1


def java_long(n: int) -> int:
    """``n`` as Java's ``long`` arithmetic leaves it: wrapped into [-2^63, 2^63-1].

    Kafka adds offsets in ``long`` (``DefaultRecordBatch.lastOffset()`` is ``baseOffset() +
    lastOffsetDelta()``, a record's offset ``baseOffset + offsetDelta`` in ``DefaultRecord.readFrom``):
    a batch at base offset 2^63-1 with two records has last offset -2^63, as ``kafka-dump-log.sh``
    prints it.  kseg computes and prints offsets the same way, and calls such a batch a problem."""
    if INT64_MIN <= n <= INT64_MAX:
        return n
    return ((n - INT64_MIN) & 0xFFFFFFFFFFFFFFFF) + INT64_MIN


def java_int(n: int) -> int:
    """``n`` wrapped into Java's ``int`` [-2^31, 2^31-1], as ``int`` arithmetic leaves it (hashes: Kafka's
    ``Utils.murmur2``, ``Objects.hash``; the generated readers' ``int32``)."""
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n & 0x80000000 else n


def last_offset(base_offset: int, last_offset_delta: int) -> int:
    """``DefaultRecordBatch.lastOffset()``: baseOffset + lastOffsetDelta in Java ``long`` arithmetic."""
    n = base_offset + last_offset_delta
    return n if INT64_MIN <= n <= INT64_MAX else java_long(n)


def increment_sequence(sequence: int, increment: int) -> int:
    """``DefaultRecordBatch.incrementSequence``: sequences wrap past int32 max to 0."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def last_sequence(base_sequence: int, last_offset_delta: int) -> int:
    """``DefaultRecordBatch.lastSequence``."""
    if base_sequence == NO_SEQUENCE:
        return NO_SEQUENCE
    return increment_sequence(base_sequence, last_offset_delta)
