"""Magic-0/1 message sets, byte for byte as Kafka's ``MemoryRecordsBuilder`` writes them.

Schema of one log entry (``AbstractLegacyRecordBatch`` header + ``LegacyRecord``;
big-endian)::

    offset int64 | size int32 (bytes of the message that follows) |
    crc uint32 (CRC-32 over magic .. end of message) | magic int8 |
    attributes int8 (bits 0-2 codec; 0x08 LogAppendTime, v1 only) |
    timestamp int64 (v1 only) |
    keyLength int32 (-1 null) | key | valueLength int32 (-1 null) | value

Uncompressed, a produce request is one entry per record at consecutive
offsets.  Compressed, it is one *wrapper* entry: null key, value = the
codec's compression of an inner message set (the entries above, codec none).
Inner offsets are relative (0..n-1, ``toInnerOffset``) for v1 and absolute
for v0; the wrapper's offset is the last inner absolute offset.  The v1
wrapper timestamp is the max inner timestamp (CreateTime) or the
log-append time with attribute 0x08 (LogAppendTime); with LogAppendTime the
builder also writes every inner record with that time and bit 0x08
(``MemoryRecordsBuilder.appendLegacyRecord``).
"""

from __future__ import annotations

import struct
import zlib
from typing import Sequence

from kseg.errors import KsegError
from kseg.limits import NO_TIMESTAMP  # RecordBatch.NO_TIMESTAMP
from kseg.testing.codecs import codec_id, compress
from kseg.testing.v2 import RecordSpec

LOG_OVERHEAD = 12  # Records.LOG_OVERHEAD: offset int64 + size int32
TIMESTAMP_TYPE_MASK = 0x08  # LegacyRecord.TIMESTAMP_TYPE_MASK

# Entry prefix: q offset | i size
ENTRY_HEADER = struct.Struct(">qi")
# Message prefix for v0: I crc | b magic | b attributes
MESSAGE_V0 = struct.Struct(">Ibb")
# Message prefix for v1: I crc | b magic | b attributes | q timestamp
MESSAGE_V1 = struct.Struct(">Ibbq")
# int32 key/value length
INT32 = struct.Struct(">i")
# v1 CRC-covered head: b magic (1) | b attributes | q timestamp
V1_HEAD = struct.Struct(">bbq")
# uint32 CRC-32 at the start of a message
CRC32 = struct.Struct(">I")
# int64 v1 timestamp at entry byte 18
TIMESTAMP = struct.Struct(">q")


def record_overhead(magic: int) -> int:
    """``LegacyRecord.recordOverhead``: crc+magic+attributes(+timestamp)+2 lengths."""
    if magic == 0:
        return 14
    if magic == 1:
        return 22
    raise KsegError(f"invalid magic for a legacy record: {magic}")


def legacy_attributes(magic: int, codec: str, timestamp_type: str) -> int:
    """``LegacyRecord.computeAttributes``: codec id, plus 0x08 for v1 LogAppendTime."""
    attrs = codec_id(codec)
    if codec == "zstd":
        raise KsegError(f"zstd is not supported for magic {magic}")
    if timestamp_type not in ("CreateTime", "LogAppendTime"):
        raise KsegError(f"unknown timestamp type {timestamp_type!r}")
    if magic > 0 and timestamp_type == "LogAppendTime":
        attrs |= TIMESTAMP_TYPE_MASK
    return attrs


def encode_message(magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None) -> bytes:
    """One ``LegacyRecord`` (no offset/size prefix), CRC-32 over magic..end."""
    if magic not in (0, 1):
        raise KsegError(f"invalid magic for a legacy record: {magic}")
    tail = bytearray()
    if key is None:
        tail += b"\xff\xff\xff\xff"
    else:
        tail += INT32.pack(len(key))
        tail += key
    if value is None:
        tail += b"\xff\xff\xff\xff"
    else:
        tail += INT32.pack(len(value))
        tail += value
    if magic == 0:
        head = bytes((0, attributes & 0xFF))
    else:
        head = V1_HEAD.pack(1, _int8(attributes), timestamp)
    crc = zlib.crc32(tail, zlib.crc32(head))
    return CRC32.pack(crc) + head + bytes(tail)


def _int8(v: int) -> int:
    return v - 256 if v > 127 else v


def encode_entry(offset: int, message: bytes) -> bytes:
    """Prefix a message with its log entry header (offset, size)."""
    return ENTRY_HEADER.pack(offset, len(message)) + message


def build_legacy(
    records: Sequence[RecordSpec],
    *,
    magic: int = 1,
    base_offset: int = 0,
    codec: str = "none",
    timestamp_type: str = "CreateTime",
    log_append_time: int | None = None,
) -> bytes:
    """A magic-0/1 message set for ``records`` (see the module docstring).

    Record ``i`` gets offset ``base_offset + (offset_delta or i)``.  v0 has
    no timestamp (``timestamp_type`` is ignored and nothing is stored).
    Headers are not supported by magic 0/1 (a :class:`KsegError`).
    """
    if magic not in (0, 1):
        raise KsegError(f"build_legacy writes magic 0 or 1, not {magic}")
    lat = magic > 0 and timestamp_type == "LogAppendTime"
    if lat and log_append_time is None:
        raise KsegError("LogAppendTime needs log_append_time")
    append_time = NO_TIMESTAMP if log_append_time is None else log_append_time
    if not records:
        return b""
    inner_attrs = legacy_attributes(magic, "none", timestamp_type)
    out = bytearray()
    max_ts = NO_TIMESTAMP
    last_offset = base_offset
    relative = magic > 0 and codec != "none"
    for index, rec in enumerate(records):
        if rec.headers:
            raise KsegError(f"Magic v{magic} does not support record headers")
        offset = base_offset + (index if rec.offset_delta is None else rec.offset_delta)
        ts = append_time if lat else rec.timestamp
        if magic > 0 and ts > max_ts:
            max_ts = ts
        last_offset = offset
        message = encode_message(magic, inner_attrs, ts, rec.key, rec.value)
        out += encode_entry(offset - base_offset if relative else offset, message)
    if codec == "none":
        return bytes(out)
    wrapper_ts = append_time if lat else max_ts
    wrapper = encode_message(
        magic,
        legacy_attributes(magic, codec, timestamp_type),
        wrapper_ts,
        None,
        compress(codec, bytes(out), magic),
    )
    return encode_entry(last_offset, wrapper)


def set_legacy_max_timestamp(entry: bytes, timestamp_type: str, timestamp: int) -> bytes:
    """``AbstractLegacyRecordBatch.setMaxTimestamp`` on one v1 entry (the broker's in-place path).

    Rewrites the timestamp-type bit and the timestamp, then the CRC; inner
    records of a wrapper are left alone (they keep their CreateTime).  A
    no-op when both already match, as in Kafka.
    """
    buf = bytearray(entry)
    if buf[16] != 1:
        raise KsegError("only magic 1 entries carry a timestamp")
    attrs = buf[17]
    cur_lat = bool(attrs & TIMESTAMP_TYPE_MASK)
    (cur_ts,) = TIMESTAMP.unpack_from(buf, 18)
    want_lat = timestamp_type == "LogAppendTime"
    if cur_lat == want_lat and cur_ts == timestamp:
        return bytes(entry)
    buf[17] = (attrs & 0x07) | (TIMESTAMP_TYPE_MASK if want_lat else 0)
    TIMESTAMP.pack_into(buf, 18, timestamp)
    CRC32.pack_into(buf, 12, zlib.crc32(memoryview(buf)[16:]))
    return bytes(buf)
