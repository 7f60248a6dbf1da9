"""Legacy message sets, magic v0 and v1 (``LegacyRecord``, ``AbstractLegacyRecordBatch``).

Log entry, big-endian::

    offset      int64   0   (a compressed wrapper: its last inner offset)
    size        int32   8   bytes of the message that follows
    crc         uint32 12   CRC-32 over magic..end of the message
    magic       int8   16   0 or 1
    attributes  int8   17   codec(0-2), LogAppendTime(3, v1 only)
    timestamp   int64  18   v1 only
    keyLength   int32       -1 for null, then key
    valueLength int32       -1 for null, then value

A message whose codec is not none is a *wrapper*: its value is a compressed
inner message set.  v1 inner offsets are relative (absolute = wrapper offset
- last inner offset + inner offset, except a wrapper offset of 0); v0 inner
offsets are absolute.  A LogAppendTime v1 wrapper lends its timestamp to the
inner records.
"""

from __future__ import annotations

import struct
import zlib
from typing import TYPE_CHECKING, Iterator, NamedTuple, Union

from kseg.errors import CorruptRecordError
from kseg.format import compression
from kseg.format import timestamp_type as _tt
from kseg.limits import NO_TIMESTAMP

if TYPE_CHECKING:
    from typing_extensions import Buffer

ENTRY = struct.Struct(
    ">"
    "q"  # offset
    "i"  # size
    "I"  # crc (unsigned)
    "b"  # magic
    "b"  # attributes
)
ENTRY_SIZE = ENTRY.size  # 18: log overhead + crc + magic + attributes
LOG_OVERHEAD = 12
TIMESTAMP = struct.Struct(">q")
INT32 = struct.Struct(">i")
RECORD_OVERHEAD_V0 = 14  # crc + magic + attributes + key length + value length
TIMESTAMP_TYPE_FLAG = 0x08


class LegacyRecord(NamedTuple):
    """One v0/v1 message (``LegacyRecord``) as :meth:`kseg.storage.batch.LegacyBatch.records` hands it out.

    ``key``/``value`` are slices or ``None``; ``crc`` the stored CRC-32 and
    ``valid`` whether it matches (an inner message of a wrapper has its own).
    """

    offset: int
    timestamp: int
    key: bytes | memoryview | None  # a slice of the batch's bytes, or bytes of its own once detached
    value: bytes | memoryview | None
    crc: int
    valid: bool


#: A record as :func:`iter_inner` yields it, in :class:`LegacyRecord`'s order.
RawLegacyRecord = tuple[int, int, Union[memoryview, None], Union[memoryview, None], int, bool]


def timestamp_type(magic: int, attributes: int) -> str:
    """``LegacyRecord.timestampType`` for an outer message (:mod:`kseg.format.timestamp_type`)."""
    return _tt.of_attributes(attributes, magic)


def message_timestamp(buf: Buffer, msg: int, magic: int) -> int:
    """Stored timestamp of the message starting (at its crc) at ``msg``; v0 has none."""
    if magic == 0:
        return NO_TIMESTAMP
    timestamp: int = TIMESTAMP.unpack_from(buf, msg + 6)[0]
    return timestamp


def checksum_valid(buf: memoryview, msg: int, size: int, stored_crc: int) -> bool:
    """``LegacyRecord.isValid``: size >= 14 and CRC-32 over magic..end matches."""
    if size < RECORD_OVERHEAD_V0:
        return False
    return zlib.crc32(buf[msg + 4 : msg + size]) == stored_crc


def _sized_bytes(buf: memoryview, pos: int, end: int) -> tuple[memoryview | None, int]:
    """An int32 length (-1: null) and that many bytes at ``pos``: ``(slice or None, next pos)``;
    ``IndexError`` when they run past ``end``."""
    if pos + 4 > end:
        raise IndexError
    (size,) = INT32.unpack_from(buf, pos)
    pos += 4
    if size < 0:
        return None, pos
    if pos + size > end:
        raise IndexError
    return buf[pos : pos + size], pos + size


def key_value(buf: memoryview, msg: int, size: int, magic: int) -> tuple[memoryview | None, memoryview | None]:
    """Return ``(key, value)`` (memoryview slices or ``None``) of one message."""
    end = msg + size
    pos = msg + (14 if magic else 6)
    try:
        key, pos = _sized_bytes(buf, pos, end)
        value, pos = _sized_bytes(buf, pos, end)
    except IndexError:
        raise CorruptRecordError(
            "legacy message key or value length runs past the end of the message", position=msg
        ) from None
    return key, value


def iter_inner(
    buf: memoryview,
    msg: int,
    size: int,
    wrapper_offset: int,
    magic: int,
    attributes: int,
    limit: int,
) -> Iterator[RawLegacyRecord]:
    """Yield the records inside a compressed wrapper (``DeepRecordsIterator``).

    Each record is ``(offset, timestamp, key, value, crc, valid)``.  The inner
    set is decompressed and split completely first (as Kafka does), so a
    corrupt payload yields nothing; an inner compressed message raises when
    it is reached.
    """
    codec = attributes & 0x07
    if codec == compression.ZSTD:
        raise CorruptRecordError(f"invalid wrapper compression type (zstd) in a magic v{magic} message", position=msg)
    _, value = key_value(buf, msg, size, magic)
    if value is None:
        raise CorruptRecordError(f"found invalid compressed record set with null value (magic = {magic})", position=msg)
    data = compression.decompress(codec, value, magic, limit)
    wrapper_ts = message_timestamp(buf, msg, magic)
    log_append = magic == 1 and bool(attributes & TIMESTAMP_TYPE_FLAG)
    inner: list[tuple[int, int, int]] = []
    pos, n = 0, len(data)
    while pos + LOG_OVERHEAD <= n:
        offset, inner_size = struct.unpack_from(">qi", data, pos)
        if inner_size < RECORD_OVERHEAD_V0:
            raise CorruptRecordError(
                f"inner record size {inner_size} is less than the minimum record overhead (14)",
                position=msg,
            )
        if pos + LOG_OVERHEAD + inner_size > n:
            break
        inner.append((offset, pos + LOG_OVERHEAD, inner_size))
        pos += LOG_OVERHEAD + inner_size
    if not inner:
        raise CorruptRecordError("found invalid compressed record set with no inner records", position=msg)
    base = 0
    if magic == 1 and wrapper_offset != 0:
        last_inner = inner[-1][0]
        if wrapper_offset < last_inner:
            raise CorruptRecordError(
                f"found invalid wrapper offset in compressed v1 message set, wrapper offset "
                f"'{wrapper_offset}' is less than the last inner message offset '{last_inner}' and it is not zero",
                position=msg,
            )
        base = wrapper_offset - last_inner
    dv = memoryview(data)
    for offset, m, inner_size in inner:
        crc, inner_magic, inner_attrs = struct.unpack_from(">Ibb", data, m)
        if magic == 1:
            offset += base
        if inner_attrs & 0x07:
            raise CorruptRecordError("inner messages must not be compressed", position=msg)
        if inner_magic == 0:
            ts = NO_TIMESTAMP
        elif log_append:
            ts = wrapper_ts
        else:
            ts = TIMESTAMP.unpack_from(data, m + 6)[0] if inner_size >= 14 else NO_TIMESTAMP
        key, value = key_value(dv, m, inner_size, inner_magic)
        yield (offset, ts, key, value, crc, checksum_valid(dv, m, inner_size, crc))
