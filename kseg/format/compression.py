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
from typing import Any, Iterator, Union

from kseg.errors import DecompressionError, LimitExceededError

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")

#: What the codecs read: any bytes-like object.
Buffer = Union[bytes, bytearray, memoryview]

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

    :func:`stream` gathered into one buffer: the codec's own output when it comes as one piece (never copied
    again: one batch costs its decompressed size once, not twice), else one ``bytearray``."""
    if codec_id == NONE:
        return bytes(data)
    pieces = stream(codec_id, data, magic, limit, limit + 1)
    first = next(pieces, b"")
    second = next(pieces, None)
    if second is None:
        return first
    out = bytearray(first)
    out += second
    for piece in pieces:
        out += piece
    return out


#: The size of the pieces :func:`stream` hands out by default.
PIECE = 1 << 20


def window_codec(codec_id: int) -> Any:
    """What the compiled engine's window loop (``dump_window``) decompresses ``codec_id`` with: the libraries
    :func:`stream` reads with, so the bytes are the same -- lz4's block decompressor (the engine reads Kafka's
    frame around it by :func:`_unlz4`'s rules), or a zstd decompressor (its stream reader read across frames,
    as :func:`_unzstd`).  Imported when the engine meets the first such batch; None for any other codec."""
    if codec_id == LZ4:
        import lz4.block

        return lz4.block.decompress
    if codec_id == ZSTD:
        import zstandard

        return zstandard.ZstdDecompressor()
    return None


class WindowCodecs:
    """:func:`window_codec`, each codec's object made once for a run of window calls (making a zstd
    decompressor costs more than decompressing a small batch, and the window loop is called every 64 KiB
    of lines)."""

    __slots__ = ("_made",)

    def __init__(self) -> None:
        self._made: dict[int, Any] = {}

    def __call__(self, codec_id: int) -> Any:
        made = self._made.get(codec_id)
        if made is None:
            made = self._made[codec_id] = window_codec(codec_id)
        return made


def stream(
    codec_id: int, data: Buffer, magic: int, limit: int, piece: int | None = None
) -> Iterator[bytes | bytearray]:
    """Decompress ``data`` written with ``codec_id`` as a stream of pieces, as Kafka's codecs' input
    streams read it (``GzipCompression.wrapForInput``, ``SnappyCompression``, ``Lz4Compression``,
    ``ZstdCompression``): at most ``limit`` bytes in all, each piece non-empty and at most ``piece`` bytes
    except a codec block larger than that (a raw snappy block, at most ``limit``), decoded whole.

    The pieces concatenated are :func:`decompress`'s result, and the errors are its errors at the point of
    the stream where they are found: a corrupt stream a :class:`DecompressionError`, output past ``limit``
    a :class:`LimitExceededError` before more memory is taken.  Codec ``none`` is one piece, ``data``."""
    codec_name(codec_id)  # an unknown id raises before the first piece is asked for
    piece = max(1, PIECE if piece is None else piece)
    if codec_id == GZIP:
        return _guarded(codec_id, _gunzip(data, limit, piece))
    if codec_id == SNAPPY:
        return _guarded(codec_id, _unsnappy(data, limit, piece))
    if codec_id == LZ4:
        return _guarded(codec_id, _unlz4(data, magic, limit, piece))
    if codec_id == ZSTD:
        return _guarded(codec_id, _unzstd(data, limit, piece))
    return iter((bytes(data),) if len(data) else ())


def _guarded(codec_id: int, pieces: Iterator[bytes | bytearray]) -> Iterator[bytes | bytearray]:
    """``pieces`` with a codec library's own error type turned into a :class:`DecompressionError`."""
    try:
        yield from pieces
    except (DecompressionError, LimitExceededError):
        raise
    except Exception as exc:  # a codec library's own error type
        raise DecompressionError(f"failed to decompress record stream ({codec_name(codec_id)}): {exc}") from None


def _too_big(limit: int) -> LimitExceededError:
    return LimitExceededError(
        f"decompressed size exceeds the bound of {limit} bytes",
        hint="raise --max-message-size if this batch is genuine",
    )


def _gunzip(data: Buffer, limit: int, piece: int) -> Iterator[bytes]:
    """RFC 1952 members one after another, each read ``piece`` bytes of output at a time."""
    import zlib

    total = 0
    rest = bytes(data)
    while True:
        d = zlib.decompressobj(wbits=31)
        while True:
            most = min(piece, limit - total + 1)
            chunk = d.decompress(rest, most)
            rest = d.unconsumed_tail
            total += len(chunk)
            if total > limit:
                raise _too_big(limit)
            if chunk:
                yield chunk
            if d.eof or (not rest and len(chunk) < most):  # a full piece may leave output inside zlib
                break
        if not d.eof:
            raise DecompressionError("failed to decompress record stream (gzip): unexpected end of stream")
        rest = d.unused_data
        if not rest:
            return


def _unsnappy(data: Buffer, limit: int, piece: int) -> Iterator[bytes | bytearray]:
    """snappy-java's xerial framing (blocks gathered into pieces), or one raw block."""
    import snappy

    data = bytes(data)
    if not data.startswith(_XERIAL_MAGIC):
        block = _snappy_block(snappy, data, limit, limit)
        if block:
            yield block
        return
    if len(data) < 16:
        raise DecompressionError("failed to decompress record stream (snappy): truncated xerial header")
    out = bytearray()
    total = 0
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
        block = _snappy_block(snappy, data[pos : pos + n], limit - total, limit)
        total += len(block)
        pos += n
        if out and len(out) + len(block) > piece:
            yield out
            out = bytearray()
        out += block
    if out:
        yield out


def _snappy_block(snappy: Any, block: bytes, room: int, limit: int) -> bytes:
    """A raw snappy block starts with its uncompressed length (uvarint): check it against the ``room`` left
    under ``limit`` first."""
    size = shift = 0
    for i in range(min(5, len(block))):
        b = block[i]
        size |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
    else:
        raise DecompressionError("failed to decompress record stream (snappy): bad block length")
    if size > room:
        raise _too_big(limit)
    out: bytes = snappy.uncompress(block)
    return out


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


def _lz4_frame_start(data: bytes, magic: int) -> tuple[int, int, bool]:
    """Check an LZ4 frame's header: ``(position of the first block, block size bound, block checksums)``."""
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
    # Magic 0: Kafka's old writer hashed the magic bytes too, so the descriptor checksum is not checked.
    if magic != 0 and data[pos] != (xxh32(data[4:pos]) >> 8) & 0xFF:
        raise DecompressionError("failed to decompress record stream (lz4): stream frame descriptor corrupted")
    return pos + 1, block_max, bool(flg & 0x10)


def _unlz4(data: Buffer, magic: int, limit: int, piece: int) -> Iterator[bytearray]:
    """Kafka's LZ4 frame (``KafkaLZ4BlockInputStream``), blocks gathered into pieces."""
    import lz4.block

    data = bytes(data)
    n = len(data)
    pos, block_max, block_checksum = _lz4_frame_start(data, magic)
    out = bytearray()
    total = 0
    while True:
        if pos + 4 > n:
            raise DecompressionError("failed to decompress record stream (lz4): stream ended prematurely")
        (size,) = _LE_INT32.unpack_from(data, pos)
        pos += 4
        compressed = (size & 0x80000000) == 0
        size &= 0x7FFFFFFF
        if size == 0:  # the end mark (a content checksum after it is not read, as Kafka does not)
            if out:
                yield out
            return
        if size > block_max:
            raise DecompressionError(
                f"failed to decompress record stream (lz4): block size {size} exceeded max {block_max}"
            )
        if pos + size > n:
            raise DecompressionError("failed to decompress record stream (lz4): stream ended prematurely")
        block = data[pos : pos + size]
        raw = lz4.block.decompress(block, uncompressed_size=block_max) if compressed else block
        total += len(raw)
        if total > limit:
            raise _too_big(limit)
        if out and len(out) + len(raw) > piece:
            yield out
            out = bytearray()
        out += raw
        pos += size
        if block_checksum:
            if pos + 4 > n:
                raise DecompressionError("failed to decompress record stream (lz4): stream ended prematurely")
            if _LE_INT32.unpack_from(data, pos)[0] & 0xFFFFFFFF != xxh32(block):
                raise DecompressionError("failed to decompress record stream (lz4): block checksum mismatch")
            pos += 4


_ZSTD_STEP = 1 << 16


def _unzstd(data: Buffer, limit: int, piece: int) -> Iterator[bytearray]:
    """One or more zstd frames read as a stream (``ZstdInputStreamNoFinalizer``)."""
    import io

    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(bytes(data)), read_across_frames=True)
    # Read in 64 KiB steps into a piece: read(n) allocates n bytes up front (asking for the whole bound,
    # 40 MiB by default, cost ~0.2 ms per batch), and joining chunks would hold the output twice.
    total = 0
    out = bytearray()
    while total <= limit:
        chunk = reader.read(min(_ZSTD_STEP, limit + 1 - total, piece - len(out)))
        if not chunk:
            break
        total += len(chunk)
        out += chunk
        if len(out) >= piece and total <= limit:
            yield out
            out = bytearray()
    if total > limit:
        raise _too_big(limit)
    if out:
        yield out
