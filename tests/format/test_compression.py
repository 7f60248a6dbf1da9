"""Codecs as Kafka writes them, with bounded output."""

from __future__ import annotations

import gzip
import os
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kseg.errors import DecompressionError, LimitExceededError
from kseg.format import compression
from kseg.format.compression import decompress, xxh32

xxhash = pytest.importorskip("xxhash", reason="test extra")


@given(st.binary(max_size=64), st.integers(min_value=0, max_value=2**32 - 1))
def testxxh32_matches_the_reference(data: bytes, seed: int) -> None:
    assert xxh32(data, seed) == xxhash.xxh32_intdigest(data, seed)


def _xerial(blocks: list[bytes]) -> bytes:
    import snappy

    out = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
    for block in blocks:
        c = snappy.compress(block)
        out += struct.pack(">i", len(c)) + c
    return out


def _lz4_frame(data: bytes, *, magic: int) -> bytes:
    """Kafka's lz4 framing: FLG 0x60 (v01, block independence), BD 0x40 (64 KB)."""
    import lz4.block

    descriptor = bytes([0x60, 0x40])
    hc = (xxh32(descriptor) >> 8) & 0xFF
    if magic == 0:  # Kafka's historical bug: the magic bytes were hashed too
        hc = (xxh32(struct.pack("<I", 0x184D2204) + descriptor) >> 8) & 0xFF
    out = struct.pack("<I", 0x184D2204) + descriptor + bytes([hc])
    for i in range(0, len(data), 65536):
        block = lz4.block.compress(data[i : i + 65536], store_size=False)
        out += struct.pack("<I", len(block)) + block
    return out + b"\0\0\0\0"


PAYLOAD = os.urandom(1000) + b"abc" * 50_000


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_lz4_kafka_framing(magic: int) -> None:
    frame = _lz4_frame(PAYLOAD, magic=magic)
    if magic == 0:
        assert frame[:7] == bytes.fromhex("04224d1860401a")  # as in the corpus v0-lz4-0
    else:
        assert frame[:7] == bytes.fromhex("04224d18604082")
    assert decompress(compression.LZ4, frame, magic, len(PAYLOAD)) == PAYLOAD


def test_lz4_corrupt_descriptor_checksum_is_rejected_for_v1() -> None:
    frame = bytearray(_lz4_frame(b"x" * 100, magic=1))
    frame[6] ^= 0xFF
    with pytest.raises(DecompressionError, match="descriptor corrupted"):
        decompress(compression.LZ4, bytes(frame), 1, 1000)
    assert decompress(compression.LZ4, bytes(frame), 0, 1000) == b"x" * 100  # ignored for magic 0


def test_lz4_truncated_stream() -> None:
    frame = _lz4_frame(PAYLOAD, magic=2)
    with pytest.raises(DecompressionError, match="prematurely"):
        decompress(compression.LZ4, frame[:-10], 2, len(PAYLOAD))


def test_snappy_xerial_and_raw() -> None:
    import snappy

    assert decompress(compression.SNAPPY, _xerial([PAYLOAD[:40000], PAYLOAD[40000:]]), 2, len(PAYLOAD)) == PAYLOAD
    assert decompress(compression.SNAPPY, snappy.compress(PAYLOAD), 2, len(PAYLOAD)) == PAYLOAD


def test_gzip_several_members() -> None:
    data = gzip.compress(b"one ") + gzip.compress(b"two")
    assert decompress(compression.GZIP, data, 2, 100) == b"one two"


def test_zstd_several_frames() -> None:
    import zstandard

    c = zstandard.ZstdCompressor()
    data = c.compress(b"one ") + c.compress(b"two")
    assert decompress(compression.ZSTD, data, 2, 100) == b"one two"


def _zeros(codec: int, size: int, xerial_chunk: int) -> bytes:
    """``size`` zero bytes compressed with ``codec`` (snappy: xerial blocks of ``xerial_chunk`` bytes)."""
    big = b"\0" * size
    if codec == compression.GZIP:
        return gzip.compress(big)
    if codec == compression.SNAPPY:
        return _xerial([big[i : i + xerial_chunk] for i in range(0, len(big), xerial_chunk)])
    if codec == compression.LZ4:
        return _lz4_frame(big, magic=2)
    import zstandard

    return zstandard.ZstdCompressor().compress(big)


@pytest.mark.parametrize("codec", [compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD])
@settings(max_examples=5, deadline=None)
@given(st.integers(min_value=1, max_value=5000))
def test_bombs_stop_at_the_limit(codec: int, limit: int) -> None:
    data = _zeros(codec, 4 << 20, 32768)
    with pytest.raises(LimitExceededError, match=f"bound of {limit} bytes"):
        decompress(codec, data, 2, limit)


@pytest.mark.parametrize("codec", [compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD])
def test_garbage_is_a_decompression_error(codec: int) -> None:
    with pytest.raises(DecompressionError):
        decompress(codec, b"\x82SNAPPY\x00garbage-garbage-garbage" if codec == 2 else b"garbage-garbage", 2, 1000)


def test_unknown_codec_name() -> None:
    with pytest.raises(DecompressionError, match="unknown compression type id: 7"):
        compression.codec_name(7)


@pytest.mark.parametrize("codec", [compression.GZIP, compression.SNAPPY, compression.LZ4, compression.ZSTD])
def test_a_bomb_allocates_a_small_multiple_of_the_bound(codec: int) -> None:
    """64 MiB of zeros against a 1 MiB bound: peak Python allocation stays near the bound."""
    import tracemalloc

    data = _zeros(codec, 64 << 20, 65536)
    limit = 1 << 20
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceededError):
            decompress(codec, data, 2, limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * limit + len(data) * 2 + (1 << 20), peak
