"""A deliberately small, independent parser of Kafka batches, for the writer's tests.

It shares no code with ``kseg`` (neither the reader nor the writer), so a
round trip through it cannot hide a symmetric bug.  It turns corpus batches
back into the arguments that :mod:`kseg.testing.writer` takes.

v2 batch: baseOffset q | length i | leaderEpoch i | magic b | crc I | attributes h |
lastOffsetDelta i | baseTimestamp q | maxTimestamp q | producerId q | epoch h |
baseSequence i | count i | records.
Legacy entry: offset q | size i | crc I | magic b | attributes b | [timestamp q] |
key (i len) | value (i len).
"""

from __future__ import annotations

import gzip
import struct
from dataclasses import dataclass, field

V2_HEADER = struct.Struct(">qiibIhiqqqhii")
CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


def walk(data: bytes) -> list[bytes]:
    """Raw batches/entries of a log, by their length fields."""
    out, pos = [], 0
    while len(data) - pos >= 17:
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if end > len(data):
            break
        out.append(data[pos:end])
        pos = end
    return out


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    raw = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7


def _lz4_frame_decode(data: bytes) -> bytes:
    """Decode Kafka's LZ4 frame by hand (blocks only; the header checksum is ignored)."""
    import lz4.block

    assert data[:4] == b"\x04\x22\x4d\x18"
    flg = data[4]
    pos = 7 + (8 if flg & 0x08 else 0)
    out = bytearray()
    while True:
        (size,) = struct.unpack_from("<I", data, pos)
        pos += 4
        if size == 0:
            return bytes(out)
        n = size & 0x7FFFFFFF
        block = data[pos : pos + n]
        pos += n + (4 if flg & 0x10 else 0)
        out += block if size & 0x80000000 else lz4.block.decompress(block, uncompressed_size=64 * 1024)


def _xerial_decode(data: bytes) -> bytes:
    import snappy

    assert data[:8] == b"\x82SNAPPY\x00"
    pos, out = 16, bytearray()
    while pos < len(data):
        (n,) = struct.unpack_from(">i", data, pos)
        out += snappy.uncompress(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return bytes(out)


def decompress(codec: int, data: bytes) -> bytes:
    if codec == 0:
        return data
    if codec == 1:
        return gzip.decompress(data)
    if codec == 2:
        return _xerial_decode(data)
    if codec == 3:
        return _lz4_frame_decode(data)
    if codec == 4:
        import zstandard

        return zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True).read()
    raise ValueError(codec)


@dataclass
class V2Record:
    offset_delta: int
    timestamp_delta: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[bytes, bytes | None]] = field(default_factory=list)


@dataclass
class V2Batch:
    base_offset: int
    leader_epoch: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    count: int
    payload: bytes
    records: list[V2Record]

    @property
    def codec(self) -> str:
        return CODECS[self.attributes & 7]


def parse_v2(batch: bytes) -> V2Batch:
    (base, _len, epoch, magic, crc, attrs, lod, bts, mts, pid, pe, bs, count) = V2_HEADER.unpack_from(batch, 0)
    assert magic == 2
    payload = batch[61:]
    raw = decompress(attrs & 7, payload)
    records, pos = [], 0
    for _ in range(count):
        length, pos = varint(raw, pos)
        end = pos + length
        pos += 1
        tsd, pos = varint(raw, pos)
        od, pos = varint(raw, pos)
        kl, pos = varint(raw, pos)
        key = None if kl < 0 else raw[pos : pos + kl]
        pos += max(kl, 0)
        vl, pos = varint(raw, pos)
        value = None if vl < 0 else raw[pos : pos + vl]
        pos += max(vl, 0)
        hc, pos = varint(raw, pos)
        headers = []
        for _h in range(hc):
            hkl, pos = varint(raw, pos)
            hk = raw[pos : pos + hkl]
            pos += hkl
            hvl, pos = varint(raw, pos)
            hv = None if hvl < 0 else raw[pos : pos + hvl]
            pos += max(hvl, 0)
            headers.append((hk, hv))
        assert pos == end
        records.append(V2Record(od, tsd, key, value, headers))
    assert pos == len(raw)
    return V2Batch(base, epoch, crc, attrs, lod, bts, mts, pid, pe, bs, count, payload, records)


@dataclass
class LegacyEntry:
    offset: int
    magic: int
    crc: int
    attributes: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None

    @property
    def codec(self) -> str:
        return CODECS[self.attributes & 7]


def parse_legacy(entry: bytes) -> LegacyEntry:
    offset, size, crc, magic, attrs = struct.unpack_from(">qiIbb", entry, 0)
    assert size == len(entry) - 12
    pos = 18
    ts = None
    if magic == 1:
        (ts,) = struct.unpack_from(">q", entry, pos)
        pos += 8
    (kl,) = struct.unpack_from(">i", entry, pos)
    pos += 4
    key = None if kl < 0 else entry[pos : pos + kl]
    pos += max(kl, 0)
    (vl,) = struct.unpack_from(">i", entry, pos)
    pos += 4
    value = None if vl < 0 else entry[pos : pos + vl]
    return LegacyEntry(offset, magic, crc, attrs & 0xFF, ts, key, value)


def legacy_inner(entry: bytes) -> tuple[LegacyEntry, bytes, list[LegacyEntry]]:
    """A compressed wrapper, its decompressed inner message set, and the inner entries."""
    wrapper = parse_legacy(entry)
    inner = decompress(wrapper.attributes & 7, wrapper.value)
    return wrapper, inner, [parse_legacy(e) for e in walk(inner)]
