"""Where a payload says which schema wrote it (the serializers' wire framings).

* Confluent, in the payload: magic byte 0, the schema id as a 4-byte big-endian int, then the
  serialized data (``prefix_schema_id_serializer``); magic byte 1 and a 16-byte GUID instead.
* Confluent, in a header: ``__key_schema_id`` / ``__value_schema_id`` holds the same magic and id
  or GUID (confluent-kafka's ``header_schema_id_serializer`` writes magic 1 + GUID); the payload is
  then the serialized data alone (``dual_schema_id_deserializer`` reads the header first).
* Protobuf adds the message-index path after the id (in the payload or the header): a zigzag
  varint count, then that many zigzag varint indexes; a count of 0 means ``[0]`` (the first
  message of the file).
"""

from __future__ import annotations

from dataclasses import dataclass

HEADERS = {"key": b"__key_schema_id", "value": b"__value_schema_id"}
MAX_INDEXES = 100000  # the serializers' own bound on the index array


class FramingError(ValueError):
    """The bytes carry no framing kseg knows (the reason is the message)."""


@dataclass(frozen=True)
class Framed:
    schema_id: int | None  # magic 0
    guid: bytes | None  # magic 1
    rest: int  # where the message-index path (Protobuf) or the data starts, in the framed bytes
    in_header: bool

    def where(self) -> str:
        return f"id {self.schema_id}" if self.guid is None else f"GUID {_uuid(self.guid)}"


def _uuid(b: bytes) -> str:
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def schema_ref(data: bytes, headers, role: str) -> tuple[Framed, bytes]:
    """(the framing, the bytes it is in): the role's header when the record has one, else the payload."""
    name = HEADERS[role]
    for key, value in headers or ():
        if bytes(key) == name:
            if value is None:
                raise FramingError(f"header {name.decode()} is null")
            return _parse(bytes(value), True), bytes(value)
    return _parse(data, False), data


def _parse(b: bytes, in_header: bool) -> Framed:
    where = "header" if in_header else "payload"
    if not b:
        raise FramingError(f"empty {where}: no schema id")
    magic = b[0]
    if magic == 0:
        if len(b) < 5:
            raise FramingError(f"{where} of {len(b)} bytes: magic 0 needs a 4-byte schema id")
        return Framed(int.from_bytes(b[1:5], "big"), None, 5, in_header)
    if magic == 1:
        if len(b) < 17:
            raise FramingError(f"{where} of {len(b)} bytes: magic 1 needs a 16-byte GUID")
        return Framed(None, bytes(b[1:17]), 17, in_header)
    raise FramingError(f"unknown magic byte {magic} in the {where} (expected 0 or 1: no registry framing)")


def zigzag_varint(b: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(b):
            raise FramingError("message-index path runs past the end")
        byte = b[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
        if shift > 63:
            raise FramingError("message-index varint longer than 10 bytes")
    return (value >> 1) ^ -(value & 1), pos


def message_indexes(b: bytes, pos: int) -> tuple[list[int], int]:
    """Protobuf's message-index path at ``pos``: (the indexes, where the data starts)."""
    count, pos = zigzag_varint(b, pos)
    if count < 0 or count > MAX_INDEXES:
        raise FramingError(f"message-index count {count} out of range")
    if count == 0:
        return [0], pos
    out = []
    for _ in range(count):
        i, pos = zigzag_varint(b, pos)
        if i < 0:
            raise FramingError(f"negative message index {i}")
        out.append(i)
    return out, pos
