"""Walking a log's batches by their length fields, and the broker's in-place header edits.

Schema used here (the shared prefix of every batch/entry, big-endian)::

    offset int64 (v2: baseOffset; v0/v1: the entry's offset) |
    length int32 (bytes after this field) |
    v2:    partitionLeaderEpoch int32 | magic int8 | crc uint32 | attributes int16 |
           lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 | ...
    v0/v1: crc uint32 | magic int8 | attributes int8 | timestamp int64 (v1) | ...

Per-batch facts a segment writer needs (``RecordBatch``):
``lastOffset`` = baseOffset + lastOffsetDelta (v2) or the entry offset (v0/v1);
``maxTimestamp`` = the v2 header field, the v1 entry timestamp, or -1 for v0.

The ``set_*`` helpers mirror ``MutableRecordBatch`` methods that
``LogValidator`` applies in place: ``setLastOffset`` and
``setPartitionLeaderEpoch`` touch fields outside the CRC;
``setMaxTimestamp`` rewrites attributes + maxTimestamp and the CRC.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterator

from crc32c import crc32c

from kseg.errors import CorruptRecordError
from kseg.testing.legacy import set_legacy_max_timestamp
from kseg.testing.v2 import CRC_START, TIMESTAMP_TYPE_MASK

# q offset | i length  (the log entry prefix shared by all magics)
PREFIX = struct.Struct(">qi")
# v2 fields after the prefix: i partitionLeaderEpoch | b magic | I crc | h attributes |
#   i lastOffsetDelta | q baseTimestamp | q maxTimestamp
V2_PART = struct.Struct(">ibIhiqq")
# v1 message head after the prefix: I crc | b magic | b attributes | q timestamp
V1_PART = struct.Struct(">Ibbq")
# single fields patched in place: q baseOffset @0 | i partitionLeaderEpoch @12 |
# I crc @17 | h attributes @21 | q maxTimestamp @35
INT64 = struct.Struct(">q")
INT32 = struct.Struct(">i")
UINT32 = struct.Struct(">I")
INT16 = struct.Struct(">h")
LOG_OVERHEAD = 12
MIN_HEADER = 17  # Records.HEADER_SIZE_UP_TO_MAGIC


@dataclass(frozen=True, slots=True)
class BatchInfo:
    """Header facts of one batch (or legacy entry) at ``position`` in a buffer."""

    position: int
    size: int
    magic: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    attributes: int


def batch_info(data, position: int = 0) -> BatchInfo:
    """Read the header facts of the batch starting at ``position``."""
    offset, length = PREFIX.unpack_from(data, position)
    magic = data[position + 16]
    size = LOG_OVERHEAD + length
    if magic >= 2:
        _epoch, _m, _crc, attrs, lod, _bts, max_ts = V2_PART.unpack_from(data, position + 12)
        return BatchInfo(position, size, magic, offset, offset + lod, max_ts, attrs)
    if magic == 1:
        _crc, _m, attrs, ts = V1_PART.unpack_from(data, position + 12)
        return BatchInfo(position, size, 1, offset, offset, ts, attrs & 0xFF)
    return BatchInfo(position, size, 0, offset, offset, -1, data[position + 17])


def iter_batch_bytes(data) -> Iterator[bytes]:
    """Yield each batch's raw bytes, walking the length fields (``FileLogInputStream``).

    Stops when fewer than 17 bytes remain or a batch runs past the end; a
    length below 14 raises :class:`CorruptRecordError` as Kafka does.
    """
    pos = 0
    end = len(data)
    while end - pos >= MIN_HEADER:
        _offset, length = PREFIX.unpack_from(data, pos)
        if length < 14:
            raise CorruptRecordError(
                f"record size {length} is less than the minimum record overhead (14)", position=pos
            )
        stop = pos + LOG_OVERHEAD + length
        if stop > end:
            return
        yield bytes(data[pos:stop])
        pos = stop


def iter_batch_infos(data) -> Iterator[BatchInfo]:
    """:func:`batch_info` for every complete batch in ``data``."""
    pos = 0
    for raw in iter_batch_bytes(data):
        info = batch_info(raw)
        yield BatchInfo(
            pos, info.size, info.magic, info.base_offset, info.last_offset, info.max_timestamp, info.attributes
        )
        pos += info.size


def set_last_offset(batch: bytes, last_offset: int) -> bytes:
    """``setLastOffset``: v2 rewrites baseOffset = last - lastOffsetDelta; v0/v1 the entry offset."""
    info = batch_info(batch)
    buf = bytearray(batch)
    base = last_offset - (info.last_offset - info.base_offset)
    INT64.pack_into(buf, 0, base)
    return bytes(buf)


def set_partition_leader_epoch(batch: bytes, epoch: int) -> bytes:
    """``DefaultRecordBatch.setPartitionLeaderEpoch`` (not CRC-covered)."""
    buf = bytearray(batch)
    INT32.pack_into(buf, 12, epoch)
    return bytes(buf)


def set_max_timestamp(batch: bytes, timestamp_type: str, timestamp: int) -> bytes:
    """``setMaxTimestamp`` for v2 (attributes, maxTimestamp, CRC-32C) or v1 (see legacy)."""
    info = batch_info(batch)
    if info.magic < 2:
        return set_legacy_max_timestamp(batch, timestamp_type, timestamp)
    want_lat = timestamp_type == "LogAppendTime"
    cur_lat = bool(info.attributes & TIMESTAMP_TYPE_MASK)
    if cur_lat == want_lat and info.max_timestamp == timestamp:
        return bytes(batch)
    buf = bytearray(batch)
    attrs = (info.attributes & ~TIMESTAMP_TYPE_MASK) | (TIMESTAMP_TYPE_MASK if want_lat else 0)
    INT16.pack_into(buf, 21, attrs)
    INT64.pack_into(buf, 35, timestamp)
    UINT32.pack_into(buf, 17, crc32c(memoryview(buf)[CRC_START:]))
    return bytes(buf)
