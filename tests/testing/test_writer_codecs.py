"""The writer's codecs: Kafka's framing, and decodable by standard decoders and kafka-python."""

from __future__ import annotations

import gzip
import os
import random
import struct

import pytest

from kseg.testing.writer import gzip_compress, lz4_compress, lz4_frame_header, snappy_compress, xxh32, zstd_compress

from ._kparse import decompress


def _text(n: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    words = [b"alpha", b"bravo", b"charlie", b"delta", b"echo", b"kilo", b"zulu"]
    out = bytearray()
    while len(out) < n:
        out += rng.choice(words) + b" "
    return bytes(out[:n])


@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", 0x02CC5D05),
        (b"abc", 0x32D153FF),
        (b"Nobody inspects the spammish repetition", 0xE2293B2F),
    ],
)
def test_xxh32_known_vectors(data, expected):
    assert xxh32(data) == expected


def test_lz4_frame_headers_kafka_bytes():
    assert lz4_frame_header(0) == bytes.fromhex("04224d1860401a")  # Kafka's broken v0 checksum
    assert lz4_frame_header(1) == lz4_frame_header(2) == bytes.fromhex("04224d18604082")


def test_gzip_is_one_java_style_member():
    data = _text(100_000)
    out = gzip_compress(data)
    assert out[:10] == bytes.fromhex("1f8b08000000000000ff")
    assert gzip.decompress(out) == data
    assert struct.unpack("<I", out[-4:])[0] == len(data)


def test_snappy_xerial_blocks_of_32k():
    import snappy

    data = _text(100_000)
    out = snappy_compress(data)
    assert out[:16] == bytes.fromhex("82534e41505059000000000100000001")
    pos, sizes = 16, []
    while pos < len(out):
        (n,) = struct.unpack_from(">i", out, pos)
        sizes.append(len(snappy.uncompress(out[pos + 4 : pos + 4 + n])))
        pos += 4 + n
    assert sizes == [32768, 32768, 32768, 100_000 - 3 * 32768]
    assert decompress(2, out) == data


def test_snappy_decodes_with_kafka_python():
    from kafka.codec import snappy_decode

    data = _text(70_000)
    assert snappy_decode(snappy_compress(data)) == data


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_lz4_blocks_of_64k_and_stored_blocks(magic):
    data = _text(131_072) + os.urandom(70_000)  # the random blocks are stored uncompressed
    out = lz4_compress(data, magic)
    assert out[:7] == lz4_frame_header(magic)
    pos, blocks = 7, []
    while True:
        (size,) = struct.unpack_from("<I", out, pos)
        pos += 4
        if size == 0:
            break
        blocks.append(size)
        pos += size & 0x7FFFFFFF
    assert pos == len(out)  # no content checksum after the end mark
    assert len(blocks) == 4  # 64 KiB + 64 KiB + 64 KiB + rest
    assert blocks[-1] & 0x80000000 and blocks[-2] & 0x80000000  # incompressible -> stored
    assert not blocks[0] & 0x80000000
    assert decompress(3, out) == data


def test_lz4_standard_decoder_accepts_v1_v2_and_rejects_v0_checksum():
    """lz4.frame checks the header checksum: Kafka's v0 frames need the byte fixed first."""
    import lz4.frame

    data = _text(5000)
    assert lz4.frame.decompress(lz4_compress(data, 2)) == data
    v0 = lz4_compress(data, 0)
    with pytest.raises(RuntimeError):
        lz4.frame.decompress(v0)
    assert lz4.frame.decompress(lz4_frame_header(2) + v0[7:]) == data


def test_zstd_frame_has_no_content_size_or_checksum():
    import zstandard

    data = _text(50_000)
    out = zstd_compress(data)
    params = zstandard.get_frame_parameters(out)
    assert params.content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert not params.has_checksum
    assert decompress(4, out) == data
