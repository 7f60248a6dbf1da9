"""Typed columns for ``export`` and the DataFrame source: keys or values decoded into Arrow types.

One :class:`TypedColumn` per role asked for (``--key-decoder registry``: key; ``--value-decoder
registry``: value) adds three columns beside the raw bytes (docs/schemas.md, "Typed columns"):

``<role>Decoded``      the payload as the Arrow type of its subject's **latest** version (the column's
                       schema, fixed before any record is read)
``<role>SchemaId``     the id the record's framing names (null when there is none)
``<role>DecodeError``  why ``<role>Decoded`` is null for a non-null payload (else null)
``<role>Invalid``      with ``--validate`` only: the first error of a JSON Schema payload that does not
                       match its writer schema (else null)

The subject is ``<topic>-key`` / ``<topic>-value`` (``TopicNameStrategy``, the serializers'
default), in the ``--schemas-context``.  Versions: an Avro record is read with its own writer schema
resolved to the column's by Avro's schema resolution (a field added with a default takes the
default in older records; a writer that does not resolve is a decode error); a Protobuf record
whose message is the column's (by full name) is parsed with the column's descriptor (protobuf's own
evolution: fields by number, unknown ones dropped); a JSON Schema payload is fitted to the column's
type.  A record of another schema type or another Protobuf message is a decode error.
"""

from __future__ import annotations

import io
import json
from typing import Any

from kseg.decoders.registry import Registry, _closure, _one_line, protobuf_path
from kseg.decoders.registry.framing import CONFLUENT, FRAMINGS, FramingError, schema_ref
from kseg.decoders.registry.store import DEFAULT_CONTEXT, SchemaEntry, qualify


def role_fields(column: Any, spark: bool = False) -> list:
    """The Arrow fields of ``column``'s role (a :class:`TypedColumn` or one over several topics):
    ``<role>Decoded`` of its type, ``<role>SchemaId``, ``<role>DecodeError`` (and ``<role>Invalid`` with
    ``--validate``)."""
    import pyarrow as pa

    fields = [
        pa.field(f"{column.role}Decoded", spark_arrow(column.type) if spark else column.type),
        pa.field(f"{column.role}SchemaId", column._id_type()),
        pa.field(f"{column.role}DecodeError", pa.string()),
    ]
    if column.registry.validate:
        fields.append(pa.field(f"{column.role}Invalid", pa.string()))
    return fields


class TypedColumn:
    """The typed columns of one role, for the subject ``subject`` (qualified with its context); ``store``: a
    :class:`~kseg.decoders.registry.store.SchemaStore` or a registry URL's
    :class:`~kseg.decoders.registry.remote.RemoteStore`."""

    def __init__(
        self,
        store: Any,
        role: str,
        subject: str,
        context: str = DEFAULT_CONTEXT,
        framing: str = CONFLUENT,
        validate: bool = False,
        message: str | None = None,
    ) -> None:
        self.registry = Registry(store, context, validate, framing)
        self.role = role
        self.subject = qualify(context, subject)
        entry = store.latest(self.subject)
        if entry is None:
            raise LookupError(f"no subject {subject} in the schemas (context {context})")
        self.entry = entry
        self.kind = entry.schema_type
        if message is not None and self.kind != "PROTOBUF":
            raise ValueError(f"a message ({message}) is chosen for Protobuf subjects; {subject} is {self.kind}")
        self._writers: dict[int, Any] = {}  # Avro: id -> the parsed writer schema (or the exception)
        self.convert: Any = None  # Protobuf: message -> value; JSON: (value, path) -> value
        if self.kind == "AVRO":
            from kseg.decoders.registry.typed_avro import arrow_type

            self.reader, names = self._avro_schema(entry)
            self.type, self.fix, self.named = arrow_type(self.reader, names)
        elif self.kind == "PROTOBUF":
            from kseg.decoders.registry.typed_proto import arrow_type as proto_type

            codec = self.registry.codec(entry)
            self.message = codec.message_class([0]) if message is None else codec.message_named(message)
            self.type, self.convert = proto_type(self.message.DESCRIPTOR)
        elif self.kind == "JSON":
            from kseg.decoders.registry import json_references
            from kseg.decoders.registry.typed_json import arrow_type as json_type

            self.type, self.convert = json_type(json.loads(entry.schema), json_references(store, entry))
        else:
            raise ValueError(f"schema type {self.kind} is not one kseg decodes")

    @property
    def _id_bytes(self) -> int:
        return FRAMINGS[self.registry.framing][0]

    def _id_type(self) -> Any:
        """The schema id column's type: int (Confluent's 4-byte ids), bigint for Apicurio's 8-byte ones."""
        import pyarrow as pa

        return pa.int64() if self._id_bytes == 8 else pa.int32()

    def describe(self) -> str:
        return f"{self.subject} version {self.entry.version} (id {self.entry.id}, {self.kind})"

    def _avro_schema(self, entry: SchemaEntry) -> tuple[Any, dict]:
        """(fastavro's parsed schema of ``entry``, logical types kept, its named types)."""
        from fastavro import parse_schema

        named: dict = {}
        for _, ref in _closure(self.registry.store, entry):
            parse_schema(json.loads(ref.schema), named_schemas=named)
        return parse_schema(json.loads(entry.schema), named_schemas=named), named

    # -- one payload --------------------------------------------------------------------------------
    def decode(self, data: bytes | None, headers) -> tuple[Any, int | None, str | None]:
        """(the column's value, the schema id, the decode error)."""
        value, schema_id, error, _ = self.decode_checked(data, headers)
        return value, schema_id, error

    def decode_checked(self, data: bytes | None, headers) -> tuple[Any, int | None, str | None, str | None]:
        """(the column's value, the schema id, the decode error, with ``--validate`` why a JSON Schema
        payload does not match its writer schema)."""
        if data is None:
            return None, None, None, None
        schema_id = None
        try:
            framed, carrier = schema_ref(data, headers, self.role, self.registry.framing)
            schema_id = framed.schema_id
            entry = self.registry.entry_for(framed)
            schema_id = entry.id
            if entry.schema_type != self.kind:
                raise ValueError(f"schema id {entry.id} is {entry.schema_type}, the column's {self.describe()}")
            body = data if framed.in_header else data[framed.rest :]
            if self.kind == "AVRO":
                return self._avro(entry, body), schema_id, None, None
            if self.kind == "PROTOBUF":
                codec = self.registry.codec(entry)
                indexes, body = protobuf_path(codec, framed, carrier, body, headers, self.role)
                return self._protobuf(entry, indexes, body), schema_id, None, None
            doc = self._json(body)
            invalid = None
            if self.registry.validate:  # before fitting: a payload that does not fit is checked too
                invalid = self.registry.check(self.role, entry, bytes(body).decode("utf-8"))
            try:
                return self.convert(doc, "$"), schema_id, None, invalid
            except ValueError as exc:
                return None, schema_id, _one_line(exc), invalid
        except (FramingError, LookupError, ValueError, TypeError, KeyError, IndexError, EOFError) as exc:
            reason = _one_line(exc)
        except Exception as exc:  # noqa: BLE001 - a decoder library's own error on corrupt data
            reason = f"{type(exc).__name__}: {_one_line(exc)}"
        return None, schema_id, reason, None

    def _avro(self, entry: SchemaEntry, body: bytes) -> Any:
        from fastavro import schemaless_reader
        from fastavro.read import SchemaResolutionError

        same = entry.id == self.entry.id and entry.context == self.entry.context
        writer = self.reader if same else self._writer(entry)
        self.registry.codec(entry).bound(body)  # items of no byte: refused before fastavro builds them
        fo = io.BytesIO(body)
        try:
            value = schemaless_reader(fo, writer, None if same else self.reader, return_named_type=self.named)
        except EOFError:
            raise ValueError(f"the Avro datum runs past the end of the {len(body)} bytes after the id") from None
        except SchemaResolutionError as exc:
            what = str(exc).partition(":")[0]
            column = self.describe()
            raise ValueError(f"writer schema id {entry.id} does not resolve to the column's {column}: {what}") from None
        if fo.tell() != len(body):
            raise ValueError(f"{len(body) - fo.tell()} bytes left after the Avro datum")
        return value if self.fix is None else self.fix(value)

    def _writer(self, entry: SchemaEntry) -> Any:
        writer = self._writers.get(entry.id)
        if writer is None:
            try:
                self.registry.codec(entry)  # the schema parses (its reason, once, if not)
                writer = self._avro_schema(entry)[0]
            except Exception as exc:  # noqa: BLE001 - kept: every record of this id has the reason
                writer = ValueError(_one_line(exc))
            self._writers[entry.id] = writer
        if isinstance(writer, Exception):
            raise writer
        return writer

    def _protobuf(self, entry: SchemaEntry, indexes: list[int], body: bytes) -> Any:
        name = self.registry.codec(entry).bound(body, indexes).DESCRIPTOR.full_name  # defaults bounded
        if name != self.message.DESCRIPTOR.full_name:
            raise ValueError(f"message {name} is not the column's {self.message.DESCRIPTOR.full_name}")
        msg = self.message()
        msg.ParseFromString(body)
        return self.convert(msg)

    def _json(self, body: bytes) -> Any:
        try:
            value = json.loads(bytes(body).decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ValueError(f"the JSON payload is not UTF-8: {exc.reason} at byte {exc.start}") from None
        except ValueError as exc:
            raise ValueError(f"the JSON payload does not parse: {exc}") from None
        return value

    # -- Arrow ----------------------------------------------------------------------------------------
    def fields(self, spark: bool = False) -> list:
        return role_fields(self, spark)

    def arrays(self, payloads: list, headers: list, spark: bool = False, topics: list | None = None) -> list:
        """The three columns for ``payloads`` (bytes or None) with their records' ``headers`` (lists of
        ``{"key", "value"}`` or None); ``topics``: unused (one topic's column)."""
        return typed_arrays(self, payloads, headers, spark, lambda n, data, pairs: self.decode_checked(data, pairs))


def typed_arrays(column: Any, payloads: list, headers: list, spark: bool, decode: Any) -> list:
    """The typed columns of ``column`` (a :class:`TypedColumn`, or :class:`~.typed_topics.TopicColumns`)
    for ``payloads``: ``decode(row number, payload, header pairs)`` -> (value, id, error, invalid)."""
    import pyarrow as pa

    values, ids, errors, invalid = [], [], [], []
    wide = column._id_bytes == 8
    for n, (data, hs) in enumerate(zip(payloads, headers, strict=True)):
        pairs = [(h["key"].encode(), h["value"]) for h in hs] if hs else None
        v, i, e, bad = decode(n, data, pairs)
        values.append(v)
        ids.append(i if i is None or wide or -(1 << 31) <= i < 1 << 31 else None)
        errors.append(e)
        invalid.append(bad)
    array = pa.array(values, type=column.type)
    if spark:
        array = array.cast(spark_arrow(column.type))
    out = [array, pa.array(ids, type=column._id_type()), pa.array(errors, type=pa.string())]
    if column.registry.validate:
        out.append(pa.array(invalid, type=pa.string()))
    return out


def spark_arrow(t: Any) -> Any:
    """The Arrow type Spark takes for ``t``: timestamps in microseconds, fixed binary as binary, times
    as their Avro value (int32 ms / int64 us since midnight), decimal256 and null as strings."""
    import pyarrow as pa
    import pyarrow.types as pt

    if pt.is_struct(t):
        return pa.struct([pa.field(f.name, spark_arrow(f.type)) for f in t])
    if pt.is_map(t):
        return pa.map_(spark_arrow(t.key_type), spark_arrow(t.item_type))
    if pt.is_list(t):
        return pa.list_(spark_arrow(t.value_type))
    if pt.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if pt.is_fixed_size_binary(t):
        return pa.binary()
    if pt.is_time32(t):
        return pa.int32()
    if pt.is_time64(t):
        return pa.int64()
    if pt.is_decimal256(t) or pt.is_null(t):
        return pa.string()
    return t


_SQL = {
    "bool": "BOOLEAN",
    "int32": "INT",
    "int64": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "STRING",
    "binary": "BINARY",
    "date32[day]": "DATE",
}


def spark_sql(t: Any) -> str:
    """The Spark SQL type of :func:`spark_arrow`'s type ``t``."""
    import pyarrow.types as pt

    if pt.is_struct(t):
        return "STRUCT<" + ", ".join(f"{_quote(f.name)}: {spark_sql(f.type)}" for f in t) + ">"
    if pt.is_map(t):
        return f"MAP<{spark_sql(t.key_type)}, {spark_sql(t.item_type)}>"
    if pt.is_list(t):
        return f"ARRAY<{spark_sql(t.value_type)}>"
    if pt.is_timestamp(t):
        return "TIMESTAMP" if t.tz else "TIMESTAMP_NTZ"
    if pt.is_decimal(t):
        return f"DECIMAL({t.precision}, {t.scale})"
    return _SQL[str(t)]


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
