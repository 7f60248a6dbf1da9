"""Aiven's segment manifest and ChunkSizesBinaryCodec (kseg.format.rsm_manifest), and RSA-OAEP with SHA3-512
(kseg.format.oaep)."""

from __future__ import annotations

import base64
import json

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from kseg.errors import ManifestError
from kseg.format import oaep
from kseg.format.rsm_manifest import decode_sizes, encode_sizes, parse_manifest

INT32 = st.integers(min_value=0, max_value=(1 << 31) - 1)


def test_codec_bytes_as_chunk_sizes_binary_codec_writes_them() -> None:
    # count, base (the least of all but the last), bytesPerValue, the values less base, the last in full
    assert encode_sizes([]) == bytes.fromhex("00000000")
    assert encode_sizes([7]) == bytes.fromhex("00000001 00000007")
    assert encode_sizes([300, 301, 555, 12]) == bytes.fromhex("00000004 0000012c 01 00 01 ff 0000000c")
    assert encode_sizes([1, 70000, 5]) == bytes.fromhex("00000003 00000001 03 000000 01116f 00000005")


@given(st.lists(INT32, max_size=50))
def test_codec_round_trips(values: list[int]) -> None:
    assert decode_sizes(encode_sizes(values)) == values


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00\x00\x00\x01",
        b"\x00\x00\x00\x03\x00\x00\x00\x00\x05",
        b"\x00\x00\x00\x03\x00\x00\x00\x00\x01\x00",
        b"\xff\xff\xff\xff",
    ],
)
def test_codec_refuses_short_or_odd_input(data: bytes) -> None:
    with pytest.raises(ManifestError):
        decode_sizes(data)


def _manifest(**chunk_index: object) -> dict:
    return {
        "version": "1",
        "chunkIndex": {
            "type": "fixed",
            "originalChunkSize": 100,
            "originalFileSize": 250,
            "transformedChunkSize": 128,
            "finalTransformedChunkSize": 78,
            **chunk_index,
        },
        "segmentIndexes": {
            n: {"position": 0, "size": 0} for n in ("offset", "timestamp", "producerSnapshot", "leaderEpoch")
        }
        | {"transaction": None},
        "compression": False,
        "encryption": {
            "dataKey": "kp:" + base64.b64encode(b"wrapped").decode(),
            "aad": base64.b64encode(b"aad").decode(),
        },
    }


def test_fixed_index_chunks() -> None:
    m = parse_manifest(json.dumps(_manifest()).encode())
    index = m.chunk_index
    assert [index.chunk(i).transformed_size for i in range(index.count)] == [128, 128, 78]
    assert index.chunk(2) == index.chunk(index.chunk_for(249))
    c = index.chunk(2)
    assert (c.original_position, c.original_size, c.transformed_position, c.transformed_size) == (200, 50, 256, 78)
    assert m.encryption is not None and m.encryption.key_pair_id == "kp" and m.encryption.aad == b"aad"
    assert m.segment_indexes is not None and m.segment_indexes["transaction"] is None


def test_variable_index_and_its_faults() -> None:
    packed = base64.b64encode(
        zstandard.ZstdCompressor(write_content_size=True).compress(encode_sizes([90, 95, 40]))
    ).decode()
    m = parse_manifest(json.dumps(_manifest(type="variable", transformedChunks=packed)).encode())
    index = m.chunk_index
    assert [index.chunk(i).transformed_size for i in range(index.count)] == [90, 95, 40]
    assert index.transformed_file_size == 225 and index.chunk(2).transformed_position == 185
    with pytest.raises(ManifestError, match="3 chunk sizes, but originalFileSize 350 in chunks of 100 is 4 chunks"):
        parse_manifest(json.dumps(_manifest(type="variable", transformedChunks=packed, originalFileSize=350)).encode())
    with pytest.raises(ManifestError, match="not base64"):
        parse_manifest(json.dumps(_manifest(type="variable", transformedChunks="%%")).encode())


@pytest.mark.parametrize(
    "change, message",
    [
        ({"version": "2"}, "version"),
        (  # chunk.size is at most Integer.MAX_VALUE / 2 (RemoteStorageManagerConfig): a reader holds one chunk
            {"chunkIndex": {"type": "fixed", "originalChunkSize": 1 << 30, "originalFileSize": 0}},
            "originalChunkSize: 1073741824, larger than chunk.size allows",
        ),
        ({"compression": "no"}, "compression"),
        ({"chunkIndex": {"type": "other", "originalChunkSize": 1, "originalFileSize": 0}}, "chunkIndex.type"),
        ({"encryption": {"dataKey": "a:b:c", "aad": ""}}, "encryption.dataKey"),
        ({"segmentIndexes": {"offset": {"position": -1, "size": 0}}}, "segmentIndexes.offset.position"),
    ],
)
def test_manifest_faults_name_the_field(change: dict, message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        parse_manifest(json.dumps(_manifest() | change).encode())
    with pytest.raises(ManifestError, match="not JSON"):
        parse_manifest(b'{"version": "1",')


def test_a_manifest_nested_too_deep_is_not_json() -> None:
    # json's decoder recursed into a RecursionError: an internal error, not a line about the manifest
    with pytest.raises(ManifestError, match="not JSON: nested too deep"):
        parse_manifest(b"[" * 100_000)
    with pytest.raises(ManifestError, match="not JSON: nested too deep"):
        parse_manifest(b'{"version": "1", "chunkIndex": ' + b'{"a": ' * 100_000)


def test_a_fixed_index_of_2_31_chunks_is_never_a_list() -> None:
    # originalFileSize 2^31-1 in chunks of 1 byte: the chunk sizes were a list of 2^31 ints (the process was
    # killed); now two numbers, and the object's size shows the lie when the first chunk is read
    big = (1 << 31) - 1
    m = parse_manifest(json.dumps(_manifest(originalChunkSize=1, originalFileSize=big, transformedChunkSize=29,
                                            finalTransformedChunkSize=29)).encode())  # fmt: skip
    index = m.chunk_index
    assert index.count == big and index.transformed_file_size == big * 29
    last = index.chunk(big - 1)
    assert (last.original_position, last.transformed_position, last.transformed_size) == (big - 1, (big - 1) * 29, 29)
    with pytest.raises(IndexError):
        index.chunk(big)


@given(st.lists(st.integers(min_value=0, max_value=(1 << 31) - 1), min_size=1, max_size=60))
def test_variable_positions_are_running_sums(sizes: list[int]) -> None:
    packed = base64.b64encode(zstandard.ZstdCompressor(write_content_size=True).compress(encode_sizes(sizes))).decode()
    m = parse_manifest(
        json.dumps(
            _manifest(type="variable", originalChunkSize=10, originalFileSize=10 * len(sizes), transformedChunks=packed)
        ).encode()
    )
    index = m.chunk_index
    for i, size in enumerate(sizes):
        assert (index.chunk(i).transformed_position, index.chunk(i).transformed_size) == (sum(sizes[:i]), size)
    assert index.transformed_file_size == sum(sizes)


def test_a_size_list_whose_count_lies_is_refused_before_decoding() -> None:
    sizes = bytes.fromhex("7fffffff 00000000 01") + bytes(20)  # count 2^31-1, base 0, one byte per value
    packed = zstandard.ZstdCompressor(write_content_size=True).compress(sizes)
    change = {"type": "variable", "transformedChunks": base64.b64encode(packed).decode()}
    with pytest.raises(ManifestError, match="2147483647 chunk sizes, but originalFileSize 250 in chunks of 100 is 3"):
        parse_manifest(json.dumps(_manifest(**change)).encode())


@pytest.mark.parametrize("sizes", [(100, 0), (0, 50), (128, 50), (100, 49)])
def test_an_untransformed_segment_whose_chunk_sizes_differ_is_refused(sizes: tuple[int, int]) -> None:
    # neither compressed nor encrypted: the object is read as the segment byte for byte, so a manifest whose
    # transformed sizes differ from the original ones contradicts itself (it was read as clean)
    obj = _manifest(transformedChunkSize=sizes[0], finalTransformedChunkSize=sizes[1])
    del obj["encryption"]
    with pytest.raises(ManifestError, match="neither compressed nor encrypted, but its transformed size is"):
        parse_manifest(json.dumps(obj).encode())
    obj["chunkIndex"] |= {"transformedChunkSize": 100, "finalTransformedChunkSize": 50}
    assert parse_manifest(json.dumps(obj).encode()).chunk_index.transformed_file_size == 250


def test_an_untransformed_empty_segment_has_no_chunks() -> None:
    # a rolled segment may be empty (the corpus's empty-log-0): was an internal error, "IndexError: chunk 0 of 0"
    obj = _manifest(originalFileSize=0, transformedChunkSize=100, finalTransformedChunkSize=0)
    del obj["encryption"]
    index = parse_manifest(json.dumps(obj).encode()).chunk_index
    assert (index.count, index.transformed_file_size) == (0, 0)


def test_overlapping_segment_indexes_are_refused() -> None:
    spans = {"offset": (0, 32), "timestamp": (16, 48), "producerSnapshot": (64, 10), "leaderEpoch": (74, 8)}
    obj = _manifest()
    obj["segmentIndexes"] |= {n: {"position": p, "size": s} for n, (p, s) in spans.items()}
    with pytest.raises(ManifestError, match=r"segmentIndexes.timestamp \(bytes 16 to 64\) overlaps .*offset"):
        parse_manifest(json.dumps(obj).encode())
    obj["segmentIndexes"]["timestamp"] = {"position": 32, "size": 32}  # adjacent, as the plugin writes them
    assert parse_manifest(json.dumps(obj).encode()).segment_indexes is not None


def test_oaep_sha3_512_round_trip_and_a_wrong_key() -> None:
    from cryptography.hazmat.primitives.asymmetric import rsa

    def crt(key: rsa.RSAPrivateKey) -> tuple[int, tuple[int, int, int, int, int]]:
        n = key.private_numbers()
        return n.public_numbers.n, (n.p, n.q, n.dmp1, n.dmq1, n.iqmp)

    key, other = (rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2))
    n, private = crt(key)
    wrapped = oaep.encrypt(b"k" * 32, n, 65537)
    assert len(wrapped) == 256 and oaep.decrypt(wrapped, n, private) == b"k" * 32
    with pytest.raises(oaep.OaepError):
        oaep.decrypt(wrapped, *crt(other))
    with pytest.raises(oaep.OaepError, match="wrapped key of 255 bytes, expected 256"):
        oaep.decrypt(wrapped[:-1], n, private)
    # a 1024-bit key: the wrapped key of its own size was refused as "128 bytes, expected 128"
    small = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    with pytest.raises(oaep.OaepError, match="a 1024-bit RSA key is too small for OAEP with SHA3-512"):
        oaep.decrypt(bytes(128), *crt(small))
