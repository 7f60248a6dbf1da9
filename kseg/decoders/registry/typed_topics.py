"""The typed columns of the topics an export holds (:func:`typed_columns`); over several topics, one
role's ``<role>Decoded`` a struct with one field per topic (:class:`TopicColumns`).

A Parquet file and a DataFrame have one type per column, and each topic's subject
(``<topic>-value``) has its own schema, so an export of several topics types
``<role>Decoded`` as a struct of the topics' column types, named by the topics (in
name order): a record fills its own topic's field, the others are null
(docs/schemas.md, "Several topics").  ``<role>SchemaId``, ``<role>DecodeError`` and
``<role>Invalid`` are as one topic's.
"""

from __future__ import annotations

from typing import Any

from kseg.decoders.registry import _one_line
from kseg.decoders.registry.framing import CONFLUENT
from kseg.decoders.registry.typed import TypedColumn, role_fields, typed_arrays


class TopicColumns:
    """The typed columns of ``role`` for ``columns`` (topic -> its
    :class:`~kseg.decoders.registry.typed.TypedColumn`)."""

    def __init__(self, role: str, columns: dict[str, Any]) -> None:
        import pyarrow as pa

        self.role = role
        self.columns = dict(sorted(columns.items()))
        first = next(iter(self.columns.values()))
        self.registry = first.registry  # the framing and --validate: the same for every topic
        self._id_bytes = first._id_bytes
        self._id_type = first._id_type
        self.type = pa.struct([pa.field(topic, c.type) for topic, c in self.columns.items()])

    def describe(self) -> str:
        return ", ".join(c.describe() for c in self.columns.values())

    def fields(self, spark: bool = False) -> list:
        return role_fields(self, spark)

    def arrays(self, payloads: list, headers: list, spark: bool = False, topics: list | None = None) -> list:
        """The columns for ``payloads`` with their records' ``headers`` and ``topics`` (each row's)."""
        if topics is None:
            raise ValueError("typed columns of several topics need each row's topic")

        def decode(n: int, data: Any, pairs: Any) -> tuple:
            if data is None:
                return None, None, None, None
            column = self.columns.get(topics[n])
            if column is None:
                return None, None, f"topic {topics[n]} has no typed column", None
            value, schema_id, error, invalid = column.decode_checked(data, pairs)
            return (None if value is None else {topics[n]: value}), schema_id, error, invalid

        return typed_arrays(self, payloads, headers, spark, decode)


def typed_columns(
    store: Any,
    roles: tuple[str, ...],
    topics: list[str],
    context: str,
    framing: str = CONFLUENT,
    validate: bool = False,
    messages: dict[str, str] | None = None,
) -> tuple:
    """The :class:`TypedColumn` s of ``roles`` for the one topic the inputs hold (its ``<topic>-<role>``
    subjects; ``messages``: role -> the Protobuf message of its column, else the file's first);
    ValueError saying why not (several topics, none, a subject the schemas lack, a schema that does not
    parse, a message it does not have)."""
    if not roles:
        return ()
    if not topics:
        raise ValueError("the registry decoder's typed columns are its topics' (<topic>-value): the inputs hold none")
    out: list = []
    for role in roles:
        columns = {}
        for topic in topics:
            try:
                message = (messages or {}).get(role)
                columns[topic] = TypedColumn(store, role, f"{topic}-{role}", context, framing, validate, message)
            except (LookupError, ValueError) as exc:
                raise ValueError(f"the registry decoder's {role} column: {_one_line(exc)}") from None
        if len(columns) == 1:
            out.append(columns[topics[0]])
        else:
            out.append(TopicColumns(role, columns))
    return tuple(out)
