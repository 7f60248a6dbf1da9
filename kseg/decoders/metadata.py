"""``--cluster-metadata-decoder``: KRaft ``__cluster_metadata`` records.

Record value format (Kafka's ``AbstractApiMessageSerde``, used by
``MetadataRecordSerde`` and by ``RemoteLogMetadataSerde``)::

    frame_version uvarint (must be 1) | api_key uvarint | version uvarint | message

Each uvarint must fit a Java short.  The api key picks the record type
(``MetadataRecordType``, generated from ``metadata/.../common/metadata/*.json``),
named ``TOPIC_RECORD`` etc. (the spec name in upper snake case).  Any byte left
after the message is an error.  Error messages, as the serde throws them:
"Error while reading frame version" (also for a null value), "Value for type
was too large.", "Could not deserialize metadata record with frame version
0. ...", "... due to unknown frame version N(only frame version 1 is
supported)", "org.apache.kafka.common.errors.UnsupportedVersionException:
Unknown metadata id N", "Failed to deserialize record with type N", "Found N
byte(s) of garbage after N".

Output (``DumpLogSegments.ClusterMetadataLogMessageParser``): no key; the
payload ``{"type":"TOPIC_RECORD","version":0,"data":{...}}`` (version a JSON
number), or "Error at N, skipping. <message>" -- Kafka's text has no
"offset" word here.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from kseg.decoders import schema
from kseg.decoders.decode import read, whole_reader
from kseg.decoders.jsonconv import dumps, to_tree
from kseg.decoders.jvm import JavaException, MetadataParseException, UnsupportedVersionException
from kseg.decoders.wire import Reader
from kseg.format import releases
from kseg.format.releases import Release

DEFAULT_FRAME_VERSION = 1
_NO_TAGS: frozenset[str] = frozenset()


@lru_cache(maxsize=None)
def snake_upper(name: str) -> str:
    """``MessageGenerator.toSnakeCase(name).toUpperCase()``: ``TopicRecord`` -> ``TOPIC_RECORD``."""
    out = []
    prev_upper = True
    for c in name:
        if c.isupper():
            if not prev_upper:
                out.append("_")
            out.append(c.lower())
            prev_upper = True
        else:
            out.append(c)
            prev_upper = False
    return "".join(out).upper()


def _short_varint(r: Reader | None, entity: str) -> int:
    try:
        if r is None:
            raise JavaException("null buffer")  # Java: NullPointerException, caught the same way
        val = r.uvarint()
    except JavaException as exc:
        raise MetadataParseException(f"Error while reading {entity}", exc) from None
    if val > 32767:
        raise MetadataParseException(f"Value for {entity} was too large.")
    val &= 0xFFFF
    return val - 0x10000 if val & 0x8000 else val


def _frame(data: bytes | None) -> tuple[Reader, int, int]:
    """The frame version (which must be 1), api key and version, each a varint fitting a Java short: a
    reader past them, the key and the version; raises :class:`MetadataParseException` as the serde does."""
    r = None if data is None else Reader(data)
    frame_version = _short_varint(r, "frame version")
    if frame_version == 0:
        raise MetadataParseException(
            "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview "
            "release of KRaft in 2.8 to newer versions are not supported."
        )
    if frame_version != DEFAULT_FRAME_VERSION:
        raise MetadataParseException(
            f"Could not deserialize metadata record due to unknown frame version {frame_version}"
            f"(only frame version {DEFAULT_FRAME_VERSION} is supported)"
        )
    assert r is not None  # a null buffer raised in _short_varint
    api_key = _short_varint(r, "type")
    version = _short_varint(r, "version")
    return r, api_key, version


@lru_cache(maxsize=None)
def _fast_road(table: str, api_key: int, version: int) -> tuple[str, Callable[[bytes, int], dict | None]] | None:
    """The name and compiled fast road (``decode.whole_reader``) of a record type of kseg's own table."""
    name = schema.metadata_names(table).get(api_key)
    if name is None:
        return None
    whole = whole_reader(schema.message(name).struct, version)
    return None if whole is None else (name, whole)


def read_api_message(
    data: bytes | None, table: str = "metadata", max_api_key: int = 32767, known: dict | None = None
) -> tuple[str, int, int, dict]:
    """``AbstractApiMessageSerde.read``: ``(message name, api key, version, message)``.

    ``table`` picks the api-key registry: ``"metadata"`` (KRaft records) or
    ``"remoteLogMetadata"`` (the storage module's own ``MetadataRecordType``);
    ``max_api_key`` the newest KRaft record type a Kafka release knows (3.9: 27,
    4.0-4.3: 28 ``ClearElrRecord``, 4.4: 29 ``UnregisterControllerRecord``).
    """
    if known is None and data is not None and len(data) > 2 and data[0] == DEFAULT_FRAME_VERSION:
        api_key, version = data[1], data[2]
        if api_key < 0x80 > version and api_key <= max_api_key:  # one-byte varints: the usual frame
            fast = _fast_road(table, api_key, version)
            found = None if fast is None else fast[1](data, 3)
            if fast is not None and found is not None:
                return fast[0], api_key, version, found
    r, api_key, version = _frame(data)
    read_version, unknown_tags, entry = version, _NO_TAGS, None
    name: str | None
    if known is not None:  # an older release's own table (kraft-<line>.json): its types and versions
        entry = known.get(str(api_key))
        name = None if entry is None else entry["name"]
        if entry is not None:  # its generated read checks no version: a newer one is read with its field list
            read_version = min(version, entry["highest"])
            unknown_tags = _unknown_tags(entry["name"], entry)
    else:
        name = schema.metadata_names(table).get(api_key) if api_key <= max_api_key else None
    if name is None:
        raise MetadataParseException.wrapping(UnsupportedVersionException(f"Unknown metadata id {api_key}"))
    try:
        message = read(release_message(name, entry).struct, r, read_version, unknown_tags)
    except JavaException as exc:
        raise MetadataParseException(f"Failed to deserialize record with type {api_key}", exc) from None
    if r.remaining() > 0:
        raise MetadataParseException(f"Found {r.remaining()} byte(s) of garbage after {api_key}")
    return name, api_key, version, message


def _unknown_tags(name: str, entry: dict) -> frozenset:
    """The top-level fields of ``name`` that an older release's class (``entry`` of its table) lacks:
    tagged ones it does not know, and fields absent from its spec (a layout changed without a version
    bump, as ``DelegationTokenRecord`` v0's ``Requester`` of 3.6)."""
    struct = release_message(name, entry).struct
    known, fields = set(entry["tagged"]), set(entry["fields"])
    return frozenset(
        f.name
        for f in struct.fields
        if f.name not in fields or (f.tag is not None and f"{struct.name}.{f.name}" not in known)
    )


_LAYOUTS: dict[int, schema.Message] = {}


def release_message(name: str, entry: dict | None) -> schema.Message:
    """The schema a release's class reads ``name`` with: the ``layout`` of its table's ``entry`` (a record kseg's
    own schemas lay out otherwise or lack: 3.3/3.4's ``UserScramCredentialRecord`` v0, ``AccessControlRecord``),
    else kseg's own."""
    if entry is None or "layout" not in entry:
        return schema.message(name)
    found = _LAYOUTS.get(id(entry))
    if found is None:  # entries live as long as kraft_table's cache
        found = _LAYOUTS[id(entry)] = schema.Message(entry["layout"])
    return found


@lru_cache(maxsize=None)
def kraft_table(line: str) -> dict:
    """``schemas/releases/kraft-<line>.json``: the KRaft record types (api key -> name, highest version, tagged
    field paths) the metadata classes of Kafka ``line`` know (``tests/data/kafka4x/make_kraft_table.py``)."""
    import json
    from importlib.resources import files

    text = (files("kseg.decoders") / "schemas" / "releases" / f"kraft-{line}.json").read_text("utf-8")
    return json.loads(text)["records"]


class ClusterMetadataLogMessageParser:
    """``--cluster-metadata-decoder``, Kafka's ``ClusterMetadataLogMessageParser``."""

    def __init__(self, release: Release = releases.LATEST) -> None:
        self.release = release

    def parse(self, offset: int, key: bytes | None, value: bytes | None) -> tuple[None, str]:
        known = kraft_table(self.release.kraft_table) if self.release.kraft_table else None
        try:
            name, api_key, version, message = read_api_message(
                value, max_api_key=self.release.metadata_max_api_key, known=known
            )
            entry = known[str(api_key)] if known is not None else None
            m = release_message(name, entry)
            if entry is not None:  # that release's field list and its tagged fields only
                data = to_tree(m.struct, message, min(version, entry["highest"]))
                schema.drop_tagged_except(m, data, set(entry["tagged"]))
                data = {k: v for k, v in data.items() if k in entry["fields"]}
            else:
                data = schema.drop_newer_tagged(m, to_tree(m.struct, message, version), self.release.knows)
            renames = self.release.metadata_renames.get(name)
            if renames:  # a field's JSON name in that release's converter
                data = {renames.get(k, k): v for k, v in data.items()}
            text = dumps({"type": snake_upper(name), "version": version, "data": data})
        except JavaException as exc:
            text = f"Error at {offset}, skipping. {exc.get_message()}"
        return None, text


def read_record(value: bytes | None) -> tuple[str, dict]:
    """``MetadataRecordSerde.read``: the record's name and values (every field, a version's absent ones at
    their defaults, UUIDs as 16 bytes); raises :class:`DecoderError` with Java's message for a value that is
    not a metadata record -- the record-reading rule ``kseg metadata`` replays (handed it by the CLI)."""
    from kseg.errors import DecoderError

    try:
        name, _, _, message = read_api_message(value)
    except JavaException as exc:
        raise DecoderError(exc.to_string()) from None
    return name, message
