"""``--key-decoder registry`` / ``--value-decoder registry``: payloads as the producer wrote them,
decoded with the schemas of the registry's own ``_schemas`` topic, read offline (docs/schemas.md).

:func:`open_registry` replays the topic (:mod:`.source`, :mod:`.store`); :class:`RegistryDecoder`
is a key or value decoder: called with the bytes it gives the text (a decoder like ``hex``); its
:meth:`~RegistryDecoder.with_headers` reads the schema id from the record's headers too, and
:meth:`~RegistryDecoder.json_fields` gives a JSON row's fields (the decoded value, the schema's id,
subject, version and type, or the reason it could not be decoded).  A payload that cannot be decoded
(no known framing, an unknown id, a corrupt payload, a schema that does not parse) prints as the
fallback decoder (hex) and the reason is counted (:meth:`Registry.notes`): the run goes on.

Nothing here imports fastavro or protobuf until a schema of that type is first used.
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from typing import Any, NamedTuple

from kseg.avro_engine import compiled_module
from kseg.decoders.registry.framing import CONFLUENT, FRAMINGS, FramingError, message_indexes, schema_ref
from kseg.decoders.registry.store import DEFAULT_CONTEXT, SchemaEntry, SchemaStore
from kseg.jsonlines import Raw

INSTALL_HINT = "pip install 'kseg[schemas]'"
#: schema type -> the modules its decoder needs
NEEDS = {"AVRO": ("fastavro",), "PROTOBUF": ("google.protobuf", "grpc_tools"), "JSON": ()}
VALIDATE_NEEDS = ("jsonschema",)  # --validate of JSON Schema payloads
MAX_REASONS = 32  # distinct reasons kept for the summary (memory bounded whatever the record count)


class Decoded(NamedTuple):
    text: str  # what the text output prints: the JSON text, or the bytes as hex
    schema: dict | None
    error: str | None
    invalid: str | None = None  # --validate: why the payload does not match its schema


class Registry:
    """The replayed store and the codecs of the ids used so far (each schema parsed once)."""

    def __init__(
        self, store: SchemaStore, context: str = DEFAULT_CONTEXT, validate: bool = False, framing: str = CONFLUENT
    ) -> None:
        self.store = store
        self.context = context
        self.validate = validate  # --validate: a payload not matching its schema is a problem
        self.framing = framing  # --framing: how the payloads carry their schema's id (framing.FRAMINGS)
        self._codecs: dict[tuple[str, int], Any] = {}  # (context, id) -> codec, or the exception
        self._validators: dict[tuple[str, int], Any] = {}  # JSON Schema: (context, id) -> its validator
        self.failures: Counter[tuple[str, str]] = Counter()  # (key or payload, reason) -> count
        self.invalid: Counter[tuple[str, str]] = Counter()  # --validate: (key or payload, reason) -> count

    def __getstate__(self) -> tuple:
        """Shipped to another process (a Spark task) as the store and the settings: its codecs are made
        there, once each, and its counts start at zero (sent back by :meth:`reasons`)."""
        return self.store, self.context, self.validate, self.framing

    def __setstate__(self, state: tuple) -> None:
        self.__init__(*state)  # type: ignore[misc]

    def missing_modules(self) -> list[str]:
        """The Python modules the store's schema types need that are not installed."""
        types = {e.schema_type for e in self.store.schemas.values()}
        wanted = sorted({m for t in types for m in NEEDS.get(t, ())} | set(VALIDATE_NEEDS if self.validate else ()))
        return [m for m in wanted if importlib.util.find_spec(m.partition(".")[0]) is None]

    def codec(self, entry: SchemaEntry) -> Any:
        key = (entry.context, entry.id)
        codec = self._codecs.get(key)
        if codec is None:
            try:
                codec = _make_codec(self.store, entry)
            except Exception as exc:  # noqa: BLE001 - a schema that does not parse: its records fall back
                codec = ValueError(f"schema id {entry.id} ({entry.schema_type}) does not parse: {_one_line(exc)}")
            self._codecs[key] = codec
        if isinstance(codec, Exception):
            raise codec
        return codec

    def failed(self, field: str, reason: str) -> None:
        slot = (field, reason[:200])
        if slot in self.failures or len(self.failures) < MAX_REASONS:
            self.failures[slot] += 1
        else:
            self.failures[(field, "other reasons")] += 1

    def notes(self) -> list[str]:
        """One line per reason keys or payloads were printed with the fallback decoder (and, with
        ``--validate``, did not match their schema), most frequent first."""
        return [
            f"{n} {field if n == 1 else field + 's'} printed as hex: {reason}"
            for (field, reason), n in self.failures.most_common()
        ] + [
            f"{n} {field if n == 1 else field + 's'} not matching {'its' if n == 1 else 'their'} schema: {reason}"
            for (field, reason), n in self.invalid.most_common()
        ]

    def merge(self, reasons: tuple[list, list]) -> None:
        """Add another process's counts (a Spark task's ``(failures, invalid)`` items) to this run's."""
        failures, invalid = reasons
        for slot, n in failures:
            self.failures[tuple(slot)] += n
        for slot, n in invalid:
            self.invalid[tuple(slot)] += n

    def reasons(self) -> tuple[list, list]:
        """This run's counts, to be merged by another process (:meth:`merge`)."""
        return list(self.failures.items()), list(self.invalid.items())

    def problems(self) -> int:
        """With ``--validate``: the keys and payloads not decoded or not matching their schema."""
        return sum(self.failures.values()) + sum(self.invalid.values()) if self.validate else 0

    def check(self, field: str, entry: SchemaEntry, text: str) -> str | None:
        """``--validate`` of a JSON Schema payload: the first error's one line (counted), or None."""
        key = (entry.context, entry.id)
        validator = self._validators.get(key)
        if validator is None:
            validator = _json_validator(self.store, entry)
            self._validators[key] = validator
        from jsonschema.exceptions import best_match

        error = best_match(validator.iter_errors(json.loads(text)))
        if error is None:
            return None
        where = "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        reason = f"{where}: {_one_line(error)}"[:200]
        slot = (field, reason)
        if slot in self.invalid or len(self.invalid) < MAX_REASONS:
            self.invalid[slot] += 1
        else:
            self.invalid[(field, "other reasons")] += 1
        return reason

    def entry_for(self, framed) -> SchemaEntry:
        if framed.guid is not None:
            entry = self.store.by_guid(framed.guid, self.context)
        else:
            entry = self.store.by_id(framed.schema_id, self.context)
        if entry is None:
            other = [] if framed.schema_id is None else self.store.contexts_holding(framed.schema_id)
            elsewhere = f" (it is in context {', '.join(other)}: --schemas-context)" if other else ""
            if framed.schema_id == 0 and self.framing == CONFLUENT and not framed.in_header and not other:
                elsewhere += " (an Apicurio 8-byte id? --framing apicurio)"  # its first 4 bytes are 0 below 2^32
            raise LookupError(f"unknown schema {framed.where()} in context {self.context}{elsewhere}")
        return entry


def _json_validator(store: SchemaStore, entry: SchemaEntry) -> Any:
    """The validator of a JSON Schema, its references (other subjects' schemas, transitively) resolvable by
    their names as ``$ref`` s -- as confluent-kafka's ``_resolve_named_schema`` registers each under its
    reference's ``name``, draft 7 when a schema names none; offline: a ``$ref`` to anything else does not
    resolve (the payload's reason)."""
    from jsonschema.validators import validator_for  # kseg[schemas]
    from referencing import Registry as References
    from referencing import Resource
    from referencing.jsonschema import DRAFT7

    schema = json.loads(entry.schema)
    resources = [
        (name, Resource.from_contents(json.loads(ref.schema), default_specification=DRAFT7))
        for name, ref in _closure(store, entry)
    ]
    return validator_for(schema)(schema, registry=References().with_resources(resources))


def json_references(store: SchemaStore, entry: SchemaEntry) -> dict[str, Any]:
    """A JSON Schema's references, transitively: reference name -> the referenced schema (parsed)."""
    return {name: json.loads(ref.schema) for name, ref in _closure(store, entry)}


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]


def _closure(store: SchemaStore, entry: SchemaEntry) -> list[tuple[str, SchemaEntry]]:
    """The schemas ``entry`` references, transitively, dependencies first: (reference name, schema)."""
    out: list[tuple[str, SchemaEntry]] = []
    done: set[tuple[str, int]] = set()

    def visit(e: SchemaEntry, path: tuple) -> None:
        for ref in e.references:
            target = store.reference(ref, e.subject)
            if target is None:
                raise LookupError(f"reference {ref.name!r} -> {ref.subject} version {ref.version} is not in _schemas")
            slot = (target.subject, target.version)
            if slot in path:
                raise ValueError(f"reference cycle through {ref.subject} version {ref.version}")
            if slot in done:
                continue
            visit(target, path + (slot,))
            done.add(slot)
            out.append((ref.name, target))

    visit(entry, ((entry.subject, entry.version),))
    return out


def _make_codec(store: SchemaStore, entry: SchemaEntry) -> Any:
    refs = _closure(store, entry)
    if entry.schema_type == "AVRO":
        from kseg.decoders.registry.avro import AvroCodec

        return AvroCodec(entry.schema, [e.schema for _, e in refs])
    if entry.schema_type == "PROTOBUF":
        from kseg.decoders.registry.protobuf import ProtobufCodec

        return ProtobufCodec(entry.schema, {name: e.schema for name, e in refs})
    if entry.schema_type == "JSON":
        json.loads(entry.schema)  # the schema itself must be JSON
        return JsonSchemaCodec()
    raise ValueError(f"schema type {entry.schema_type} is not one kseg decodes")


class JsonSchemaCodec:
    """JSON Schema payloads: the JSON the serializer wrote, compact on one line, number text kept."""

    def decode(self, data: bytes) -> str:
        from kseg.decoders.simple import json as compact

        try:
            json.loads(bytes(data).decode("utf-8"))  # strict: a corrupt payload is a reason, not a guess
        except UnicodeDecodeError as exc:
            raise ValueError(f"the JSON payload is not UTF-8: {exc.reason} at byte {exc.start}") from None
        except ValueError as exc:
            raise ValueError(f"the JSON payload does not parse: {exc}") from None
        return compact(data)


class RegistryDecoder:
    """The key (``role="key"``) or value (``role="value"``) decoder of ``--*-decoder registry``."""

    __name__ = "registry"

    def __init__(self, registry: Registry, role: str) -> None:
        self.registry = registry
        self.role = role
        self.field = "key" if role == "key" else "payload"
        self.header_decoder = None  # header values in JSON rows: Kafka's string decoder, base64 if not text
        # magic 0's id bytes -> (codec, schema fields, the codec's JSON rows' reader or None): Avro and JSON
        self._known: dict[bytes, tuple] = {}
        self._id_end = 1 + FRAMINGS[registry.framing][0]  # where the data starts after magic 0 and the id
        compiled, _ = compiled_module()
        # Confluent's magic 0 and an Avro id seen before: the framing and the datum read in C (None: the path below)
        confluent = registry.framing == CONFLUENT
        self._framed = compiled.Framed() if compiled is not None and confluent else None

    def __getstate__(self) -> tuple:
        """Shipped as its registry (pickled once for the key and the value decoder) and role; the compiled
        reader's state is made again where it lands."""
        return self.registry, self.role, self.header_decoder

    def __setstate__(self, state: tuple) -> None:
        registry, role, header_decoder = state
        self.__init__(registry, role)  # type: ignore[misc]
        self.header_decoder = header_decoder

    def __call__(self, data: bytes) -> str:
        return self.with_headers(data, None)

    def with_headers(self, data: bytes, headers) -> str:
        if not headers and self._framed is not None:
            text = self._framed.decode(data)
            if text is not None:
                return text
        return self.decode(data, headers).text

    def json_fields(self, data: bytes, headers) -> dict:
        if not headers and data[:1] == b"\0":  # an id seen: the compiled reader writes the row's value
            data = bytes(data)
            hit = self._known.get(data[1 : self._id_end])
            if hit is not None and hit[2] is not None:
                text = hit[2](data[self._id_end :])
                if text is not None:
                    return {self.field: Raw(text), f"{self.field}Schema": hit[1]}
        d = self.decode(data, headers)
        if d.error is not None:
            return {self.field: d.text, f"{self.field}DecodeError": d.error}
        fields = {self.field: json.loads(d.text), f"{self.field}Schema": d.schema}
        if d.invalid is not None:
            fields[f"{self.field}Invalid"] = d.invalid
        return fields

    def decode(self, data: bytes, headers) -> Decoded:
        data = bytes(data)
        end = self._id_end
        if not headers and data[:1] == b"\0":  # the common framing: its id's codec and schema, looked up once
            hit = self._known.get(data[1:end])
            if hit is not None:
                try:
                    return Decoded(hit[0].decode(data[end:]), hit[1], None)
                except Exception:  # noqa: BLE001, S110 - the full path below says why, and counts it
                    pass
        try:
            framed, carrier = schema_ref(data, headers, self.role, self.registry.framing)
            entry = self.registry.entry_for(framed)
            codec = self.registry.codec(entry)
            schema: dict = {
                "id": entry.id,
                "subject": entry.subject,
                "version": entry.version,
                "type": entry.schema_type,
            }
            if entry.deleted:
                schema["deleted"] = True
            if framed.framing != CONFLUENT:
                schema["framing"] = framed.framing
            body = data if framed.in_header else data[framed.rest :]
            if entry.schema_type == "PROTOBUF":
                indexes, body = protobuf_path(codec, framed, carrier, body, headers, self.role)
                text, name = codec.decode(body, indexes)
                schema["message"] = name
            else:
                text = codec.decode(body)
                if entry.schema_type == "JSON" and self.registry.validate:
                    return Decoded(text, schema, None, self.registry.check(self.field, entry, text))
                if framed.schema_id is not None and not framed.in_header:
                    self._known[data[1:end]] = (codec, schema, getattr(codec, "decode_json", None))
                    if self._framed is not None and getattr(codec, "compiled", None) is not None:
                        self._framed.add(int.from_bytes(data[1:end], "big"), codec.compiled)
            return Decoded(text, schema, None)
        except (FramingError, LookupError, ValueError, TypeError, KeyError, IndexError, EOFError) as exc:
            reason = _one_line(exc)
        except Exception as exc:  # noqa: BLE001 - a decoder library's own error on corrupt data
            reason = f"{type(exc).__name__}: {_one_line(exc)}"
        self.registry.failed(self.field, reason)
        return Decoded(data.hex(), None, reason)


def protobuf_path(codec, framed, carrier: bytes, body: bytes, headers, role: str) -> tuple[list[int], bytes]:
    """(the message's index path, its bytes) of a Protobuf payload: Confluent's message-index path after
    the id (in the payload, or first in a payload whose id is in a header), or Apicurio's ``Ref`` or type
    header (:mod:`.apicurio_proto`)."""
    if framed.framing != CONFLUENT:
        from kseg.decoders.registry.apicurio_proto import apicurio_path

        return apicurio_path(codec, body, headers, role)
    indexes, end = message_indexes(carrier, framed.rest)
    return indexes, body if framed.in_header else carrier[end:]


def open_registry(
    source: str, context: str = DEFAULT_CONTEXT, validate: bool = False, framing: str = CONFLUENT
) -> tuple[Registry, str]:
    """Replay ``source`` (:func:`kseg.decoders.registry.source.load`): (the registry, the directory read).
    An Apicurio ``framing`` with a ``_schemas`` log is a :class:`~kseg.errors.KsegError` (a usage error):
    Apicurio's ids are its own, not the ones Confluent's registry wrote in ``_schemas``."""
    from kseg.decoders.registry.source import load
    from kseg.errors import KsegError

    store, directory = load(source)
    if framing != CONFLUENT and getattr(store, "origin", "") == "_schemas":
        raise KsegError(
            f"--framing {framing}: Apicurio's ids are not the ids of a _schemas log ({directory}); give "
            "--schemas a directory of schema files named by those ids, or Apicurio's ccompat API URL"
        )
    return Registry(store, context, validate, framing), directory
