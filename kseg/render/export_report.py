"""``export --report`` / ``--since``: what an export read, so the next one reads only what is new.

The report is one JSON object::

    {"type": "exportReport", "version": 1,
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

VERSION = 1


def report_bytes(next_offsets: dict[str, int], since: dict[str, int] | None) -> bytes:
    """The report of an export that reached ``next_offsets``, after one that had reached ``since``."""
    merged = dict(since or {})
    for key, offset in next_offsets.items():
        merged[key] = max(offset, merged.get(key, offset))
    doc = {"type": "exportReport", "version": VERSION, "nextOffsets": dict(sorted(merged.items()))}
    return (json.dumps(doc, indent=1) + "\n").encode("utf-8")


def read_since(path: str) -> dict[str, int]:
    """The next offsets of the report at ``path``; :class:`InputError` naming it when it is not one."""
    from kseg.storage import files

    data = files.read_small_file(path, 1 << 30)
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise InputError(f"not an export report (--report of kseg export): {exc}", path=path) from None
    offsets = doc.get("nextOffsets") if isinstance(doc, dict) and doc.get("type") == "exportReport" else None
    if not isinstance(offsets, dict) or doc.get("version") != VERSION:
        raise InputError(
            f"not an export report of version {VERSION} (--report of kseg export): no nextOffsets", path=path
        )
    if not all(isinstance(k, str) and type(v) is int for k, v in offsets.items()):
        raise InputError("not an export report: nextOffsets maps partition paths to offsets", path=path)
    return offsets
