"""The segment manifest of Aiven's tiered-storage plugin (``<segment>.rsm-manifest``), pure bytes -> values.

Facts from github:Aiven-Open/tiered-storage-for-apache-kafka, ``core/src/main/java/io/aiven/kafka/
tieredstorage/``:

* ``manifest/SegmentManifest.java``: JSON with a type property ``"version"`` (``"1"``: ``SegmentManifestV1``)
  and the fields ``chunkIndex``, ``segmentIndexes``, ``compression`` (boolean), ``encryption`` (absent
  when off) and ``remoteLogSegmentMetadata`` (written, never read back).
* ``manifest/index/ChunkIndex.java``: a type property ``"type"``: ``"fixed"`` (``FixedSizeChunkIndex``:
  ``originalChunkSize``, ``originalFileSize``, ``transformedChunkSize``, ``finalTransformedChunkSize``) or
  ``"variable"`` (``VariableSizeChunkIndex``: ``originalChunkSize``, ``originalFileSize``,
  ``transformedChunks``: base64 of one zstd frame (content size set) of ``ChunkSizesBinaryCodec``'s bytes,
  at most 10 MiB decompressed, ``TransformedChunksDeserializer.MAX_DECOMPRESSED_SIZE``).
* ``AbstractChunkIndex``: ``ceil(originalFileSize / originalChunkSize)`` chunks (fixed); every chunk but
  the last is ``originalChunkSize`` bytes of the original file; transformed chunks follow each other in
  the object from position 0.
* ``manifest/index/serde/ChunkSizesBinaryCodec.java``: big-endian; ``count`` (int32); none more when
  0; the one value (int32) when 1; else ``base`` (int32, the least of all values but the last),
  ``bytesPerValue`` (one byte, 1-4), ``count - 1`` values less ``base`` in ``bytesPerValue`` bytes each,
  then the last value in full (int32).
* ``manifest/SegmentIndexesV1.java``: ``offset``, ``timestamp``, ``producerSnapshot``, ``leaderEpoch``,
  ``transaction`` (null when the segment has none), each ``{"position", "size"}`` in the ``.indexes``
  object (absent in manifests written before October 2023, when each index was its own object).
* ``manifest/SegmentEncryptionMetadataV1.java``: ``dataKey`` (``EncryptedDataKey.serialize``:
  ``<keyPairId>:<standard base64 of the RSA-wrapped AES key>``) and ``aad`` (Jackson's standard base64
  of the bytes); the IV is 12 bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from array import array
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Iterator

from kseg.errors import CorruptRecordError, ManifestError
from kseg.limits import INT32_MAX

#: ``TransformedChunksDeserializer.MAX_DECOMPRESSED_SIZE``: the largest encoded size list.
MAX_SIZE_LIST = 10 * 1024 * 1024
#: ``SegmentEncryptionMetadataV1.IV_SIZE`` and ``AesEncryptionProvider.GCM_TAG_LENGTH`` (bits / 8).
IV_SIZE, TAG_SIZE = 12, 16
#: ``chunk.size``'s range in ``RemoteStorageManagerConfig`` (``Range.between(1, Integer.MAX_VALUE / 2)``):
#: no chunk the plugin writes is larger, and a reader holds one chunk.
MAX_CHUNK_SIZE = INT32_MAX // 2
#: The index names of ``segmentIndexes``, in the order the plugin concatenates them (``uploadIndexes``).
INDEX_NAMES = ("offset", "timestamp", "producerSnapshot", "leaderEpoch", "transaction")
_INT = struct.Struct(">i")


@dataclass(frozen=True)
class Chunk:
    """One chunk (``io.aiven.kafka.tieredstorage.Chunk``): its number, and where it is in the original
    segment and in the transformed object."""

    id: int
    original_position: int
    original_size: int
    transformed_position: int
    transformed_size: int


@dataclass(frozen=True)
class ChunkIndex:
    """``FixedSizeChunkIndex`` / ``VariableSizeChunkIndex``: where each chunk is in the transformed object.

    A fixed index keeps its two sizes, never a list (``originalFileSize`` 2^31-1 in chunks of 1 byte is
    2^31 chunks); a variable one keeps the running sums of its sizes (``count + 1`` of them, 8 bytes
    each, at most what a 10 MiB size list holds), so a chunk's position is one look-up, not a sum."""

    kind: str  # 'fixed' | 'variable'
    original_chunk_size: int
    original_file_size: int
    count: int
    fixed_sizes: tuple[int, int] | None  # fixed: (transformedChunkSize, finalTransformedChunkSize)
    positions: array[int] | None  # variable: positions[i] is where chunk i starts; positions[count] the end

    def transformed_position(self, i: int) -> int:
        """Where chunk ``i`` (0 to ``count``; ``count``: the end) starts in the transformed object."""
        if self.positions is not None:
            return int(self.positions[i])
        assert self.fixed_sizes is not None
        if i == self.count and i > 0:
            return (i - 1) * self.fixed_sizes[0] + self.fixed_sizes[1]
        return i * self.fixed_sizes[0]

    def transformed_size(self, i: int) -> int:
        return self.transformed_position(i + 1) - self.transformed_position(i)

    @property
    def transformed_file_size(self) -> int:
        return self.transformed_position(self.count)

    def chunk(self, i: int) -> Chunk:
        """Chunk ``i`` (``AbstractChunkIndex.materializeChunks``: positions are running sums)."""
        if not 0 <= i < self.count:
            raise IndexError(f"chunk {i} of {self.count}")
        size = self.original_chunk_size
        original = min(size, self.original_file_size - i * size)
        return Chunk(i, i * size, original, self.transformed_position(i), self.transformed_size(i))

    def chunk_for(self, position: int) -> int:
        """The number of the chunk holding original byte ``position`` (``findChunkForOriginalOffset``)."""
        return position // self.original_chunk_size


@dataclass(frozen=True)
class Encryption:
    key_pair_id: str
    wrapped_key: bytes
    aad: bytes


@dataclass(frozen=True)
class Manifest:
    chunk_index: ChunkIndex
    compression: bool
    encryption: Encryption | None
    segment_indexes: dict[str, tuple[int, int] | None] | None  # name -> (position, size); None: old layout
    metadata: dict[str, Any] | None


def encode_sizes(values: list[int]) -> bytes:
    """``ChunkSizesBinaryCodec.encode`` (for the test writer)."""
    count = len(values)
    if count == 0:
        return _INT.pack(0)
    if count == 1:
        return _INT.pack(1) + _INT.pack(values[0])
    base = min(values[:-1])
    width = max(_bytes_needed(v - base) for v in values[:-1])
    body = b"".join((v - base).to_bytes(4, "big")[4 - width :] for v in values[:-1])
    return _INT.pack(count) + _INT.pack(base) + bytes([width]) + body + _INT.pack(values[-1])


def _bytes_needed(v: int) -> int:
    return 1 if v <= 0xFF else 2 if v <= 0xFFFF else 3 if v <= 0xFFFFFF else 4


def decode_sizes(data: bytes) -> list[int]:
    """``ChunkSizesBinaryCodec.decode``, with every length checked before it is used."""
    return list(iter_sizes(data))


def iter_sizes(data: bytes) -> Iterator[int]:
    """The values of :func:`decode_sizes` one by one (a 10 MiB list is 10^7 values: never a list of
    Python ints); the lengths are checked before the first value is given."""
    if len(data) < 4:
        raise ManifestError(f"transformedChunks: {len(data)} bytes, expected at least a 4-byte count")
    (count,) = _INT.unpack_from(data, 0)
    if count < 0:
        raise ManifestError(f"transformedChunks: negative count {count}")
    if count == 0:
        return iter(())
    if count == 1:
        if len(data) < 8:
            raise ManifestError("transformedChunks: count 1 but no value")
        return iter((_INT.unpack_from(data, 4)[0],))
    if len(data) < 9:
        raise ManifestError(f"transformedChunks: {len(data)} bytes, too short for {count} values")
    base, width = _INT.unpack_from(data, 4)[0], data[8]
    if not 1 <= width <= 4:
        raise ManifestError(f"transformedChunks: bytesPerValue {width}, expected 1 to 4")
    need = 9 + (count - 1) * width + 4
    if len(data) < need:
        raise ManifestError(f"transformedChunks: {len(data)} bytes, expected {need} for {count} values")

    def values() -> Iterator[int]:
        for i in range(count - 1):
            yield int.from_bytes(data[9 + i * width : 9 + (i + 1) * width], "big") + base
        yield _INT.unpack_from(data, need - 4)[0]

    return values()


def _int(obj: dict[str, Any], name: str, where: str, minimum: int = 0) -> int:
    value = obj.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= INT32_MAX:
        raise ManifestError(f"{where}.{name}: expected an int from {minimum}, found {value!r}")
    return value


def _b64(text: Any, where: str) -> bytes:
    if not isinstance(text, str):
        raise ManifestError(f"{where}: expected a base64 string, found {text!r}")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ManifestError(f"{where}: not base64") from None


def _chunk_index(obj: Any) -> ChunkIndex:
    if not isinstance(obj, dict):
        raise ManifestError("chunkIndex: missing or not an object")
    kind = obj.get("type")
    chunk_size = _int(obj, "originalChunkSize", "chunkIndex", 1)
    if chunk_size > MAX_CHUNK_SIZE:
        raise ManifestError(
            f"chunkIndex.originalChunkSize: {chunk_size}, larger than chunk.size allows ({MAX_CHUNK_SIZE})"
        )
    file_size = _int(obj, "originalFileSize", "chunkIndex")
    count = -(-file_size // chunk_size)
    if kind == "fixed":
        fixed = (_int(obj, "transformedChunkSize", "chunkIndex"), _int(obj, "finalTransformedChunkSize", "chunkIndex"))
        return ChunkIndex(kind, chunk_size, file_size, count, fixed, None)
    if kind != "variable":
        raise ManifestError(f"chunkIndex.type: expected 'fixed' or 'variable', found {kind!r}")
    packed = _b64(obj.get("transformedChunks"), "chunkIndex.transformedChunks")
    from kseg.format.compression import decompress

    try:
        raw = bytes(decompress(4, packed, 2, MAX_SIZE_LIST))
    except CorruptRecordError as exc:
        raise ManifestError(f"chunkIndex.transformedChunks: {exc.message}") from None
    (listed,) = _INT.unpack_from(raw, 0) if len(raw) >= 4 else (None,)
    if listed is not None and listed != count:  # before a value is decoded
        raise ManifestError(
            f"chunkIndex.transformedChunks: {listed} chunk sizes, but originalFileSize {file_size} "
            f"in chunks of {chunk_size} is {count} chunks"
        )
    positions = array("q", [0])
    positions.extend(accumulate(_non_negative(iter_sizes(raw))))
    return ChunkIndex(kind, chunk_size, file_size, count, None, positions)


def _non_negative(sizes: Iterator[int]) -> Iterator[int]:
    for size in sizes:
        if size < 0:
            raise ManifestError("chunkIndex.transformedChunks: a negative chunk size")
        yield size


def _segment_indexes(obj: Any) -> dict[str, tuple[int, int] | None] | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise ManifestError("segmentIndexes: not an object")
    out: dict[str, tuple[int, int] | None] = {}
    for name in INDEX_NAMES:
        entry = obj.get(name)
        if entry is None and name == "transaction":
            out[name] = None
            continue
        if not isinstance(entry, dict):
            raise ManifestError(f"segmentIndexes.{name}: missing or not an object")
        out[name] = (_int(entry, "position", f"segmentIndexes.{name}"), _int(entry, "size", f"segmentIndexes.{name}"))
    spans = sorted((span[0], span[0] + span[1], name) for name, span in out.items() if span is not None and span[1])
    for (_, end, before), (start, stop, name) in zip(spans, spans[1:], strict=False):
        if start < end:  # SegmentIndexesV1Builder.add: each index follows the one before
            raise ManifestError(
                f"segmentIndexes.{name} (bytes {start} to {stop}) overlaps segmentIndexes.{before} (to byte {end})"
            )
    return out


def _encryption(obj: Any) -> Encryption | None:
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise ManifestError("encryption: not an object")
    key = obj.get("dataKey")
    if not isinstance(key, str) or key.count(":") != 1:  # EncryptedDataKey.parse: exactly one colon
        raise ManifestError(f"encryption.dataKey: expected '<keyPairId>:<base64>', found {key!r}")
    pair, wrapped = key.split(":")
    if not pair.strip():
        raise ManifestError("encryption.dataKey: a blank key pair id")
    return Encryption(pair, _b64(wrapped, "encryption.dataKey"), _b64(obj.get("aad"), "encryption.aad"))


def parse_manifest(data: bytes) -> Manifest:
    """A ``SegmentManifestV1`` from its JSON bytes (:class:`ManifestError` naming the field at fault)."""
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ManifestError(f"not JSON: {exc}") from None
    except RecursionError:  # json's decoder recurses once per nested array or object
        raise ManifestError("not JSON: nested too deep") from None
    if not isinstance(obj, dict):
        raise ManifestError("not a JSON object")
    if obj.get("version") != "1":
        raise ManifestError(f'version: expected "1" (SegmentManifestV1), found {obj.get("version")!r}')
    if not isinstance(obj.get("compression"), bool):
        raise ManifestError(f"compression: expected true or false, found {obj.get('compression')!r}")
    metadata = obj.get("remoteLogSegmentMetadata")
    encryption = _encryption(obj.get("encryption"))
    chunk_index = _chunk_index(obj.get("chunkIndex"))
    if not obj["compression"] and encryption is None:
        _check_untransformed(chunk_index)
    return Manifest(
        chunk_index,
        obj["compression"],
        encryption,
        _segment_indexes(obj.get("segmentIndexes")),
        metadata if isinstance(metadata, dict) else None,
    )


def _check_untransformed(index: ChunkIndex) -> None:
    """Without compression or encryption every chunk is stored as it is (``TransformFinisher``: a fixed
    index whose transformed chunk size is the original one): the object is the segment byte for byte, and
    is read as such, so transformed sizes that differ are a manifest that contradicts itself."""
    for i in sorted({0, index.count - 2, index.count - 1} if index.kind == "fixed" else range(index.count)):
        if not 0 <= i < index.count:  # an empty segment has no chunk
            continue
        c = index.chunk(i)
        if c.transformed_size != c.original_size:
            raise ManifestError(
                f"chunkIndex: chunk {i} is {c.original_size} bytes and neither compressed nor encrypted, "
                f"but its transformed size is {c.transformed_size}"
            )
