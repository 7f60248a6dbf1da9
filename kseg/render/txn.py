"""Text and JSON Lines for ``kseg txn`` (rows: ``transaction``, ``problem``, ``summary``).

JSON field names are camelCase like the rest of kseg's JSON (docs/json-output.md);
every row has ``type`` and ``partition``.
"""

from __future__ import annotations

import datetime
from types import MappingProxyType

from kseg.jsonlines import SCHEMA_VERSION, dumps
from kseg.ops.txn.audit import TxnProblem
from kseg.ops.txn.report import OPEN, Transaction, TxnReport
from kseg.storage import outcome

_MARKER = MappingProxyType({"committed": "COMMIT", "aborted": "ABORT"})


def iso(ms: int | None) -> str:
    """A millisecond timestamp as UTC ISO-8601 (``-`` when unknown)."""
    if ms is None or ms < 0:
        return "-"
    try:
        return (
            datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z")
        )
    except (OverflowError, OSError, ValueError):
        return str(ms)


def human(ms: int | None) -> str:
    """A duration in milliseconds as ``1h 2m 3s`` (``-`` when unknown)."""
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms} ms"
    s = ms // 1000
    parts = [(s // 86400, "d"), (s // 3600 % 24, "h"), (s // 60 % 60, "m"), (s % 60, "s")]
    shown = [f"{v}{u}" for v, u in parts if v]
    return " ".join(shown) or "0s"


def transaction_row(partition: str, t: Transaction) -> dict:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    return {
        "type": "transaction",
        "v": SCHEMA_VERSION,
        "partition": partition,
        "producerId": t.producer_id,
        "producerEpoch": t.producer_epoch,
        "firstOffset": t.first_offset,
        "lastOffset": t.last_offset,
        "records": t.records,
        "batches": t.batches,
        "outcome": t.outcome,
        "markerOffset": t.marker_offset,
        "coordinatorEpoch": t.coordinator_epoch,
        "firstTimestamp": t.first_timestamp,
        "lastTimestamp": t.last_timestamp,
        "markerTimestamp": t.marker_timestamp,
        "lastStableOffset": t.last_stable_offset,
        "openMs": t.open_ms,
        "idleMs": t.idle_ms,
        "hanging": t.hanging,
        "fromSnapshot": t.seeded,
    }


def problem_row(partition: str, p: TxnProblem) -> dict:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    return {
        "type": "problem",
        "v": SCHEMA_VERSION,
        "partition": partition,
        "segment": p.segment,
        "file": p.file,
        "kind": p.kind,
        "message": p.message,
        "position": p.position,
        "entry": p.entry,
        "expected": p.expected,
        "found": p.found,
        "command": p.command,
    }


def summary_row(r: TxnReport) -> dict:
    holder = r.lso_holder
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    return {
        "type": "summary",
        "v": SCHEMA_VERSION,
        "logDir": r.partition.log_dir,
        "partition": r.name,
        "path": r.partition.path,
        "fromStart": r.from_start,
        "startOffset": r.start_offset,
        "snapshot": r.snapshot,
        "logStartOffset": r.log_start,
        "logEndOffset": r.log_end,
        "highWatermark": r.high_watermark,
        "highWatermarkFile": r.high_watermark_file,
        "lastStableOffset": None if outcome.counts(r.reads) else r.last_stable_offset,
        "lsoHeldBy": None
        if holder is None
        else {
            "producerId": holder.producer_id,
            "producerEpoch": holder.producer_epoch,
            "firstOffset": holder.first_offset,
        },
        "latestTimestamp": r.latest_timestamp,
        "committed": r.committed,
        "aborted": r.aborted,
        "open": len(r.open),
        "hanging": len(r.hanging),
        "txnindexChecked": r.txnindex_checked,
        "txnindexNotChecked": r.txnindex_not_checked,
        "snapshotsChecked": r.snapshots_checked,
        "problems": len(r.problems),
        "notes": list(r.notes),
        "exitCode": r.exit_code,
        "notReadToEnd": [o.as_json() for o in r.reads if not o.complete],
    }


def transaction_line(t: Transaction) -> str:
    span = f"offsets {t.first_offset}..{t.last_offset if t.last_offset is not None else '?'}"
    counted = f"{t.records} record{'s' * (t.records != 1)} in {t.batches} batch{'es' * (t.batches != 1)}"
    head = (
        f"  {'HANGING' if t.hanging else t.outcome:<9} producer {t.producer_id} epoch {t.producer_epoch}  "
        f"{span} ({counted})  first {iso(t.first_timestamp)}"
    )
    if t.outcome == OPEN:
        return (
            head
            + (f"  open {human(t.open_ms)}" if t.open_ms is not None else "")
            + (f", last write {human(t.idle_ms)} before the latest" if t.idle_ms is not None else "")
        )
    return (
        f"{head}  {_MARKER[t.outcome]} at {t.marker_offset} coordinatorEpoch {t.coordinator_epoch} "
        f"{iso(t.marker_timestamp)}  lastStableOffset {t.last_stable_offset}"
    )


def header_line(r: TxnReport) -> str:
    start = (
        f"from snapshot {r.snapshot} (offset {r.start_offset})"
        if r.snapshot
        else f"from the log start (offset {r.start_offset})"
    )
    return f"{r.name}: log {r.log_start}..{r.log_end}, producer state {start}"


def problem_line(p: TxnProblem) -> str:
    where = p.file + (f": at byte {p.position}" if p.position is not None else "")
    text = f"  problem [{p.kind}] {where}: {p.message}"
    if p.expected is not None or p.found is not None:
        text += f"\n    expected: {p.expected or '(no entry)'}\n    found:    {p.found or '(no entry)'}"
    if p.command:
        text += f"\n    resolve with: {p.command}"
    return text


def _lso_cause(r: TxnReport) -> str:
    """What holds the last stable offset where it is, against the high watermark and the file it came from."""
    holder = r.lso_holder
    bound = (
        f"the high watermark {r.high_watermark} (from {r.high_watermark_file})"
        if r.high_watermark is not None
        else f"the log end offset {r.log_end} (standing in for the high watermark)"
    )
    if r.last_stable_offset == r.stable_bound:
        return f", {bound}: no transaction unstable below it"
    lag = f"{r.stable_bound - r.last_stable_offset} offsets below {bound}: read_committed consumers stop here"
    if holder is None:  # a completed transaction whose marker the high watermark has not passed
        return f", held by a transaction whose marker is at or above the high watermark (not yet replicated); {lag}"
    return (
        f", held by producer {holder.producer_id} (epoch {holder.producer_epoch}), open since "
        f"{iso(holder.first_timestamp)}" + (" -- HANGING" if holder.hanging else "") + f"; {lag}"
    )


def summary_lines(r: TxnReport) -> list[str]:
    unread = outcome.counts(r.reads)
    if unread:  # the last stable offset is a statement about the whole log: not given for unread bytes
        lso = f"  last stable offset: not known, {unread}; what follows counts the bytes read"
    else:
        lso = f"  last stable offset: {r.last_stable_offset}" + _lso_cause(r)
    lines = [
        lso,
        f"  transactions: {r.committed} committed, {r.aborted} aborted, {len(r.open)} open, "
        f"{len(r.hanging)} hanging; latest timestamp {iso(r.latest_timestamp)}",
        f"  .txnindex: {r.txnindex_checked} segment{'s' * (r.txnindex_checked != 1)} checked"
        + (
            f", {r.txnindex_not_checked} before the snapshot not checked (--from-start checks every one)"
            if r.txnindex_not_checked
            else ""
        )
        + f"; .snapshot files checked against the log: {r.snapshots_checked}",
    ]
    lines += [f"  note: {n}" for n in r.notes]
    lines.append(f"  {len(r.problems)} problem{'s' * (len(r.problems) != 1)}" if r.problems else "  no problems")
    return lines


def render_report_json(r: TxnReport) -> list[str]:
    """The rows after the completed transactions: open ones, problems, the summary."""
    return [
        dumps(row)
        for row in (
            [transaction_row(r.name, t) for t in r.open]
            + [problem_row(r.name, p) for p in r.problems]
            + [summary_row(r)]
        )
    ]


def render_report_text(r: TxnReport) -> list[str]:
    return [transaction_line(t) for t in r.open] + [problem_line(p) for p in r.problems] + summary_lines(r)
