"""Write a local segment the way Aiven's tiered-storage plugin copies it to an object store (test data).

The facts, from github:Aiven-Open/tiered-storage-for-apache-kafka (``core/src/main/java/io/aiven/kafka/
tieredstorage/``, commit 8fb15816), each followed here:

* keys: ``ObjectKeyFactory.key``/``mainPath`` (given by the caller: ``kseg.storage.remote_keys.object_key``);
* the ``.log``: ``KafkaRemoteStorageManager.transformation`` (lines 275-293): chunks of ``chunk.size``
  (``BaseTransformChunkEnumeration.fillChunkIfNeeded``: ``readNBytes(originalChunkSize)``), then
  ``CompressionChunkEnumeration`` (one zstd frame per chunk, content size set, lines 50-62), then
  ``EncryptionChunkEnumeration`` (lines 66-80: ``IV || doFinal(chunk)``, the GCM tag at the end of
  ``doFinal``'s output; ``AesEncryptionProvider.encryptionCipher``: AES/GCM/NoPadding, 128-bit tag, a
  fresh random IV per cipher, ``updateAAD(aad)``);
* the chunk index: ``TransformFinisher.chunkIndexBuilder`` (lines 75-91): ``variable`` when a transform
  makes sizes unknown in advance (compression), else ``fixed`` with the transformed size of a full chunk
  and of the final one; ``TransformedChunksSerializer`` (zstd of ``ChunkSizesBinaryCodec.encode``,
  base64);
* the indexes: ``KafkaRemoteStorageManager.uploadIndexes``/``transformIndex`` (lines 296-396): offset,
  time, producer snapshot, leader epoch, transaction (if any), each encrypted as one chunk when the segment
  is, never compressed, concatenated into ``.indexes``; ``SegmentIndexesV1Builder.add`` positions them;
  before commit 107d165 (October 2023) each index was its own object (``RemoteStorageManager.uploadIndexFile``)
  and the manifest had no ``segmentIndexes``;
* the manifest: ``KafkaRemoteStorageManager.uploadManifest`` (lines 413-446) with Jackson's names
  (``SegmentManifest``: ``version`` "1"; ``SegmentManifestV1``; ``ChunkIndex``'s ``type``;
  ``KafkaTypeSerdeModule`` for ``remoteLogSegmentMetadata``); ``encryption``: ``dataKey`` =
  ``EncryptedDataKey.serialize`` (``<keyPairId>:<base64>``) and ``aad`` (base64);
* the data key: ``AesEncryptionProvider.createDataKeyAndAAD`` (a 256-bit key, a 32-byte AAD), wrapped by
  ``RsaEncryptionProvider`` (``RSA/NONE/OAEPWithSHA3-512AndMGF1Padding``, BouncyCastle: SHA3-512 for
  OAEP and MGF1).
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kseg.format import oaep
from kseg.format.rsm_manifest import encode_sizes

__all__ = ["KeyPair", "new_key_pair", "write_aiven_segment", "transform_chunks"]


@dataclass(frozen=True)
class KeyPair:
    """An RSA key pair of the plugin's keyring: its id, and both halves as PEM (PKCS#8 / X.509)."""

    key_pair_id: str
    private_pem: bytes
    public_pem: bytes


def new_key_pair(key_pair_id: str, bits: int = 2048) -> KeyPair:
    """A fresh RSA key pair, its files in the form ``RsaKeyReader`` reads."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    return KeyPair(
        key_pair_id,
        private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
        private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
    )


def _wrap(pair: KeyPair, data_key: bytes) -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    public = serialization.load_pem_public_key(pair.public_pem)
    assert isinstance(public, rsa.RSAPublicKey)
    numbers = public.public_numbers()
    wrapped = oaep.encrypt(data_key, numbers.n, numbers.e)
    return f"{pair.key_pair_id}:{base64.b64encode(wrapped).decode()}"


def _encrypt(data: bytes, data_key: bytes, aad: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    iv = os.urandom(12)
    return iv + AESGCM(data_key).encrypt(iv, data, aad)


def transform_chunks(
    data: bytes, chunk_size: int, compression: bool, key: tuple[bytes, bytes] | None
) -> tuple[list[bytes], dict[str, object]]:
    """The transformed chunks of ``data`` and the manifest's ``chunkIndex`` (compress, then encrypt)."""
    import zstandard

    chunks = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
    out = []
    for chunk in chunks:
        if compression:
            chunk = zstandard.ZstdCompressor(write_content_size=True).compress(chunk)
        if key is not None:
            chunk = _encrypt(chunk, *key)
        out.append(chunk)
    index: dict[str, object] = {"originalChunkSize": chunk_size, "originalFileSize": len(data)}
    if compression:
        packed = zstandard.ZstdCompressor(write_content_size=True).compress(encode_sizes([len(c) for c in out]))
        index = {"type": "variable", **index, "transformedChunks": base64.b64encode(packed).decode()}
    else:
        overhead = 28 if key is not None else 0
        final = len(out[-1]) if out else 0
        index = {"type": "fixed", **index, "transformedChunkSize": chunk_size + overhead}
        index["finalTransformedChunkSize"] = final
    return out, index


def write_aiven_segment(
    root: Path,
    log: Path,
    key_of: Callable[[str], str],
    *,
    topic: str,
    topic_id: str,
    partition: int,
    segment_id: str,
    end_offset: int,
    chunk_size: int = 4096,
    compression: bool = False,
    key_pair: KeyPair | None = None,
    per_index_objects: bool = False,
    leader_epochs: bytes = b"0\n1\n0 0\n",
    producer_snapshot: Path | None = None,
) -> list[str]:
    """Copy the segment ``log`` (with its ``.index``, ``.timeindex`` and ``.txnindex`` when present, and
    ``producer_snapshot``) under ``root`` as Aiven's plugin uploads it; returns the keys written.
    ``key_of(suffix)`` is the object's key (``kseg.storage.remote_keys.object_key`` of this segment: the
    tool's rule, which this package may not import)."""
    base = int(log.stem)
    data = log.read_bytes()
    key: tuple[bytes, bytes] | None = None
    encryption = None
    if key_pair is not None:
        key = (os.urandom(32), os.urandom(32))
        encryption = {"dataKey": _wrap(key_pair, key[0]), "aad": base64.b64encode(key[1]).decode()}
    chunks, chunk_index = transform_chunks(data, chunk_size, compression, key)

    written: dict[str, bytes] = {key_of("log"): b"".join(chunks)}
    indexes = [
        ("offset", "index", log.with_suffix(".index")),
        ("timestamp", "timeindex", log.with_suffix(".timeindex")),
        ("producerSnapshot", "snapshot", producer_snapshot),
        ("leaderEpoch", "leader-epoch-checkpoint", None),
        ("transaction", "txnindex", log.with_suffix(".txnindex")),
    ]
    segment_indexes: dict[str, object] = {}
    position = 0
    blob = bytearray()
    for field, suffix, path in indexes:
        if field == "transaction" and not path.exists():  # type: ignore[union-attr]
            segment_indexes[field] = None
            continue
        raw = leader_epochs if field == "leaderEpoch" else (path.read_bytes() if path and path.exists() else b"")
        stored = _encrypt(raw, *key) if key is not None and raw else raw
        if per_index_objects:
            written[key_of(suffix)] = stored
        segment_indexes[field] = {"position": position, "size": len(stored)}
        position += len(stored)
        blob += stored
    manifest: dict[str, object] = {"version": "1", "chunkIndex": chunk_index}
    if not per_index_objects:
        written[key_of("indexes")] = bytes(blob)
        manifest["segmentIndexes"] = segment_indexes
    manifest["compression"] = compression
    if encryption is not None:
        manifest["encryption"] = encryption
    manifest["remoteLogSegmentMetadata"] = {
        "remoteLogSegmentId": {
            "topicIdPartition": {"topicId": topic_id, "topicPartition": {"topic": topic, "partition": partition}},
            "id": segment_id,
        },
        "startOffset": base,
        "endOffset": end_offset,
        "maxTimestampMs": -1,
        "brokerId": 0,
        "eventTimestampMs": 0,
        "segmentLeaderEpochs": {"0": base},
    }
    written[key_of("rsm-manifest")] = json.dumps(manifest, separators=(",", ":")).encode()
    for k, blob_ in written.items():
        target = root / k
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob_)
    return sorted(written)
