"""Magic-2 record batches, byte for byte as Kafka's ``MemoryRecordsBuilder`` writes them.

Schema (``DefaultRecordBatch``; all integers big-endian)::

    baseOffset int64 | batchLength int32 (bytes after this field) |
    partitionLeaderEpoch int32 | magic int8 (2) |
    crc uint32 (CRC-32C over attributes .. end of batch) |
    attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 |
    maxTimestamp int64 | producerId int64 | producerEpoch int16 |
    baseSequence int32 | recordsCount int32 | records (compressed as a whole)

    attributes: bits 0-2 codec | 0x08 LogAppendTime | 0x10 transactional |
                0x20 control | 0x40 delete horizon set

Record (``DefaultRecord.writeTo``; varints are zig-zag)::

    length varint (bytes after it) | attributes int8 (0) |
    timestampDelta varlong | offsetDelta varint |
    keyLength varint (-1 null) | key | valueLength varint (-1 null) | value |
    headerCount varint | [headerKeyLength varint | UTF-8 key |
                          headerValueLength varint (-1 null) | value]*

Control batches (attribute 0x20) are built in :mod:`kseg.testing.control`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterable, Sequence

from crc32c import crc32c

from kseg.errors import KsegError
from kseg.limits import NO_TIMESTAMP  # RecordBatch.NO_TIMESTAMP
from kseg.testing.codecs import codec_id, compress

MAGIC_V2 = 2
HEADER_SIZE = 61  # DefaultRecordBatch.RECORD_BATCH_OVERHEAD
CRC_START = 21  # DefaultRecordBatch.ATTRIBUTES_OFFSET: the CRC covers [21, end)

# Attribute bits (DefaultRecordBatch masks).
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40


# The 61-byte batch header, fields in file order:
#   q baseOffset | i batchLength | i partitionLeaderEpoch | b magic | I crc |
#   h attributes | i lastOffsetDelta | q baseTimestamp | q maxTimestamp |
#   q producerId | h producerEpoch | i baseSequence | i recordsCount
BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
# The CRC-covered part of the header (from attributes on), for patching:
#   h attributes | i lastOffsetDelta | q baseTimestamp | q maxTimestamp |
#   q producerId | h producerEpoch | i baseSequence | i recordsCount
HEADER_TAIL = struct.Struct(">hiqqqhii")
# uint32 crc at byte 17
CRC_FIELD = struct.Struct(">I")


@dataclass(slots=True)
class RecordSpec:
    """One record to write.

    ``offset_delta`` None means "the record's index in the batch" (what a
    producer writes); explicit deltas let tests build compacted batches with
    gaps.  Header keys are normally ``str`` (encoded UTF-8, as Kafka does);
    ``bytes`` keys are written verbatim so fuzzers can store invalid UTF-8.
    """

    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple[tuple[str | bytes, bytes | None], ...] = ()
    offset_delta: int | None = None


def uvarint(z: int) -> bytes:
    """Unsigned varint of ``z`` (``ByteUtils.writeUnsignedVarint``; protobuf's varint)."""
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


_SMALL = 1 << 14
# Encodings of zig-zag values below 2**14 (two bytes at most), precomputed.
_ZIGZAG_CACHE: list[bytes] = [uvarint(z) for z in range(_SMALL)]


def varint(n: int) -> bytes:
    """Zig-zag varint/varlong of ``n`` (``ByteUtils.writeVarint``/``writeVarlong``)."""
    z = (n << 1) if n >= 0 else ((-n) << 1) - 1
    if z < _SMALL:
        return _ZIGZAG_CACHE[z]
    return uvarint(z)


def append_record(
    out: bytearray,
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Sequence[tuple[str | bytes, bytes | None]] = (),
    _cache: list[bytes] = _ZIGZAG_CACHE,
) -> None:
    """Append one ``DefaultRecord`` (length varint first) to ``out`` -- the builder's hot path."""
    zt = (timestamp_delta << 1) if timestamp_delta >= 0 else ((-timestamp_delta) << 1) - 1
    zo = (offset_delta << 1) if offset_delta >= 0 else ((-offset_delta) << 1) - 1
    body = bytearray(b"\x00")  # record attributes: always 0
    body += _cache[zt] if zt < _SMALL else uvarint(zt)
    body += _cache[zo] if zo < _SMALL else uvarint(zo)
    if key is None:
        body += b"\x01"  # varint(-1)
    else:
        n = len(key)
        body += _cache[n << 1] if n < _SMALL >> 1 else uvarint(n << 1)
        body += key
    if value is None:
        body += b"\x01"
    else:
        n = len(value)
        body += _cache[n << 1] if n < _SMALL >> 1 else uvarint(n << 1)
        body += value
    if headers:
        body += varint(len(headers))
        for hkey, hvalue in headers:
            if hkey is None:
                raise KsegError("Invalid null header key found in headers")
            raw = hkey.encode("utf-8") if isinstance(hkey, str) else bytes(hkey)
            body += varint(len(raw))
            body += raw
            if hvalue is None:
                body += b"\x01"
            else:
                body += varint(len(hvalue))
                body += hvalue
    else:
        body += b"\x00"  # header count 0
    n = len(body)
    out += _cache[n << 1] if n < _SMALL >> 1 else uvarint(n << 1)
    out += body


def encode_record(
    offset_delta: int,
    timestamp_delta: int,
    key: bytes | None,
    value: bytes | None,
    headers: Iterable[tuple[str | bytes, bytes | None]] = (),
) -> bytes:
    """One ``DefaultRecord`` including its leading length varint."""
    out = bytearray()
    append_record(out, offset_delta, timestamp_delta, key, value, tuple(headers))
    return bytes(out)


def attributes_v2(
    codec: str,
    timestamp_type: str,
    transactional: bool,
    control: bool,
    delete_horizon: bool,
) -> int:
    """``DefaultRecordBatch.computeAttributes``."""
    attrs = codec_id(codec)
    if timestamp_type == "LogAppendTime":
        attrs |= TIMESTAMP_TYPE_MASK
    elif timestamp_type != "CreateTime":
        raise KsegError(f"unknown timestamp type {timestamp_type!r}")
    if transactional:
        attrs |= TRANSACTIONAL_MASK
    if control:
        attrs |= CONTROL_MASK
    if delete_horizon:
        attrs |= DELETE_HORIZON_MASK
    return attrs


def finish_batch(
    base_offset: int,
    partition_leader_epoch: int,
    attributes: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    records_count: int,
    payload: bytes,
    crc: int | None = None,
) -> bytes:
    """Prefix ``payload`` (records, compressed or not) with the 61-byte header and CRC-32C."""
    out = bytearray(HEADER_SIZE + len(payload))
    BATCH_HEADER.pack_into(
        out,
        0,
        base_offset,
        HEADER_SIZE - 12 + len(payload),
        partition_leader_epoch,
        MAGIC_V2,
        0,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        records_count,
    )
    out[HEADER_SIZE:] = payload
    if crc is None:
        crc = crc32c(memoryview(out)[CRC_START:])
    CRC_FIELD.pack_into(out, 17, crc & 0xFFFFFFFF)
    return bytes(out)


def build_v2_batch(
    records: Sequence[RecordSpec],
    *,
    base_offset: int = 0,
    codec: str = "none",
    timestamp_type: str = "CreateTime",
    log_append_time: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = 0,
    transactional: bool = False,
    control: bool = False,
    delete_horizon_ms: int | None = None,
    records_count: int | None = None,
    crc: int | None = None,
    last_offset_delta: int | None = None,
) -> bytes:
    """One magic-2 batch, as ``MemoryRecordsBuilder.close`` would produce it.

    * baseTimestamp: the first record's timestamp, or ``delete_horizon_ms``
      when given (then attribute 0x40 is set and every timestampDelta is
      relative to it, as in the builder).
    * maxTimestamp: the largest record timestamp (starting from -1) for
      CreateTime; ``log_append_time`` for LogAppendTime (the stored deltas
      keep the records' own timestamps).
    * lastOffsetDelta: the last record's offset delta, unless
      ``last_offset_delta`` overrides it (``MemoryRecordsBuilder.overrideLastOffset``,
      as the log cleaner does to keep a compacted batch's last offset).
    * ``records_count`` / ``crc`` override the computed values, to write
      deliberately inconsistent batches.

    Kafka's argument checks (no negative timestamps but -1, monotonic offsets)
    are not enforced: tests may want such batches.
    """
    if timestamp_type == "LogAppendTime" and log_append_time is None:
        raise KsegError("LogAppendTime needs log_append_time")
    has_horizon = delete_horizon_ms is not None and delete_horizon_ms >= 0
    attrs = attributes_v2(codec, timestamp_type, transactional, control, has_horizon)
    if delete_horizon_ms is not None and has_horizon:
        base_ts = delete_horizon_ms
    elif records:
        base_ts = records[0].timestamp
    else:
        base_ts = NO_TIMESTAMP
    max_ts = NO_TIMESTAMP
    body = bytearray()
    delta = -1
    for index, rec in enumerate(records):
        delta = index if rec.offset_delta is None else rec.offset_delta
        ts = rec.timestamp
        if ts > max_ts:
            max_ts = ts
        append_record(body, delta, ts - base_ts, rec.key, rec.value, rec.headers)
    if timestamp_type == "LogAppendTime" and log_append_time is not None:  # checked above
        max_ts = log_append_time
    if last_offset_delta is None:
        last_offset_delta = delta if records else 0
    payload = bytes(body) if codec == "none" else compress(codec, bytes(body), MAGIC_V2)
    return finish_batch(
        base_offset,
        partition_leader_epoch,
        attrs,
        last_offset_delta,
        base_ts,
        max_ts,
        producer_id,
        producer_epoch,
        base_sequence,
        len(records) if records_count is None else records_count,
        payload,
        crc,
    )


def build_empty_v2_batch(
    *,
    base_offset: int,
    last_offset: int,
    timestamp: int,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    partition_leader_epoch: int = 0,
    timestamp_type: str = "CreateTime",
    transactional: bool = False,
    control: bool = False,
) -> bytes:
    """A record-less batch as ``DefaultRecordBatch.writeEmptyHeader`` writes it.

    The log cleaner keeps such batches to preserve producer state: codec
    none, baseTimestamp = maxTimestamp = ``timestamp``, recordsCount 0.
    """
    attrs = attributes_v2("none", timestamp_type, transactional, control, False)
    return finish_batch(
        base_offset,
        partition_leader_epoch,
        attrs,
        last_offset - base_offset,
        timestamp,
        timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        0,
        b"",
    )


__all__ = [
    "RecordSpec",
    "append_record",
    "build_empty_v2_batch",
    "build_v2_batch",
    "encode_record",
    "finish_batch",
    "varint",
]
