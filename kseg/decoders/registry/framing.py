"""Where a payload says which schema wrote it (the serializers' wire framings).

* Confluent, in the payload: magic byte 0, the schema id as a 4-byte big-endian int, then the
  serialized data (``prefix_schema_id_serializer``); magic byte 1 and a 16-byte GUID instead.
* Confluent, in a header: ``__key_schema_id`` / ``__value_schema_id`` holds the same magic and id
  or GUID (confluent-kafka's ``header_schema_id_serializer`` writes magic 1 + GUID); the payload is
  then the serialized data alone (``dual_schema_id_deserializer`` reads the header first).
* Protobuf adds the message-index path after the id (in the payload or the header): a zigzag
  varint count, then that many zigzag varint indexes; a count of 0 means ``[0]`` (the first
  message of the file).
* Apicurio (``--framing apicurio...``; Apicurio/apicurio-registry, ``serdes/serde-common``):
  ``AbstractKafkaSerializer.serialize`` writes the ids in headers when they are enabled (2.x's
  default, ``SerdeConfig.ENABLE_HEADERS_DEFAULT``) -- ``DefaultHeadersHandler.writeHeaders``: the
  8-byte big-endian long of ``apicurio.{key,value}.globalId`` (``SerdeHeaders``), or of
  ``apicurio.{key,value}.contentId`` with ``apicurio.registry.use-id=contentId`` -- and the payload
  is the data alone; else magic byte 0, the id (``DefaultIdHandler``: 8 bytes, ``putLong``;
  ``Legacy4ByteIdHandler`` / 3.x's ``Default4ByteIdHandler``: 4 bytes, ``putInt``), then the data.
  ``AbstractKafkaDeserializer`` reads the headers first (``lastHeader``), the payload's magic byte
  when they name no id.  Nothing in the bytes tells 8 id bytes from 4, nor a globalId from a
  contentId: the framing is chosen by the option (:data:`FRAMINGS`), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

HEADERS = {"key": b"__key_schema_id", "value": b"__value_schema_id"}
#: --framing NAME -> (id bytes after magic 0, the Apicurio id the bytes and headers carry; None: Confluent's)
FRAMINGS: dict[str, tuple[int, str | None]] = {
    "confluent": (4, None),
    "apicurio": (8, "globalId"),
    "apicurio-content": (8, "contentId"),
    "apicurio4": (4, "globalId"),
    "apicurio4-content": (4, "contentId"),
}
CONFLUENT = "confluent"
APICURIO_KINDS = ("globalId", "contentId")
MAX_INDEXES = 100000  # the serializers' own bound on the index array


class FramingError(ValueError):
    """The bytes carry no framing kseg knows (the reason is the message)."""


@dataclass(frozen=True)
class Framed:
    schema_id: int | None  # magic 0
    guid: bytes | None  # magic 1
    rest: int  # where the message-index path (Protobuf) or the data starts, in the framed bytes
    in_header: bool
    framing: str = CONFLUENT  # the --framing the id was read by

    def where(self) -> str:
        if self.guid is not None:
            return f"GUID {_uuid(self.guid)}"
        size, kind = FRAMINGS[self.framing]
        if kind is None:
            return f"id {self.schema_id}"
        carrier = "header" if self.in_header else f"magic 0 + {size}-byte id"
        return f"Apicurio {kind} {self.schema_id} ({carrier}, --framing {self.framing})"


def _uuid(b: bytes) -> str:
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def schema_ref(data: bytes, headers, role: str, framing: str = CONFLUENT) -> tuple[Framed, bytes]:
    """(the framing, the bytes it is in): the role's header when the record has one, else the payload;
    ``framing``: a name of :data:`FRAMINGS`."""
    if framing != CONFLUENT:
        return _apicurio(data, headers, role, framing), data
    name = HEADERS[role]
    for key, value in headers or ():
        if bytes(key) == name:
            if value is None:
                raise FramingError(f"header {name.decode()} is null")
            return _parse(bytes(value), True), bytes(value)
    try:
        return _parse(data, False), data
    except FramingError as exc:
        prefix = f"apicurio.{role}.".encode()
        theirs = [bytes(k).decode("latin-1") for k, _ in headers or () if bytes(k).startswith(prefix)]
        if theirs:
            raise FramingError(f"{exc}; the record carries Apicurio's header {theirs[0]}: --framing apicurio") from None
        raise


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


def _apicurio(data: bytes, headers, role: str, framing: str) -> Framed:
    """Apicurio's framing, as ``AbstractKafkaDeserializer.deserialize`` reads it: the id header of the
    framing's kind (the last one, ``Headers.lastHeader``; an 8-byte big-endian long), else magic byte 0
    and the id in the payload (``IdHandler.readId``: 8 or 4 bytes, signed).  A record whose headers name
    its schema otherwise (the other id kind, an artifact) is one the deserializer reads by them: a reason."""
    size, kind = FRAMINGS[framing]
    assert kind is not None
    wanted = f"apicurio.{role}.{kind}".encode()
    other = f"apicurio.{role}.{APICURIO_KINDS[kind == 'globalId']}".encode()
    found = None
    seen_other = seen_artifact = False
    for key, value in headers or ():
        name = bytes(key)
        if name == wanted:
            found = value
        seen_other |= name == other
        seen_artifact |= name == f"apicurio.{role}.artifactId".encode()
    if found is not None:
        value = bytes(found)
        if len(value) < 8:
            raise FramingError(f"header {wanted.decode()} of {len(value)} bytes: an 8-byte {kind} expected")
        return Framed(int.from_bytes(value[:8], "big", signed=True), None, 0, True, framing)
    if seen_other:
        theirs = other.decode().rpartition(".")[2]
        raise FramingError(f"the record carries header {other.decode()}, a {theirs}; --framing {framing} reads {kind}s")
    if seen_artifact:
        raise FramingError(f"the record names its schema by artifact (apicurio.{role}.artifactId), not by id")
    if data[:1] == b"\0":
        if len(data) < 1 + size:
            raise FramingError(
                f"payload of {len(data)} bytes: magic 0 needs a {size}-byte {kind} (--framing {framing})"
            )
        return Framed(int.from_bytes(data[1 : 1 + size], "big", signed=True), None, 1 + size, False, framing)
    first = f"magic byte {data[0]}" if data else "an empty payload"
    raise FramingError(f"no header {wanted.decode()} and {first} (expected 0: --framing {framing})")


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
