"""``kseg metadata --history``: each change of a partition's registration as a line (what changed, old ->
new, and the records that made it) or a ``change`` JSON row, then a ``history`` row saying how far the
replay went (docs/metadata.md)."""

from __future__ import annotations

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.metadata.history import Change
from kseg.ops.metadata.image import PartitionState
from kseg.ops.metadata.image import b64 as uuid
from kseg.ops.metadata.read import Replay
from kseg.render.metadata import RECOVERY_STATES, halt_json, partition_json
from kseg.render.metadata_text import WIDTH, headline
from kseg.render.txn import iso
from kseg.words import plural


def _ids(values: tuple[int, ...]) -> str:
    return ",".join(map(str, values)) or "-"


def _fields(p: PartitionState) -> dict[str, str]:
    return {
        "leader": f"{p.leader} (epoch {p.leader_epoch})",
        "replicas": _ids(p.replicas),
        "isr": _ids(p.isr),
        "elr": _ids(p.elr),
        "last known elr": _ids(p.last_known_elr),
        "adding": _ids(p.adding),
        "removing": _ids(p.removing),
        "recovery": RECOVERY_STATES.get(p.leader_recovery_state, str(p.leader_recovery_state)),
        "directories": " ".join(uuid(d) for d in p.directories) or "-",
        "partition epoch": str(p.partition_epoch),
    }


def what_changed(c: Change) -> tuple[str, list[str]]:
    """``created``/``removed`` with the registration, or ``changed`` and each field as ``name old -> new``."""
    if c.before is not None and c.after is not None:
        old, new = _fields(c.before), _fields(c.after)
        return "changed", [f"{k} {old[k]} -> {new[k]}" for k in old if old[k] != new[k]]
    state = c.after if c.before is None else c.before
    assert state is not None
    always = ("leader", "replicas", "isr", "partition epoch")
    shown = [f"{k} {v}" for k, v in _fields(state).items() if k in always or v != "-"]
    if all(d == bytes(16) for d in state.directories):
        shown = [s for s in shown if not s.startswith("directories")]
    if state.leader_recovery_state == 0:
        shown = [s for s in shown if not s.startswith("recovery")]
    return ("created" if c.before is None else "removed, its topic deleted"), shown


def text_lines(replay: Replay, asked: str, changes: list[Change]) -> list[str]:
    out = [f"History of {asked}: {plural(len(changes), 'change')}", *headline(replay)]
    for c in changes:
        kind, fields = what_changed(c)
        out += ["", f"  offset {c.offset}  {iso(c.time)}  {c.topic}-{c.partition} {kind}"]
        out.extend(_wrapped("      " + "  ".join(fields)))
        made = ", ".join(f"{name} at {at}" if at is not None else f"{name} (snapshot)" for at, name in c.records)
        out.extend(_wrapped(f"      by {made or 'the delta'}; topic ID {uuid(c.topic_id)}"))
    return out


def _wrapped(text: str) -> list[str]:
    import textwrap

    return textwrap.wrap(text, WIDTH, subsequent_indent=" " * 8, break_on_hyphens=False)


def change_row(c: Change) -> dict:
    return {
        "type": "change",
        "v": SCHEMA_VERSION,
        "topic": c.topic,
        "topicId": uuid(c.topic_id),
        "partition": f"{c.topic}-{c.partition}",  # as everywhere in kseg: the partition's name
        "partitionId": c.partition,
        "offset": c.offset,
        "time": c.time,
        "records": [{"offset": offset, "record": name} for offset, name in c.records],
        "before": None if c.before is None else partition_json(c.partition, c.before),
        "after": None if c.after is None else partition_json(c.partition, c.after),
    }


def summary_row(replay: Replay, asked: str, changes: list[Change]) -> dict:
    damaged = replay.damaged
    return {
        "type": "history",
        "v": SCHEMA_VERSION,
        "asked": asked,
        "changes": len(changes),
        "offset": replay.image.provenance.offset,
        "snapshot": None if replay.snapshot is None else replay.snapshot.path,
        "complete": not replay.partial,
        "stoppedAt": None if damaged is None else damaged.as_json(),
        "halted": halt_json(replay),
    }
