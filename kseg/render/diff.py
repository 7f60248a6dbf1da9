"""Rows and text for ``kseg diff``: ``replica`` rows (one per replica) then a ``summary`` row
per replica set.  The text is rendered from the rows, so ``--spark`` (whose tasks send rows
back) prints exactly what the local command prints.  Every row has ``type`` and ``partition``;
field names are camelCase (docs/json-output.md)."""

from __future__ import annotations

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.diff.diff import BatchKey, DiffResult, Replica
from kseg.storage.leader_epochs import EpochEntry, epoch_at
from kseg.words import noun, plural


def _batch(key: BatchKey | None) -> dict | None:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    if key is None:
        return None
    return {
        "segment": key.segment,
        "position": key.position,
        "baseOffset": key.base_offset,
        "lastOffset": key.last_offset,
        "partitionLeaderEpoch": key.leader_epoch,
        "crc": key.crc,
        "count": key.record_count,
        "magic": key.magic,
        "isValid": key.valid,
    }


def replica_row(name: str, rep: Replica) -> dict:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    return {
        "type": "replica",
        "v": SCHEMA_VERSION,
        "logDir": rep.partition.log_dir,
        "partition": name,
        "replica": rep.index,
        "path": rep.path,
        "logStartOffset": rep.log_start,
        "logEndOffset": rep.log_end,
        "batches": rep.batches,
        "records": rep.records,
        "status": rep.status,
        "lag": rep.lag,
        "onlyHere": [
            {"firstOffset": r.first_offset, "lastOffset": r.last_offset, "records": r.records, "batches": r.batches}
            for r in rep.only_here
        ],
        "onlyHereRecords": sum(r.records for r in rep.only_here),
        "damaged": [
            {
                "segment": k.segment,
                "position": k.position,
                "size": k.size,
                "baseOffset": k.base_offset,
                "lastOffset": k.last_offset,
            }
            for k in rep.damaged
        ],
        "damagedBatches": rep.damaged_batches,
        "batchBeforeDivergence": _batch(rep.before_divergence),
        "batchAtDivergence": _batch(rep.at_divergence),
        "leaderEpochs": None
        if rep.epochs is None
        else [{"epoch": e.epoch, "startOffset": e.start_offset} for e in rep.epochs],
        "leaderEpochsError": rep.epochs_error,
        "truncateTo": rep.truncate_to,
        "lostRecords": rep.lost_records,
        "stopped": rep.stopped,
        "read": None if rep.read is None else rep.read.as_json(),
    }


def summary_row(res: DiffResult) -> dict:
    return {
        "type": "summary",
        "v": SCHEMA_VERSION,
        "partition": res.name,
        "replicas": len(res.replicas),
        "status": res.status,
        "firstDivergentOffset": res.first_divergent_offset,
        "leader": res.leader,
        "differences": list(res.differences),
        "commonStartOffset": res.common_start,
        "notes": list(res.notes),
        "exitCode": res.exit_code,
    }


def rows(res: DiffResult) -> list[dict]:
    return [replica_row(res.name, r) for r in res.replicas] + [summary_row(res)]


def _epoch_at(epochs: list | None, offset: int) -> int | None:
    """:func:`kseg.storage.leader_epochs.epoch_at` of a row's ``leaderEpochs`` (rows may come back from Spark)."""
    return epoch_at([EpochEntry(e["epoch"], e["startOffset"]) for e in epochs or ()], offset)


def _b(b: dict | None) -> str:
    if b is None:
        return "none"
    return (
        f"batch {b['baseOffset']}..{b['lastOffset']} epoch {b['partitionLeaderEpoch']} crc {b['crc']} "
        f"count {b['count']}" + ("" if b["isValid"] else " (CRC does not hold)")
    )


def _status(r: dict) -> str:
    """A replica's status in words: one stopped by corruption is ``unreadable from offset N: <reason>``
    (N the offset after the last one read), never "lagging"."""
    if r["status"] == "unreadable":
        return f"unreadable from offset {r['logEndOffset']}: {r['stopped']}"
    if r["status"] == "agrees-where-read":
        return "agrees with the others where they were read"
    if r["status"] == "damaged":
        n = r["damagedBatches"]
        return f"damaged: {plural(n, 'batch')} whose CRC does not hold"
    return r["status"]


def _damaged_lines(r: dict) -> list[str]:
    """A replica's batches whose CRC does not hold, each with its segment and byte range, then the count of
    those not listed."""
    listed = r.get("damaged") or []
    out = [
        f"    damaged: batch {b['baseOffset']}..{b['lastOffset']} in {b['segment']} at bytes {b['position']}.."
        f"{b['position'] + b['size']}: its CRC does not hold"
        for b in listed
    ]
    more = (r.get("damagedBatches") or 0) - len(listed)
    if more > 0:
        out.append(f"    damaged: {more} more {noun(more, 'batch')} whose CRC does not hold (not listed)")
    return out


def text_lines(set_rows: list[dict]) -> list[str]:
    """The text report of one replica set, from its rows."""
    summary = set_rows[-1]
    reps = set_rows[:-1]
    d = summary["firstDivergentOffset"]
    head = {
        "identical": "identical",
        "lagging": "identical up to the shortest replica (lagging, not divergent)",
        "divergent": f"DIVERGENT from offset {d}",
        "damaged": "DAMAGED in a copy (batches whose CRC does not hold), the rest agrees",
        "incomplete": "NOT COMPARED TO THE END: a replica could not be read past a corrupt or partial batch "
        "(what was read agrees)",
    }[summary["status"]]
    out = [f"{summary['partition']}: {summary['replicas']} replicas, {head}"]
    for r in reps:
        line = (
            f"  replica {r['replica']} {r['path']}: log {r['logStartOffset']}..{r['logEndOffset']}, "
            f"{r['records']} records in {r['batches']} batches, " + _status(r)
        )
        if r["lag"] and r["status"] in ("lagging", "divergent", "damaged"):
            line += (
                f", {r['lag']} offsets behind"
                if r["status"] in ("lagging", "damaged")
                else f", its log ends {r['lag']} offsets before the longest"
            )
        out.append(line)
        if r["leaderEpochs"] is not None:
            out.append(
                "    leader-epoch-checkpoint: "
                + (", ".join(f"epoch {e['epoch']} from {e['startOffset']}" for e in r["leaderEpochs"]) or "empty")
            )
        elif r["leaderEpochsError"]:
            out.append(f"    leader-epoch-checkpoint unreadable: {r['leaderEpochsError']}")
        if d is not None and r["batchAtDivergence"] is not None:
            before = r["batchBeforeDivergence"]
            out.append(f"    before {d}: {_b(before)}")
            out.append(
                f"    at {d}:     {_b(r['batchAtDivergence'])}"
                + (f" (checkpoint: epoch {_epoch_at(r['leaderEpochs'], d)})" if r["leaderEpochs"] else "")
            )
        out.extend(_damaged_lines(r))
        for o in r["onlyHere"]:
            out.append(
                f"    only here: offsets {o['firstOffset']}..{o['lastOffset']} ({o['records']} records "
                f"in {o['batches']} batch{'es' * (o['batches'] != 1)})"
            )
        if r["stopped"] and r["status"] != "unreadable":
            out.append(f"    reading stopped: {r['stopped']}")
    if summary["differences"]:
        line = f"  first divergent offset {d}: {', '.join(summary['differences'])} differ"
        if summary["differences"] == ["isValid"]:
            line += " (the stored CRCs agree: a copy damaged on disk, not different data)"
        out.append(line)
    leader = summary["leader"]
    if leader is not None:
        for r in reps:
            if r["truncateTo"] is not None:
                out.append(
                    f"  following replica {leader} (highest leader epoch), replica {r['replica']} truncates to "
                    f"offset {r['truncateTo']} (OffsetsForLeaderEpoch) and loses {r['lostRecords']} records "
                    f"({r['truncateTo']}..{r['logEndOffset'] - 1})"
                    if r["lostRecords"]
                    else f"  following replica {leader} (highest leader epoch), replica {r['replica']} truncates to "
                    f"offset {r['truncateTo']} and loses nothing"
                )
    for note in summary["notes"]:
        out.append(f"  note: {note}")
    return out
