"""Compression exactly as Kafka's producer-side streams frame it (test writer only).

Schema of each compressed payload (the bytes after a v2 batch header, or the
value of a legacy wrapper message):

* gzip   (``GzipCompression`` -> ``java.util.zip.GZIPOutputStream``): one
  member.  Header ``1f 8b 08 00 00000000 00 ff`` (CM deflate, no flags,
  mtime 0, XFL 0, OS 255 "unknown"), raw deflate at zlib level 6
  (``Deflater.DEFAULT_COMPRESSION``), trailer CRC-32 LE + ISIZE LE.
* snappy (``SnappyCompression`` -> snappy-java ``SnappyOutputStream``): xerial
  framing ``82 'SNAPPY' 00``, int32 BE version 1, int32 BE min-compatible
  version 1, then for every 32 KiB of input one block:
  [int32 BE compressed length][raw snappy block].
* lz4    (``Lz4Compression`` -> ``Lz4BlockOutputStream``): an LZ4 frame.
  Magic ``04 22 4D 18`` (LE 0x184D2204); FLG 0x60 (version 01, block
  independence, no block checksum, no content size, no content checksum);
  BD 0x40 (64 KB maximum block); HC = (xxh32(descriptor, seed 0) >> 8) & 0xFF
  where "descriptor" is FLG+BD -- except for magic 0, where Kafka's old
  broken writer hashes magic+FLG+BD (so v0 frames start ``04 22 4D 18 60 40
  1A`` and v1/v2 frames ``... 60 40 82``).  Blocks of exactly 64 KiB of input
  (the last shorter): uint32 LE size, high bit set when the block is stored
  uncompressed (compressed size >= input size), then the data.  End mark:
  uint32 0.  No content checksum.
* zstd   (``ZstdCompression`` -> zstd-jni ``ZstdOutputStreamNoFinalizer``,
  level 3): one standard frame written by a streaming compressor, so no
  content size and no checksum.

Codec libraries (``lz4``, ``python-snappy``/``cramjam``, ``zstandard``) are
imported lazily, on the first call that needs them.
"""

from __future__ import annotations

import struct
import zlib

from kseg.errors import KsegError
from kseg.format.compression import xxh32  # noqa: F401 - one implementation, re-exported by the facade

CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

# gzip member header as GZIPOutputStream writes it:
#   1f 8b  magic | 08 CM=deflate | 00 FLG | 00000000 MTIME | 00 XFL | ff OS
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
# gzip trailer: uint32 LE CRC-32 of the input, uint32 LE input size mod 2^32
_GZIP_TRAILER = struct.Struct("<II")

# xerial SnappyOutputStream stream header:
#   8s magic "\x82SNAPPY\0" | int32 BE version (1) | int32 BE min compatible (1)
_XERIAL_HEADER = struct.Struct(">8sii").pack(b"\x82SNAPPY\x00", 1, 1)
# int32 BE length of the raw snappy block that follows
_BE_INT32 = struct.Struct(">i")
# snappy-java's SnappyOutputStream.DEFAULT_BLOCK_SIZE (input bytes per block)
SNAPPY_BLOCK_SIZE = 32 * 1024

# uint32 LE: LZ4 frame magic, block sizes, end mark
_M32 = 0xFFFFFFFF
_LE_UINT32 = struct.Struct("<I")
LZ4_MAGIC = 0x184D2204
LZ4_FLG = 0x60  # version 01 << 6 | block independence 1 << 5; all else 0
LZ4_BD = 0x40  # block maximum size id 4 (64 KB) << 4
LZ4_BLOCK_SIZE = 64 * 1024
_LZ4_UNCOMPRESSED = 0x80000000  # Lz4BlockOutputStream.LZ4_FRAME_INCOMPRESSIBLE_MASK

ZSTD_LEVEL = 3  # CompressionType.ZSTD default level (zstd's default)


def lz4_frame_header(magic: int) -> bytes:
    """The 7-byte LZ4 frame start ``Lz4BlockOutputStream.writeHeader`` emits.

    For ``magic == 0`` the header checksum covers the 4 magic bytes too
    (Kafka's historical bug, kept for v0 compatibility): ``04 22 4D 18 60 40 1A``.
    Otherwise it covers FLG+BD only: ``04 22 4D 18 60 40 82``.
    """
    head = _LE_UINT32.pack(LZ4_MAGIC) + bytes((LZ4_FLG, LZ4_BD))
    covered = head if magic == 0 else head[4:]
    return head + bytes(((xxh32(covered) >> 8) & 0xFF,))


def gzip_compress(data: bytes, level: int = 6) -> bytes:
    """One gzip member as ``GZIPOutputStream`` writes it (mtime 0, OS 255)."""
    comp = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY)
    body = comp.compress(data) + comp.flush(zlib.Z_FINISH)
    return b"".join((_GZIP_HEADER, body, _GZIP_TRAILER.pack(zlib.crc32(data) & _M32, len(data) & _M32)))


def _snappy_raw():
    """Return a raw (unframed) snappy block compressor, imported lazily."""
    try:
        import cramjam

        def compress(b: bytes) -> bytes:
            return bytes(cramjam.snappy.compress_raw(b))

        return compress
    except ImportError:  # pragma: no cover - cramjam ships with python-snappy>=0.7
        import snappy

        return snappy.compress


def snappy_compress(data: bytes, block_size: int = SNAPPY_BLOCK_SIZE) -> bytes:
    """xerial-framed snappy: 16-byte stream header, then [int32 BE len][raw block] per 32 KiB."""
    raw = _snappy_raw()
    out = [_XERIAL_HEADER]
    for start in range(0, len(data), block_size):
        block = raw(data[start : start + block_size])
        out.append(_BE_INT32.pack(len(block)))
        out.append(block)
    return b"".join(out)


def lz4_compress(data: bytes, magic: int = 2) -> bytes:
    """An LZ4 frame as ``Lz4BlockOutputStream`` writes it (see the module docstring)."""
    import lz4.block

    out = [lz4_frame_header(magic)]
    for start in range(0, len(data), LZ4_BLOCK_SIZE):
        chunk = data[start : start + LZ4_BLOCK_SIZE]
        block = lz4.block.compress(chunk, mode="default", store_size=False)
        if len(block) >= len(chunk):
            out.append(_LE_UINT32.pack(len(chunk) | _LZ4_UNCOMPRESSED))
            out.append(chunk)
        else:
            out.append(_LE_UINT32.pack(len(block)))
            out.append(block)
    out.append(_LE_UINT32.pack(0))  # end mark
    return b"".join(out)


def zstd_compress(data: bytes, level: int = ZSTD_LEVEL) -> bytes:
    """One zstd frame as a streaming writer emits it: no content size, no checksum."""
    import zstandard

    cctx = zstandard.ZstdCompressor(level=level, write_content_size=False, write_checksum=False)
    obj = cctx.compressobj()
    return obj.compress(data) + obj.flush()


def compress(codec: str, data: bytes, magic: int) -> bytes:
    """Compress ``data`` with the named codec as Kafka frames it for ``magic``."""
    if codec == "gzip":
        return gzip_compress(data)
    if codec == "snappy":
        return snappy_compress(data)
    if codec == "lz4":
        return lz4_compress(data, magic)
    if codec == "zstd":
        if magic < 2:
            raise KsegError(f"zstd is not supported for magic {magic}")
        return zstd_compress(data)
    raise KsegError(f"unknown codec {codec!r}; expected one of {sorted(CODEC_IDS)}")


def codec_id(codec: str) -> int:
    """Attributes bits 0-2 for a codec name (``CompressionType.id``)."""
    try:
        return CODEC_IDS[codec]
    except KeyError:
        raise KsegError(f"unknown codec {codec!r}; expected one of {sorted(CODEC_IDS)}") from None
