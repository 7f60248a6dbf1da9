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


# The streaming decompressor (compression.stream): pieces of bounded size whose concatenation is the
# one-shot result, the bound checked as they come, the same errors.


def _streams() -> list[tuple[int, int, bytes]]:
    """(codec, magic, compressed PAYLOAD) for every framing Kafka writes."""
    import snappy
    import zstandard

    c = zstandard.ZstdCompressor()
    half = len(PAYLOAD) // 2
    return [
        (compression.GZIP, 2, gzip.compress(PAYLOAD[:half]) + gzip.compress(PAYLOAD[half:])),
        (compression.SNAPPY, 2, _xerial([PAYLOAD[i : i + 32768] for i in range(0, len(PAYLOAD), 32768)])),
        (compression.SNAPPY, 1, snappy.compress(PAYLOAD)),  # raw snappy: one block, decoded whole
        (compression.LZ4, 2, _lz4_frame(PAYLOAD, magic=2)),
        (compression.LZ4, 0, _lz4_frame(PAYLOAD, magic=0)),  # Kafka 0.10's descriptor checksum
        (compression.ZSTD, 2, c.compress(PAYLOAD[:half]) + c.compress(PAYLOAD[half:])),
    ]


STREAMS = _streams()
STREAM_IDS = ["gzip", "snappy-xerial", "snappy-raw", "lz4", "lz4-magic0", "zstd"]


@pytest.mark.parametrize("piece", [1000, 65536, 1 << 20])
@pytest.mark.parametrize(("codec", "magic", "data"), STREAMS, ids=STREAM_IDS)
def test_stream_pieces_are_bounded_and_join_to_the_one_shot_result(codec: int, magic: int, data: bytes, piece: int):
    pieces = list(compression.stream(codec, data, magic, len(PAYLOAD), piece))
    assert b"".join(pieces) == decompress(codec, data, magic, len(PAYLOAD)) == PAYLOAD
    assert all(pieces)
    raw_block = codec == compression.SNAPPY and magic == 1
    block = 65536 if codec == compression.LZ4 else 32768 if codec == compression.SNAPPY else 0
    assert raw_block or max(map(len, pieces)) <= max(piece, block)
    if not raw_block and piece < len(PAYLOAD) // 2:
        assert len(pieces) > 2


@pytest.mark.parametrize(("codec", "magic", "data"), STREAMS, ids=STREAM_IDS)
def test_stream_stops_at_the_bound_mid_stream(codec: int, magic: int, data: bytes) -> None:
    limit = len(PAYLOAD) - 1
    pieces = compression.stream(codec, data, magic, limit, 4096)
    got = 0
    with pytest.raises(LimitExceededError, match=f"bound of {limit} bytes") as caught:
        for piece in pieces:
            got += len(piece)
    assert got <= limit  # nothing past the bound is handed out
    with pytest.raises(LimitExceededError) as once:
        decompress(codec, data, magic, limit)
    assert str(caught.value) == str(once.value)


@pytest.mark.parametrize(("codec", "magic", "data"), STREAMS, ids=STREAM_IDS)
def test_a_corrupt_stream_is_the_same_error_as_one_shot(codec: int, magic: int, data: bytes) -> None:
    for bad in (data[: len(data) // 2], data[:20] + bytes(len(data) - 20), b"garbage-garbage"):
        try:
            expected = decompress(codec, bad, magic, len(PAYLOAD))
        except (DecompressionError, LimitExceededError) as exc:
            with pytest.raises(type(exc)) as caught:
                for _ in compression.stream(codec, bad, magic, len(PAYLOAD), 4096):
                    pass
            assert str(caught.value) == str(exc)
        else:  # what a codec accepts, it accepts streamed
            assert b"".join(compression.stream(codec, bad, magic, len(PAYLOAD), 4096)) == expected


def test_stream_of_an_unknown_codec_raises_at_once() -> None:
    with pytest.raises(DecompressionError, match="unknown compression type id: 6"):
        compression.stream(6, b"x", 2, 100)
    assert list(compression.stream(compression.NONE, b"abc", 2, 100)) == [b"abc"]
