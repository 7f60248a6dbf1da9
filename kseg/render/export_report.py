"""``export --report`` / ``--since``: what an export read, so the next one reads only what is new.

The report is one JSON object, a row of the one versioned schema (``type``, then ``v``: docs/json-output.md,
``kseg/kseg.schema.json``'s ``export.exportReport``)::

    {"type": "exportReport", "v": 3,
     "nextOffsets": {"/var/lib/kafka/data/orders-3": 1200, "s3://backups/b1/data/orders-4": 77, ...}}

``nextOffsets`` names each partition directory once (an absolute local path, or the URI) and the offset
after the last batch whose records the export wrote (capped at ``--to-offset`` + 1).  ``export --since
REPORT`` starts each partition named there at its offset (the others from their start), and its own
``--report`` carries the partitions it did not read forward, so a chain of incremental exports writes each
record once: together they are the full export.
"""

from __future__ import annotations

import json

from kseg.errors import InputError
from kseg.jsonlines import SCHEMA_VERSION
from kseg.storage.stores.discover import store_of

#: The first reports (before they joined the versioned schema) said ``"version": 1``: still read.
FIRST_VERSION = 1


def report_bytes(next_offsets: dict[str, int], since: dict[str, int] | None) -> bytes:
    """The report of an export that reached ``next_offsets``, after one that had reached ``since``."""
    merged = dict(since or {})
    for key, offset in next_offsets.items():
        merged[key] = max(offset, merged.get(key, offset))
    doc = {"type": "exportReport", "v": SCHEMA_VERSION, "nextOffsets": dict(sorted(merged.items()))}
    return (json.dumps(doc, indent=1) + "\n").encode("utf-8")


def read_since(path: str) -> dict[str, int]:
    """The next offsets of the report at ``path``; :class:`InputError` naming it when it is not one."""
    from kseg.storage import files

    data = files.read_small_file(path, 1 << 30, store=store_of(path))
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise InputError(f"not an export report (--report of kseg export): {exc}", path=path) from None
    doc = doc if isinstance(doc, dict) else {}
    offsets = doc.get("nextOffsets") if doc.get("type") == "exportReport" else None
    version = doc.get("v", -1)  # any version of the schema up to this one's
    known = type(version) is int and 1 <= version <= SCHEMA_VERSION or doc.get("version") == FIRST_VERSION
    if not isinstance(offsets, dict) or not known:
        raise InputError(
            f"not an export report of version {SCHEMA_VERSION} or before (--report of kseg export): no nextOffsets",
            path=path,
        )
    if not all(isinstance(k, str) and type(v) is int for k, v in offsets.items()):
        raise InputError("not an export report: nextOffsets maps partition paths to offsets", path=path)
    return offsets
