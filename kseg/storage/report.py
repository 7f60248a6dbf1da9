"""Verification report rows: one schema shared by the local command and the Spark job.

Rows are flat dicts (JSON Lines, or Parquet from Spark).  Every row has
``type`` (``segment`` or ``problem``), ``partition`` and ``segment``.

segment rows: ``path``, ``bytes``, ``batches``, ``problems`` (count),
``status`` (``clean``, ``problems`` or ``failed``), ``error`` (why a failed
segment could not be verified, else null), ``notes`` (list of strings).

problem rows: ``file``, ``kind``, ``message``, ``position`` (byte, or null),
``entry`` (index entry, or null), ``expected``, ``found`` (strings or null).
"""

from __future__ import annotations

import json
import os

from kseg.jsonlines import dumps

from kseg.storage.verify import SegmentResult

SEGMENT_FIELDS = ("type", "partition", "segment", "path", "bytes", "batches", "problems", "status", "error", "notes")
PROBLEM_FIELDS = ("type", "partition", "segment", "file", "kind", "message", "position", "entry", "expected",
                  "found")


def segment_row(res: SegmentResult) -> dict:
    return {"type": "segment", "partition": res.partition, "segment": res.segment, "path": res.path,
            "bytes": res.bytes, "batches": res.batches, "problems": len(res.problems), "status": res.status,
            "error": res.failed, "notes": list(res.notes)}


def problem_rows(res: SegmentResult) -> list[dict]:
    return [{"type": "problem", "partition": res.partition, "segment": res.segment, "file": p.file,
             "kind": p.kind, "message": p.message, "position": p.position, "entry": p.entry,
             "expected": p.expected, "found": p.found} for p in res.problems]


def rows(results: list[SegmentResult]) -> list[dict]:
    out = []
    for res in results:
        out.append(segment_row(res))
        out.extend(problem_rows(res))
    return out


def write_jsonl(path: str, all_rows: list[dict]) -> None:
    """Write rows as JSON Lines (atomically: a temp file renamed into place)."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        for row in all_rows:
            f.write(dumps(row) + "\n")
    os.replace(tmp, path)


def sort_key(row: dict) -> tuple:
    """A stable order for comparing reports from different runners."""
    return (row["partition"], row["segment"], row["type"] != "segment", json.dumps(row, sort_keys=True))
