"""Rows and text for ``kseg coordinator``: one ``coordinator`` row (or line) per id asked about,
field names camelCase (docs/json-output.md)."""

from __future__ import annotations

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.coordinator.coordinator import Coordinator


def row(c: Coordinator) -> dict:
    """The JSON row of one id: its kind, the id, the topic, the partition as everywhere in kseg (the
    directory's name, ``__consumer_offsets-12``) and its number, the topic's partition count, the hash."""
    return {
        "type": "coordinator",
        "v": SCHEMA_VERSION,
        "kind": c.kind,
        "id": c.id,
        "topic": c.topic,
        "partition": c.directory,
        "partitionId": c.partition,
        "partitionCount": c.partitions,
        "hashCode": c.hash_code,
    }


def text_line(c: Coordinator) -> str:
    """``group my-group: __consumer_offsets-12 (Utils.abs(hashCode 1234) % 50)``; the id as Python's
    ``repr`` shows it when it holds a quote, a space or a character that is not printable."""
    shown = c.id if c.id and c.id.isprintable() and not any(ch in c.id for ch in " :'\"") else repr(c.id)
    return f"{c.kind} {shown}: {c.directory} (Utils.abs(hashCode {c.hash_code}) % {c.partitions})"
