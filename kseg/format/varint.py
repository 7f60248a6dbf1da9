"""Zig-zag varints as Kafka writes them (``org.apache.kafka.common.utils.ByteUtils``).

A varint is little-endian base-128: seven value bits per byte, the high bit
set on every byte but the last.  Signed values are zig-zag encoded
(``(n << 1) ^ (n >> 63)``).  ``readVarint`` accepts at most 5 bytes (an int32),
``readVarlong`` at most 10 (an int64); a longer run is an error ("Varint is
too long"), never a loop over attacker-controlled input.
"""

from __future__ import annotations

from typing import Sequence

from kseg.errors import CorruptRecordError

VARINT_MAX_BYTES = 5  # ByteUtils.readVarint: an int32
VARLONG_MAX_BYTES = 10  # ByteUtils.readVarlong: an int64
_VARINT_MAX_SHIFT = 7 * (VARINT_MAX_BYTES - 1)
_VARLONG_MAX_SHIFT = 7 * (VARLONG_MAX_BYTES - 1)


def _read_zigzag(buf: Sequence[int], pos: int, max_shift: int, mask: int, kind: str) -> tuple[int, int]:
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    raw = b & 0x7F
    shift = 7
    start = pos
    pos += 1
    while True:
        try:
            b = buf[pos]
        except IndexError:
            raise CorruptRecordError(f"{kind} runs past the end of the data", position=start) from None
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > max_shift:
            raise CorruptRecordError(f"{kind} is too long (more than {max_shift // 7 + 1} bytes)", position=start)
    raw &= mask
    return (raw >> 1) ^ -(raw & 1), pos


def read_varint(buf: Sequence[int], pos: int) -> tuple[int, int]:
    """Decode a zig-zag int32 varint at ``pos``; return ``(value, next_pos)``.

    Mirrors ``ByteUtils.readVarint``: at most 5 bytes; bits past 32 are
    dropped as Java's int arithmetic drops them.
    """
    return _read_zigzag(buf, pos, _VARINT_MAX_SHIFT, 0xFFFFFFFF, "varint")


def read_varlong(buf: Sequence[int], pos: int) -> tuple[int, int]:
    """Decode a zig-zag int64 varlong at ``pos``; return ``(value, next_pos)``.

    Mirrors ``ByteUtils.readVarlong`` (at most 10 bytes).
    """
    return _read_zigzag(buf, pos, _VARLONG_MAX_SHIFT, 0xFFFFFFFFFFFFFFFF, "varlong")
