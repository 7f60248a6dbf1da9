"""Which message an Apicurio-framed Protobuf payload holds, as Apicurio's deserializers find it.

Facts from Apicurio/apicurio-registry (docs/schemas.md, "Apicurio's framings"):

* ``ProtobufKafkaSerializer`` (2.x, ``serdes/protobuf-serde``): with headers, the message's name goes in
  the header ``apicurio.protobuf.type`` (``apicurio.protobuf.type.key`` for keys,
  ``ProtobufSerdeHeaders``) and the payload is the message alone; without, the payload is the id's
  framing, then a ``Ref`` message (``ref.proto``: ``string name = 1``) written length-delimited
  (``writeDelimitedTo``: a varint length, the message), then the message.  The name is the
  descriptor's simple name (``getDescriptorForType().getName()``).
* ``ProtobufSerializer`` (3.x, ``serdes/generic/serde-common-protobuf``) writes the ``Ref`` in both
  cases (``apicurio.registry.serde.send-type-ref``, default true), and the Kafka serializer adds the
  type header when the id goes in headers.  Its message indexes (``send-indexes``, default false) are
  not read here.
* The deserializers: the type header names the message when there is one (2.x); else
  ``Ref.parseDelimitedFrom`` and ``FileDescriptor.findMessageTypeByName`` (a top-level message by its
  simple name); a ``Ref`` that does not parse (``IOException``) means the first message of the file,
  the payload read from its start.
"""

from __future__ import annotations

from kseg.decoders.registry.framing import FramingError

TYPE_HEADERS = {"value": b"apicurio.protobuf.type", "key": b"apicurio.protobuf.type.key"}


def apicurio_path(codec, body: bytes, headers, role: str) -> tuple[list[int], bytes]:
    """(the message's index path in ``codec``'s schema, the message's bytes) of an Apicurio-framed body."""
    name, start = message_of(body, headers, role)
    if name is None:
        return [0], body
    return [codec.top_index(name)], body[start:]


def message_of(body: bytes, headers, role: str) -> tuple[str | None, int]:
    """(the message's simple name, where its bytes start); (None, 0): the file's first message, the whole
    body (a ``Ref`` that does not parse)."""
    named = None
    for key, value in headers or ():
        if bytes(key) == TYPE_HEADERS[role]:
            named = bytes(value)  # the last one, as Headers.lastHeader
    ref = _ref(body)
    if named is not None:
        try:
            name = named.decode("utf-8")
        except UnicodeDecodeError:
            raise FramingError(f"header {TYPE_HEADERS[role].decode()} is not UTF-8") from None
        if ref is not None and ref[0] == name:  # 3.x: the Ref too, before the message
            return name, ref[1]
        return name, 0
    if ref is None:
        if not body:  # parseDelimitedFrom returns null: the deserializer fails on it
            raise FramingError("an empty payload: no Ref naming its message (Apicurio's Protobuf framing)")
        return None, 0
    return ref


def _varint(b: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint of at most 64 bits at ``pos``: (value, next); ValueError where protobuf's
    reader throws."""
    value = shift = 0
    while True:
        if pos >= len(b) or shift > 63:
            raise ValueError
        byte = b[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        shift += 7
        if not byte & 0x80:
            return value & ((1 << 64) - 1), pos


def _ref(body: bytes) -> tuple[str, int] | None:
    """The length-delimited ``Ref`` at the body's start: (its name, where the message starts), or None
    where ``Ref.parseDelimitedFrom`` throws (truncated, a field protobuf cannot read, a name not UTF-8)."""
    try:
        length, pos = _varint(body, 0)
        end = pos + length
        if end > len(body):
            return None
        name = b""
        while pos < end:
            tag, pos = _varint(body, pos)
            field, wire = tag >> 3, tag & 7
            if field == 0:
                return None
            if wire == 0:
                _, pos = _varint(body, pos)
            elif wire == 1 or wire == 5:
                pos += 8 if wire == 1 else 4
            elif wire == 2:
                n, pos = _varint(body, pos)
                if field == 1:
                    name = body[pos : pos + n]  # a string field seen twice: the last one, as protobuf merges
                pos += n
            else:
                return None  # groups (3, 4) in a proto3 message, or an invalid wire type
            if pos > end:
                return None
        return name.decode("utf-8"), end
    except (ValueError, UnicodeDecodeError):
        return None
