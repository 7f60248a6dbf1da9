"""``kseg metadata --diff``: the differences between two images as lines grouped by section (``+``
created, ``-`` deleted, ``~`` changed with each field ``old -> new``) or ``difference`` JSON rows, then a
``diff`` row naming the two images (docs/metadata.md)."""

from __future__ import annotations

import json
import textwrap
from types import MappingProxyType
from typing import Any

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.metadata.diff import CHANGED, CREATED, Difference
from kseg.ops.metadata.read import Replay
from kseg.render.metadata_text import WIDTH, stop_text
from kseg.render.txn import iso
from kseg.words import plural

MARKS = MappingProxyType({CREATED: "+", "deleted": "-", CHANGED: "~"})
TITLES = MappingProxyType(
    {
        "features": "Features",
        "controllers": "Controllers",
        "brokers": "Brokers",
        "topics": "Topics",
        "partitions": "Partitions",
        "configs": "Configs",
        "acls": "ACLs",
        "clientQuotas": "Client quotas",
        "scramUsers": "SCRAM users",
        "delegationTokens": "Delegation tokens",
        "producerIds": "Producer IDs",
    }
)


def _short(value: Any) -> str:
    """A value as JSON, compact; a string as itself."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), sort_keys=True)


def _entry(value: Any) -> str:
    """An entry created or deleted: its fields as ``name value`` pairs (wrapped between them)."""
    if isinstance(value, dict):
        return "  ".join(f"{k} {_short(v)}" for k, v in value.items())
    return _short(value)


def _changed_fields(before: Any, after: Any) -> str:
    if isinstance(before, dict) and isinstance(after, dict):
        keys = [k for k in before if _short(before.get(k)) != _short(after.get(k))]
        keys += [k for k in after if k not in before]
        return "  ".join(f"{k} {_short(before.get(k))} -> {_short(after.get(k))}" for k in keys)
    return f"{_short(before)} -> {_short(after)}"


def _side(replay: Replay) -> str:
    p = replay.image.provenance
    stop = stop_text(replay)
    text = f"offset {p.offset} ({iso(p.time)}) of {replay.directory}"
    return text + (f", partial: {stop}" if stop else "")


def text_lines(left: Replay, right: Replay, found: list[Difference]) -> list[str]:
    out = [f"{plural(len(found), 'difference')}"]
    out += textwrap.wrap(f"from {_side(left)}", WIDTH, initial_indent="  ", subsequent_indent="    ")
    out += textwrap.wrap(f"to {_side(right)}", WIDTH, initial_indent="  ", subsequent_indent="    ")
    section = None
    for d in found:
        if d.section != section:
            section = d.section
            out += ["", TITLES.get(section, section)]
        if d.kind == CHANGED:
            text = f"{MARKS[d.kind]} {d.key}: {_changed_fields(d.before, d.after)}"
        else:
            text = f"{MARKS[d.kind]} {d.key}: {_entry(d.after if d.kind == CREATED else d.before)}"
        out += textwrap.wrap(text, WIDTH, initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False)
    return out


def difference_row(d: Difference) -> dict:
    return {
        "type": "difference",
        "v": SCHEMA_VERSION,
        "section": d.section,
        "key": d.key,
        "kind": d.kind,
        "before": d.before,
        "after": d.after,
    }


def _image(replay: Replay) -> dict:
    p = replay.image.provenance
    return {"directory": replay.directory, "offset": p.offset, "time": p.time, "complete": not replay.partial}


def summary_row(left: Replay, right: Replay, found: list[Difference]) -> dict:
    return {
        "type": "diff",
        "v": SCHEMA_VERSION,
        "left": _image(left),
        "right": _image(right),
        "differences": len(found),
    }
