"""A remote segment's custom metadata as Aiven's RSM writes it (``SegmentCustomMetadataSerde``).

``RemoteStorageManager.copyLogSegmentData`` may return ``CustomMetadata`` bytes that Kafka stores in the
segment's metadata (``customMetadata``).  Aiven's tiered-storage-for-apache-kafka writes a Kafka tagged-fields
section (``Schema(TaggedFieldsSection)``: an unsigned varint count, then per field its tag, size and value)
of ``SegmentCustomMetadataField``: tag 0 ``remote_size`` (``VARLONG``, zig-zag), 1 ``object_prefix`` and 2
``object_key`` (``COMPACT_STRING``: unsigned varint length + 1, UTF-8); empty bytes for no field.  Other
tags are kept by number; another RSM's bytes that do not parse raise ``ValueError``.
"""

from __future__ import annotations

from typing import NamedTuple

_MAX_FIELDS = 1 << 16


class CustomMetadata(NamedTuple):
    """Aiven's fields (None: absent) and the size of the bytes."""

    size: int
    remote_size: int | None = None
    object_prefix: str | None = None
    object_key: str | None = None
    other_tags: tuple[int, ...] = ()


def _uvarint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(data):
            raise ValueError(f"a varint runs past the end at byte {i}")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise ValueError(f"a varint longer than 10 bytes at byte {i}")


def _string(value: bytes) -> str:
    n, i = _uvarint(value, 0)
    if n == 0 or i + n - 1 != len(value):
        raise ValueError(f"a compact string of length {n - 1} in a field of {len(value)} bytes")
    return value[i:].decode("utf-8")


def parse_custom_metadata(data: bytes) -> CustomMetadata:
    """The fields of ``data`` (``SegmentCustomMetadataSerde.deserialize``)."""
    if not data:
        return CustomMetadata(0)
    count, i = _uvarint(data, 0)
    if count > _MAX_FIELDS:
        raise ValueError(f"{count} tagged fields")
    fields: dict[int, bytes] = {}
    for _ in range(count):
        tag, i = _uvarint(data, i)
        size, i = _uvarint(data, i)
        if i + size > len(data):
            raise ValueError(f"tag {tag} of {size} bytes runs past the end ({len(data)} bytes)")
        fields[tag] = data[i : i + size]
        i += size
    if i != len(data):
        raise ValueError(f"{len(data) - i} bytes after the tagged fields")
    remote_size = None
    if 0 in fields:
        z, _ = _uvarint(fields[0], 0)
        remote_size = (z >> 1) ^ -(z & 1)
    prefix = _string(fields[1]) if 1 in fields else None
    key = _string(fields[2]) if 2 in fields else None
    return CustomMetadata(len(data), remote_size, prefix, key, tuple(sorted(t for t in fields if t > 2)))
