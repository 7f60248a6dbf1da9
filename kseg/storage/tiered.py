"""Segments Aiven's tiered-storage plugin copied to an object store, read as if they were local files.

A segment's ``.log`` object (``kseg.storage.remote_keys``) is the segment cut into chunks of
``originalChunkSize`` bytes, each zstd-compressed (one frame, ``CompressionChunkEnumeration``) when the
manifest says ``compression``, then AES-256-GCM encrypted when it has ``encryption``
(``EncryptionChunkEnumeration``: ``IV(12) || ciphertext || tag(16)``, the manifest's AAD,
``AesEncryptionProvider``).  The AES key is wrapped with the public key of the key pair named in
``dataKey``: RSA with OAEP, SHA3-512 as the hash and in MGF1 (``RsaEncryptionProvider``:
``RSA/NONE/OAEPWithSHA3-512AndMGF1Padding`` of BouncyCastle, whose OAEP takes one digest for both),
the private key a PEM file (``RsaKeyReader``: PKCS#8).  The ``.indexes`` object concatenates the offset
index, time index, producer snapshot, leader-epoch checkpoint and transaction index, each encrypted
alone (one chunk) when the segment is, never compressed (``KafkaRemoteStorageManager.uploadIndexes``);
before October 2023 each was an object of its own (``<stem>.index`` ...).

This module decodes; the store of Aiven's layout (:class:`kseg.storage.stores.discover.AivenStore`, a
store over the store holding the objects) decides what to open: for a segment file that has a manifest
it opens a :class:`TieredLogFile` (the ``.log``: the original bytes, a chunk fetched by one ranged read
when a read reaches it, one chunk held at a time) or an :class:`IndexBytes` (an index, cut from
``.indexes`` or its own object and decrypted, :func:`read_index`); everything downstream is the reader
of local segments.  Faults are :class:`ChunkError` naming the object key and the chunk number.  The
private keys come from ``--rsm-key KEYPAIRID=FILE``, in the read context the store was made with
(:func:`private_key`, :func:`unwrap`); ``cryptography`` is imported only when an encrypted segment is
read.
"""

from __future__ import annotations

import io
import os
from types import MappingProxyType
from typing import Any, Callable

from kseg.errors import ChunkError, InputError, ManifestError
from kseg.format import oaep
from kseg.format.rsm_manifest import IV_SIZE, TAG_SIZE, Manifest, parse_manifest
from kseg.storage.read import AuxFile, Kind
from kseg.storage.remote_keys import RemoteObjectKey

#: The largest manifest read: the plugin's largest is a size list of 10 MiB (``MAX_SIZE_LIST``), zstd-compressed
#: and in base64 (under 14 MiB however little it compresses), and a few dozen other values.
MAX_MANIFEST = 16 << 20
MANIFEST = Kind(".rsm-manifest", MAX_MANIFEST, "the plugin's largest, a 10 MiB chunk size list, is under 14 MiB")
#: JSON values of a manifest: ``json`` builds an object for each, so their count is bounded before it runs (by
#: the commas between them: containers nest no deeper than ``json``'s recursion, a few thousand).
MAX_MANIFEST_VALUES = 1 << 16
MANIFEST_VALUES = Kind(".rsm-manifest", MAX_MANIFEST, "a manifest the plugin writes holds a few dozen values")
#: An index of a tiered segment is read whole and decrypted (two copies held): the offset and time indexes of a
#: segment are at most ``segment.index.bytes`` (10 MiB by default), a producer snapshot 46 bytes a producer.
INDEX = Kind("tiered segment index", 32 << 20, "each is read whole; Kafka's segment.index.bytes is 10 MiB")
#: ``AesEncryptionProvider``: the data key is an AES-256 key.
DATA_KEY_SIZE = 32
#: The indexes a reader may ask for, by file suffix -> ``segmentIndexes`` name.
INDEX_OF_SUFFIX = MappingProxyType(
    {
        "index": "offset",
        "timeindex": "timestamp",
        "snapshot": "producerSnapshot",
        "txnindex": "transaction",
        "leader-epoch-checkpoint": "leaderEpoch",
    }
)

#: Opens an object of the store below for reading (the file API's ``seek``/``read``/``size``).
Opener = Callable[[str], Any]
#: The data key of a manifest (unwrapped by the store, which holds the keys): ``(manifest, where)``.
DataKey = Callable[[Manifest, str], bytes]


def size_of(f: Any) -> int:
    """The size of an open object or file (the store's listing, or ``fstat``)."""
    return int(f.size) if hasattr(f, "size") else os.fstat(f.fileno()).st_size


def read_manifest(opener: Opener, path: str) -> Manifest:
    """The manifest object at ``path`` (``<stem>.rsm-manifest``), read and parsed, not kept: an
    :class:`InputError` when it cannot be read, a ``ManifestError`` naming it when it is no manifest."""
    try:
        return parse_manifest(_manifest_bytes(opener, path))
    except ManifestError as exc:
        raise exc.at(path) from None


def _manifest_bytes(opener: Opener, path: str) -> bytes:
    """A manifest's bytes through the bounded reader, and its JSON values counted before ``json`` runs."""
    f = opener(path)
    data = AuxFile(lambda: f, path, size_of(f), MANIFEST).data()
    values = data.count(b",") + 1  # (base64 and ids hold no comma)
    if values > MAX_MANIFEST_VALUES:
        raise MANIFEST_VALUES.refusal(path, f"{values} JSON values or more", f"{MAX_MANIFEST_VALUES} JSON values")
    return data


def private_key(key_file: str, pem: bytes) -> tuple[int, tuple[int, int, int, int, int]]:
    """The modulus and CRT numbers of a PEM RSA private key (``RsaKeyReader``: PKCS#8; PKCS#1 read too)."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
    except ImportError:
        raise InputError("reading an encrypted segment needs cryptography: pip install 'kseg[tiered]'") from None
    try:
        # the key is checked by what it unwraps (OAEP's hash): the slow consistency check is skipped
        key = serialization.load_pem_private_key(pem, password=None, unsafe_skip_rsa_key_validation=True)
    except (ValueError, TypeError) as exc:
        raise InputError(f"not a PEM private key: {exc}", path=key_file) from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise InputError("not an RSA private key", path=key_file)
    numbers = key.private_numbers()
    crt = (numbers.p, numbers.q, numbers.dmp1, numbers.dmq1, numbers.iqmp)
    return numbers.public_numbers.n, crt


def unwrap(manifest: Manifest, private: tuple[int, tuple[int, int, int, int, int]] | None, where: str) -> bytes:
    """The manifest's AES data key, unwrapped with the private key of its key pair (None: no ``--rsm-key``
    names it, an :class:`InputError` saying which to give)."""
    enc = manifest.encryption
    assert enc is not None
    if private is None:
        raise InputError(
            f"encrypted with key pair '{enc.key_pair_id}': give its private key with --rsm-key {enc.key_pair_id}=FILE",
            path=where,
        )
    n, crt = private
    try:
        data_key = oaep.decrypt(enc.wrapped_key, n, crt)
    except oaep.OaepError as exc:
        raise InputError(
            f"the private key of --rsm-key {enc.key_pair_id} does not unwrap the data key: {exc}", path=where
        ) from None
    if len(data_key) != DATA_KEY_SIZE:  # AESGCM refused it with a ValueError: an internal error
        raise InputError(
            f"the private key of --rsm-key {enc.key_pair_id} unwraps a data key of {len(data_key)} bytes, expected "
            f"{DATA_KEY_SIZE} (AES-256): the manifest's dataKey is not one the plugin wrote",
            path=where,
        )
    return data_key


class _Cipher:
    """AES-GCM under one data key (the plugin's ``AesEncryptionProvider``): one cipher for every chunk of an
    object, not one a chunk."""

    def __init__(self, key: bytes) -> None:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._aes, self._invalid = AESGCM(key), InvalidTag

    def decrypt(self, data: bytes, aad: bytes, where: str, chunk: int, at: int | None = None) -> bytes:
        if len(data) < IV_SIZE + TAG_SIZE:
            raise ChunkError(f"chunk {chunk}: {len(data)} bytes, shorter than IV and GCM tag", path=where, position=at)
        try:
            return self._aes.decrypt(data[:IV_SIZE], data[IV_SIZE:], aad)
        except self._invalid:
            raise ChunkError(
                f"chunk {chunk}: GCM tag mismatch (corrupt, or not this data key and AAD)", path=where, position=at
            ) from None


class TieredLogFile:
    """The original bytes of a tiered ``.log`` object, with the subset of the file API the readers use
    (``seek``/``tell``/``readinto``/``read``, ``size``).  A read fetches the chunks it reaches, each by
    one ranged read, and keeps only the last one decoded."""

    def __init__(self, key: RemoteObjectKey, manifest: Manifest, opener: Opener, data_key: DataKey) -> None:
        self.key, self.manifest, self.path = key, manifest, key.key
        index = manifest.chunk_index
        self.size = index.original_file_size
        self.chunk_size = index.original_chunk_size
        self._plain = not manifest.compression and manifest.encryption is None
        self._cipher = _Cipher(data_key(manifest, self.path)) if manifest.encryption is not None else None
        self._unzstd = _Unzstd() if manifest.compression else None
        self._f = opener(self.path)
        self._object_size = size_of(self._f)
        #: where the last chunk starts (an object longer than the chunks is a fault of the last chunk)
        self._last = index.chunk(index.count - 1) if index.count else None
        self._longer = self._object_size > index.transformed_file_size
        self._pos = 0
        self._chunk: tuple[int, bytes] | None = None
        self.chunks_read = 0

    def _raw(self, position: int, n: int, chunk: int, at: int) -> bytes:
        """``n`` bytes of the object at ``position`` (chunk ``chunk``, original byte ``at``)."""
        if position + n > self._object_size:
            raise ChunkError(
                f"chunk {chunk}: the object is {self._object_size} bytes, the manifest says "
                f"{self.manifest.chunk_index.transformed_file_size}: chunk {chunk} (object bytes {position} to "
                f"{position + n}) is cut short",
                path=self.path,
                position=at,
            )
        last = self._last
        if self._longer and last is not None and position + n == self.manifest.chunk_index.transformed_file_size:
            raise ChunkError(
                f"chunk {last.id}: the object is {self._object_size} bytes, the manifest's {last.id + 1} chunks "
                f"end at byte {position + n}: {self._object_size - position - n} bytes after the last chunk",
                path=self.path,
                position=last.original_position,
            )
        self._f.seek(position)
        data = self._f.read(n)
        if len(data) < n:
            raise ChunkError(f"chunk {chunk}: object shrank while being read", path=self.path, position=at)
        return bytes(data)

    def _decoded(self, i: int) -> bytes:
        if self._chunk is not None and self._chunk[0] == i:
            return self._chunk[1]
        c = self.manifest.chunk_index.chunk(i)
        data = self._raw(c.transformed_position, c.transformed_size, i, c.original_position)
        self.chunks_read += 1
        if self._cipher is not None:
            assert self.manifest.encryption is not None
            data = self._cipher.decrypt(data, self.manifest.encryption.aad, self.path, i, c.original_position)
        if self._unzstd is not None:
            data = self._unzstd.frame(data, c.original_size, self.path, i, c.original_position)
        if len(data) != c.original_size:
            raise ChunkError(
                f"chunk {i}: {len(data)} bytes decoded, the manifest says {c.original_size}",
                path=self.path,
                position=c.original_position,
            )
        self._chunk = (i, data)
        return data

    def seek(self, position: int, whence: int = 0) -> int:
        self._pos = position if whence == 0 else (self._pos + position if whence == 1 else self.size + position)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, view: memoryview | bytearray) -> int:
        want = min(len(view), max(0, self.size - self._pos))
        if want <= 0:
            return 0
        if self._plain:
            last = self._last.original_position if self._last is not None else 0
            if self._longer and self._pos < last < self._pos + want:  # the last chunk, at fault, by its own read
                want = last - self._pos
            data = self._raw(self._pos, want, self.manifest.chunk_index.chunk_for(self._pos), self._pos)
            view[:want] = data
            self._pos += want
            return want
        got = 0
        while got < want:
            i = self.manifest.chunk_index.chunk_for(self._pos)
            try:
                chunk = self._decoded(i)
            except ChunkError:
                if got:  # the chunks before it are read; the next read, starting at it, raises
                    return got
                raise
            start = self._pos - i * self.chunk_size
            n = min(want - got, len(chunk) - start)
            view[got : got + n] = chunk[start : start + n]
            got += n
            self._pos += n
        return got

    def read(self, n: int = -1) -> bytes:
        n = self.size - self._pos if n < 0 else min(n, max(0, self.size - self._pos))
        out = bytearray(n)
        got = self.readinto(memoryview(out))
        return bytes(out[:got])

    def close(self) -> None:
        self._f.close()
        self._chunk = None

    def __enter__(self) -> TieredLogFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Unzstd:
    """The zstd frames of an object's chunks, decompressed by one decompressor (each frame its own session):
    making a decompression context cost more than decompressing a small chunk."""

    def __init__(self) -> None:
        import zstandard

        self._dctx, self._error = zstandard.ZstdDecompressor(), zstandard.ZstdError

    def frame(self, data: bytes, size: int, where: str, chunk: int, at: int) -> bytes:
        """One zstd frame decompressed to at most ``size`` bytes (the chunk's original size), read in pieces
        of at most 1 MiB: what is held is what the frame really gave, never ``size`` bytes allocated up front
        (``decompress(max_output_size=size)`` allocates them for a frame without a content size)."""
        out = bytearray()
        try:
            with self._dctx.stream_reader(data) as reader:
                while len(out) <= size:
                    piece = reader.read(min(1 << 20, size + 1 - len(out)))
                    if not piece:
                        break
                    out += piece
        except self._error as exc:
            raise ChunkError(
                f"chunk {chunk}: not a zstd frame of {size} bytes: {exc}", path=where, position=at
            ) from None
        if len(out) > size:
            raise ChunkError(
                f"chunk {chunk}: the zstd frame decompresses past the manifest's {size} bytes", path=where, position=at
            )
        return bytes(out)


class IndexBytes(io.BytesIO):
    """An index of a tiered segment, read whole (as every index is, up to 16 MiB) and decrypted."""

    def __init__(self, data: bytes, path: str) -> None:
        super().__init__(data)
        self.size, self.path = len(data), path


def read_index(key: RemoteObjectKey, manifest: Manifest, opener: Opener, data_key: DataKey) -> IndexBytes:
    """An index of the segment (``key``: its index file's name), cut from its ``.indexes`` object (or its own
    object, before October 2023) and decrypted."""
    name = INDEX_OF_SUFFIX[key.suffix]
    if manifest.segment_indexes is None:  # before October 2023: an object per index
        where = key.key
        f = opener(where)
        data = AuxFile(lambda: f, where, size_of(f), INDEX).data()
        span: tuple[int, int] | None = (0, len(data))
    else:
        where = key.with_suffix("indexes").key
        span = manifest.segment_indexes[name]
        if span is None:
            raise InputError("no such file (the segment has no transaction index)", path=key.key)
        if span[1] == 0:
            return IndexBytes(b"", key.key)
        with opener(where) as f:
            size = size_of(f)
            if span[0] + span[1] > size:  # before a byte is read or allocated
                raise ChunkError(
                    f"{name} index: the object ends at byte {size}, the manifest says {span[0] + span[1]}",
                    path=where,
                    position=span[0],
                )
            if span[1] > INDEX.max_bytes:  # before a byte is read or allocated
                raise INDEX.refusal(
                    where, f"the manifest's {name} index of {span[1]} bytes", f"{INDEX.max_bytes} bytes"
                )
            f.seek(span[0])
            data = f.read(span[1])
        if len(data) < span[1]:
            raise ChunkError(
                f"{name} index: the object ends at byte {span[0] + len(data)}, the manifest says {span[0] + span[1]}",
                path=where,
                position=span[0],
            )
    if manifest.encryption is not None and data:
        data = _Cipher(data_key(manifest, where)).decrypt(bytes(data), manifest.encryption.aad, where, 0)
    return IndexBytes(bytes(data), key.key)
