"""Byte-level reading and writing of Kafka's message encoding.

:class:`Reader` mirrors ``ByteBufferAccessor`` as a ``Readable``: big-endian
fixed-width integers, Kafka's unsigned varint (``ByteUtils.readUnsignedVarint``,
at most 5 bytes, the 5th byte's high bit an error), byte arrays
(``readArray``) and zero-copy byte buffers (``readByteBuffer``).  Failures
raise the Java exception Kafka would, with Java's message, because those
messages end up in the tool's output.

:class:`Writer` is the ``Writable`` counterpart used by kseg's encoder.
"""

from __future__ import annotations

import struct

from kseg.decoders.jvm import (
    BufferUnderflowException,
    IllegalArgumentException,
    JavaException,
    NegativeArraySizeException,
    java_utf8,
)

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")


class Reader:
    """A cursor over ``data[pos:end]`` (Kafka's ``ByteBufferAccessor``)."""

    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def _take(self, n: int) -> int:
        p = self.pos
        if p + n > self.end:
            raise BufferUnderflowException()
        self.pos = p + n
        return p

    def int8(self) -> int:
        return _I8.unpack_from(self.data, self._take(1))[0]

    def int16(self) -> int:
        return _I16.unpack_from(self.data, self._take(2))[0]

    def uint16(self) -> int:
        return _U16.unpack_from(self.data, self._take(2))[0]

    def int32(self) -> int:
        return _I32.unpack_from(self.data, self._take(4))[0]

    def uint32(self) -> int:
        return _U32.unpack_from(self.data, self._take(4))[0]

    def int64(self) -> int:
        return _I64.unpack_from(self.data, self._take(8))[0]

    def float64(self) -> float:
        return _F64.unpack_from(self.data, self._take(8))[0]

    def uuid(self) -> bytes:
        p = self._take(8)
        self._take(8)
        return bytes(self.data[p : p + 16])

    def bool(self) -> bool:
        return self.int8() != 0

    def uvarint(self) -> int:
        """``ByteUtils.readUnsignedVarint``: a Java int (may come out negative)."""
        data, end = self.data, self.end
        p = self.pos
        result = 0
        for shift in (0, 7, 14, 21):
            if p >= end:
                self.pos = p
                raise BufferUnderflowException()
            b = data[p]
            p += 1
            if b < 0x80:
                self.pos = p
                return result | (b << shift)
            result |= (b & 0x7F) << shift
        if p >= end:
            self.pos = p
            raise BufferUnderflowException()
        b = data[p]
        self.pos = p + 1
        signed = b - 256 if b >= 0x80 else b
        result = (result | ((signed << 28) & 0xFFFFFFFF)) & 0xFFFFFFFF
        if signed < 0:
            raise IllegalArgumentException(
                f"Varint is too long, the most significant bit in the 5th byte is set, converted value: {result:x}"
            )
        return result - (1 << 32) if result & 0x80000000 else result

    def array(self, size: int) -> bytes:
        """``readArray(size)``: ``size`` bytes, or Kafka's "Error reading byte array" error."""
        remaining = self.end - self.pos
        if size > remaining:
            raise JavaException(f"Error reading byte array of {size} byte(s): only {remaining} byte(s) available")
        if size < 0:
            raise NegativeArraySizeException(str(size))
        p = self.pos
        self.pos = p + size
        return bytes(self.data[p : p + size])

    def byte_buffer(self, length: int) -> bytes:
        """``readByteBuffer(length)``: ``slice().limit(length)`` then skip ``length``."""
        capacity = self.end - self.pos
        if length > capacity:
            raise IllegalArgumentException(f"newLimit > capacity: ({length} > {capacity})")
        if length < 0:
            raise IllegalArgumentException(f"newLimit < 0: ({length} < 0)")
        p = self.pos
        self.pos = p + length
        return bytes(self.data[p : p + length])

    def string(self, length: int) -> str:
        """``readString(length)``: ``readArray`` then Java's UTF-8 decoding."""
        return java_utf8(self.array(length))


class Writer:
    """Appends Kafka-encoded values to a ``bytearray`` (``Writable``)."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf = bytearray()

    def int8(self, v: int) -> None:
        self.buf += _I8.pack(v)

    def int16(self, v: int) -> None:
        self.buf += _I16.pack(v)

    def uint16(self, v: int) -> None:
        self.buf += _U16.pack(v)

    def int32(self, v: int) -> None:
        self.buf += _I32.pack(v)

    def uint32(self, v: int) -> None:
        self.buf += _U32.pack(v)

    def int64(self, v: int) -> None:
        self.buf += _I64.pack(v)

    def float64(self, v: float) -> None:
        self.buf += _F64.pack(v)

    def bool(self, v: bool) -> None:
        self.buf.append(1 if v else 0)

    def uuid(self, v: bytes) -> None:
        if len(v) != 16:
            raise ValueError("a uuid is 16 bytes")
        self.buf += v

    def uvarint(self, v: int) -> None:
        v &= 0xFFFFFFFF
        while v >= 0x80:
            self.buf.append((v & 0x7F) | 0x80)
            v >>= 7
        self.buf.append(v)

    def raw(self, b: bytes) -> None:
        self.buf += b

    def getvalue(self) -> bytes:
        return bytes(self.buf)


def uvarint_size(v: int) -> int:
    """``ByteUtils.sizeOfUnsignedVarint``."""
    v &= 0xFFFFFFFF
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n
