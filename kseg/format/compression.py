"""Decompression of batch payloads, bounded, as Kafka's ``Compression`` classes read them.

Codec ids (attributes bits 0-2, ``CompressionType``): 0 none, 1 gzip,
2 snappy, 3 lz4, 4 zstd.  5-7 are unknown (``CompressionType.forId`` throws).

* gzip  (``GzipCompression``): RFC 1952 members; more than one is accepted.
* snappy (``SnappyCompression``, snappy-java ``SnappyInputStream``): xerial
  framing ``82 53 4E 41 50 50 59 00`` + int32 version + int32 compatible
  version (both ignored), then blocks of [int32 BE length][raw snappy];
  input without that header is one raw snappy block.
* lz4 (``Lz4BlockInputStream``): an LZ4 frame with Kafka's own reader.  For
  magic 0 the frame-descriptor checksum byte is ignored, because Kafka's
  old writer hashed the magic bytes too (frames start ``04 22 4D 18 60 40 1A``).
* zstd (``ZstdCompression``): one or more standard frames, read as a stream.

Every function takes ``limit``: the most bytes it may produce.  Output past
it raises :class:`LimitExceededError` before more memory is taken, so a
decompression bomb costs at most ``limit`` bytes.  Codec libraries are
imported on first use only.
"""

from __future__ import annotations

import struct
from types import ModuleType
from typing import TYPE_CHECKING

from kseg.errors import DecompressionError, LimitExceededError

if TYPE_CHECKING:
    from typing_extensions import Buffer

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_INT32 = struct.Struct(">i")
_LE_INT32 = struct.Struct("<i")


def codec_name(codec_id: int) -> str:
    """Lower-case ``CompressionType.name``; unknown ids raise like ``forId``."""
    if 0 <= codec_id < len(CODEC_NAMES):
        return CODEC_NAMES[codec_id]
    raise DecompressionError(f"unknown compression type id: {codec_id}")


def decompress(codec_id: int, data: Buffer, magic: int, limit: int) -> bytes | bytearray:
    """Decompress ``data`` written with ``codec_id``; at most ``limit`` bytes out.

    The result is the buffer the codec's output was gathered in (a ``bytearray``
    for the streamed codecs), never copied again: one batch costs its
    decompressed size once, not twice."""
    try:
        if codec_id == GZIP:
            return _gunzip(data, limit)
        if codec_id == SNAPPY:
            return _unsnappy(data, limit)
        if codec_id == LZ4:
            return _unlz4(data, magic, limit)
        if codec_id == ZSTD:
            return _unzstd(data, limit)
    except (DecompressionError, LimitExceededError):
        raise
    except Exception as exc:  # a codec library's own error type
        raise DecompressionError(f"failed to decompress record stream ({codec_name(codec_id)}): {exc}") from None
    if codec_id == NONE:
        return bytes(data)
    raise DecompressionError(f"unknown compression type id: {codec_id}")


def _too_big(limit: int) -> LimitExceededError:
    return LimitExceededError(
        f"decompressed size exceeds the bound of {limit} bytes",
        hint="raise --max-message-size if this batch is genuine",
    )


def _gunzip(data: Buffer, limit: int) -> bytearray:
    import zlib

    out = bytearray()
    rest = bytes(data)
    while True:
        d = zlib.decompressobj(wbits=31)
        chunk = d.decompress(rest, limit - len(out) + 1)
        out += chunk
        if len(out) > limit:
            raise _too_big(limit)
        if d.unconsumed_tail:
            raise _too_big(limit)
        if not d.eof:
            raise DecompressionError("failed to decompress record stream (gzip): unexpected end of stream")
        rest = d.unused_data
        if not rest:
            return out


def _unsnappy(data: Buffer, limit: int) -> bytes | bytearray:
    import snappy

    data = bytes(data)
    if not data.startswith(_XERIAL_MAGIC):
        return _snappy_block(snappy, data, limit)
    if len(data) < 16:
        raise DecompressionError("failed to decompress record stream (snappy): truncated xerial header")
    out = bytearray()
    pos = 16
    while pos < len(data):
        if pos + 4 > len(data):
            raise DecompressionError("failed to decompress record stream (snappy): truncated block length")
        (n,) = _INT32.unpack_from(data, pos)
        pos += 4
        if n < 0 or pos + n > len(data):
            raise DecompressionError(
                f"failed to decompress record stream (snappy): block length {n} runs past the payload"
            )
        out += _snappy_block(snappy, data[pos : pos + n], limit - len(out))
        pos += n
    return out


def _snappy_block(snappy: ModuleType, block: bytes, limit: int) -> bytes:
    """A raw snappy block starts with its uncompressed length (uvarint): check it first."""
    size = shift = 0
    for i in range(min(5, len(block))):
        b = block[i]
        size |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    else:
        raise DecompressionError("failed to decompress record stream (snappy): bad block length")
    if size > limit:
        raise _too_big(limit)
    uncompressed: bytes = snappy.uncompress(block)
    return uncompressed


_M32 = 0xFFFFFFFF
_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_LE_4I = struct.Struct("<4I")
_LE_UINT32 = struct.Struct("<I")


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 of ``data`` (pure Python): the LZ4 frame's descriptor and block checksums."""
    n = len(data)
    pos = 0
    if n >= 16:
        v1 = (seed + _P1 + _P2) & _M32
        v2 = (seed + _P2) & _M32
        v3 = seed & _M32
        v4 = (seed - _P1) & _M32
        while pos + 16 <= n:
            a, b, c, d = _LE_4I.unpack_from(data, pos)
            v1 = (_rotl((v1 + a * _P2) & _M32, 13) * _P1) & _M32
            v2 = (_rotl((v2 + b * _P2) & _M32, 13) * _P1) & _M32
            v3 = (_rotl((v3 + c * _P2) & _M32, 13) * _P1) & _M32
            v4 = (_rotl((v4 + d * _P2) & _M32, 13) * _P1) & _M32
            pos += 16
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while pos + 4 <= n:
        (w,) = _LE_UINT32.unpack_from(data, pos)
        h = (_rotl((h + w * _P3) & _M32, 17) * _P4) & _M32
        pos += 4
    while pos < n:
        h = (_rotl((h + data[pos] * _P5) & _M32, 11) * _P1) & _M32
        pos += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


_LZ4_MAGIC = 0x184D2204
_BLOCK_MAX = {4: 1 << 16, 5: 1 << 18, 6: 1 << 20, 7: 1 << 22}


def _lz4_frame(data: bytes, magic: int) -> tuple[int, int, bool, bool]:
    """An LZ4 frame's descriptor (``KafkaLZ4BlockInputStream.readHeader``): where its first block starts,
    the largest block it allows, and whether blocks and content carry checksums."""
    n = len(data)
    if n < 6:
        raise DecompressionError("failed to decompress record stream (lz4): stream ended prematurely")
    if _LE_INT32.unpack_from(data, 0)[0] & 0xFFFFFFFF != _LZ4_MAGIC:
        raise DecompressionError("failed to decompress record stream (lz4): invalid magic bytes")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1 or flg & 0x02 or bd & 0x8F:
        raise DecompressionError("failed to decompress record stream (lz4): unsupported frame descriptor")
    block_max = _BLOCK_MAX.get((bd >> 4) & 0x07)
    if block_max is None:
        raise DecompressionError("failed to decompress record stream (lz4): invalid block size id")
    pos = 6
    if flg & 0x08:  # content size present: skipped, as Kafka does
        pos += 8
    if pos >= n:
        raise DecompressionError("failed to decompress record stream (lz4): stream ended prematurely")
    if magic != 0 and data[pos] != (xxh32(data[4:pos]) >> 8) & 0xFF:
        raise DecompressionError("failed to decompress record stream (lz4): stream frame descriptor corrupted")
    return pos + 1, block_max, bool(flg & 0x10), bool(flg & 0x04)


def _unlz4(data: Buffer, magic: int, limit: int) -> bytearray:
    import lz4.block

    data = bytes(data)
    n = len(data)
    pos, block_max, block_checksum, content_checksum = _lz4_frame(data, magic)
    out = bytearray()
    while True:
        if pos + 4 > n:
            raise DecompressionError("failed to decompress record stream (lz4): stream ended prematurely")
        (size,) = _LE_INT32.unpack_from(data, pos)
        pos += 4
        compressed = (size & 0x80000000) == 0
        size &= 0x7FFFFFFF
        if size == 0:
            if content_checksum:
                pos += 4
            return out
        if size > block_max:
            raise DecompressionError(
                f"failed to decompress record stream (lz4): block size {size} exceeded max {block_max}"
            )
        if pos + size > n:
            raise DecompressionError("failed to decompress record stream (lz4): stream ended prematurely")
        block = data[pos : pos + size]
        if compressed:
            out += lz4.block.decompress(block, uncompressed_size=block_max)
        else:
            out += block
        if len(out) > limit:
            raise _too_big(limit)
        pos += size
        if block_checksum:
            if pos + 4 > n:
                raise DecompressionError("failed to decompress record stream (lz4): stream ended prematurely")
            if _LE_INT32.unpack_from(data, pos)[0] & 0xFFFFFFFF != xxh32(block):
                raise DecompressionError("failed to decompress record stream (lz4): block checksum mismatch")
            pos += 4


_ZSTD_STEP = 1 << 16


def _unzstd(data: Buffer, limit: int) -> bytearray:
    import io

    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(bytes(data)), read_across_frames=True)
    # Read in 64 KiB steps until EOF, into one growing buffer: read(n) allocates n bytes up front (asking
    # for the whole bound, 40 MiB by default, cost ~0.2 ms per batch), and joining chunks would hold the
    # output twice.
    out = bytearray()
    while len(out) <= limit:
        chunk = reader.read(min(_ZSTD_STEP, limit + 1 - len(out)))
        if not chunk:
            break
        out += chunk
    if len(out) > limit:
        raise _too_big(limit)
    return out
