"""Output of ``kseg salvage``: what was kept, each loss grouped by cause, the transactions the damage cut and
Kafka's recovery of the same log (text); the same as JSON Lines rows (docs/salvage.md)."""

from __future__ import annotations

import textwrap
from types import MappingProxyType
from typing import Any, Iterator

from kseg.jsonlines import SCHEMA_VERSION, dumps
from kseg.ops.salvage.model import (
    CAUSES,
    DAMAGED,
    DUPLICATE,
    OUT_OF_PLACE,
    OVERLAP,
    UNDECODABLE,
    Loss,
    Salvage,
    SegmentOutcome,
)
from kseg.words import plural

HEADINGS = MappingProxyType(
    {
        DAMAGED: "damaged bytes (no whole valid batch in them)",
        UNDECODABLE: "compressed batches whose CRC holds but whose records do not decode",
        OVERLAP: "batches overlapping offsets kept before them",
        OUT_OF_PLACE: "batches whose offsets do not fit their segment",
        DUPLICATE: "batches found twice (nothing lost)",
    }
)
WIDTH = 80  # columns of a text line
LOSS_INDENT = "    "
SNAPSHOTS = "Kafka rebuilds producer state from the log when it loads the partition"


def _offsets(first: int | None, last: int | None, open_end: bool = False) -> str:
    if first is None:
        return ""
    if last is None:
        return f"offsets from {first} on" if open_end else ""
    return f"offset {first}" if first == last else f"offsets {first} to {last}"


def loss_line(loss: Loss) -> str:
    where = f"{loss.segment}: from byte {loss.start} to byte {loss.end} ({plural(loss.end - loss.start, 'byte')})"
    if loss.cause == DAMAGED:
        missing = _offsets(loss.first, loss.last, open_end=True)
        around = f"; {missing} missing around it" if missing else "; no offset missing around it: it held no batch"
        return f"{where}: {loss.why}{around}"
    return f"{where}: {_offsets(loss.first, loss.last)}: {loss.why}"


def _segment_line(s: SegmentOutcome) -> str:
    kept = f"{plural(s.batches, 'batch')} kept"
    if s.batches:
        kept += f" ({_offsets(s.first_offset, s.last_offset)}, {plural(s.bytes, 'byte')})"
    if s.first_damage is None:
        return f"{s.log}: {kept}, read to its end ({plural(s.size, 'byte')})"
    return f"{s.log}: {kept} of {plural(s.size, 'byte')}; damage from byte {s.first_damage}"


def text_lines(r: Salvage, dry_run: bool) -> Iterator[str]:
    """The report, each line wrapped at 80 columns (a path is never split; a continuation is indented) but a
    loss's row: its file, byte range and cause stay on one line, for grep."""
    for line in _lines(r, dry_run):
        if len(line) <= WIDTH or line.startswith(LOSS_INDENT):
            yield line
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
        yield from textwrap.wrap(line, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def _lines(r: Salvage, dry_run: bool) -> Iterator[str]:
    for s in r.segments:
        yield _segment_line(s)
    if r.losses:
        yield ""
        yield "Lost, by cause:" if r.lost else "Found, by cause:"
        for cause in CAUSES:
            rows = [loss for loss in r.losses if loss.cause == cause]
            if not rows:
                continue
            yield f"  {HEADINGS[cause]}: {r.counts[cause]}"
            for loss in rows:
                yield f"{LOSS_INDENT}{loss_line(loss)}"
        more = sum(r.counts.values()) - len(r.losses)
        if more:
            yield f"  ({more} more not listed)"
    if r.txn_cuts or r.lso is not None:
        yield ""
        yield "Transactions:"
        for cut in r.txn_cuts:
            yield f"  producer {cut.producer_id}, from offset {cut.first}: {cut.what}"
        if r.lso is not None:
            yield f"  last stable offset of what was kept: {r.lso} (a transaction is open there)"
    yield ""
    yield from _kafka_lines(r)
    if r.skipped_before:
        yield f"{plural(r.skipped_before, 'batch')} below --from-offset left out"
    yield _summary(r, dry_run)
    if not dry_run and r.output is not None:
        left = (
            f"{plural(r.snapshots, 'producer snapshot')} not copied" if r.snapshots else "no producer snapshot written"
        )
        yield f"  ({left}: {SNAPSHOTS})"


def _kafka_lines(r: Salvage) -> Iterator[str]:
    if r.kafka_stop is None:
        yield "Kafka's recovery (LogSegment.recover) would read every segment to its end"
        return
    upto = f" (up to offset {r.kafka_last_offset})" if r.kafka_last_offset is not None else ""
    deleted = (
        f" and delete the {plural(r.kafka_deleted_segments, 'segment')} after it (LogLoader.recoverLog)"
        if r.kafka_deleted_segments
        else ""
    )
    yield (
        f"Kafka's recovery (LogSegment.recover) would stop at {r.kafka_stop}, keeping "
        f"{plural(r.kafka_batches, 'batch')}{upto}, truncate the rest of that segment{deleted}"
    )
    yield f"salvage keeps {plural(r.beyond_kafka, 'batch')} past that point"


def _summary(r: Salvage, dry_run: bool) -> str:
    lost = sum(n for cause, n in r.counts.items() if cause != DUPLICATE)
    what = f"{plural(lost, 'loss')}" if lost else "nothing lost"
    segments = sum(1 for s in r.segments if s.batches)
    kept = f"{plural(r.kept, 'batch')} kept in {plural(segments, 'segment')}"
    if dry_run or r.output is None:
        return f"summary: {kept}, {what}; --dry-run: nothing written"
    copied = f"; {', '.join(r.copied)} copied" if r.copied else ""
    return f"summary: {kept}, {what}; written to {r.output} with their indexes{copied}"


def json_rows(r: Salvage, dry_run: bool, code: int) -> Iterator[dict[str, Any]]:
    for s in r.segments:
        yield {
            "type": "segment",
            "v": SCHEMA_VERSION,
            "segment": s.log,
            "bytes": s.size,
            "batchesKept": s.batches,
            "recordsKept": s.records,
            "bytesKept": s.bytes,
            "firstOffset": s.first_offset,
            "lastOffset": s.last_offset,
            "firstDamage": s.first_damage,
            "written": s.written,
        }
    for loss in r.losses:
        yield {
            "type": "loss",
            "v": SCHEMA_VERSION,
            "cause": loss.cause,
            "segment": loss.segment,
            "start": loss.start,
            "end": loss.end,
            "why": loss.why,
            "firstOffset": loss.first,
            "lastOffset": loss.last,
            "lost": loss.lost,
        }
    for cut in r.txn_cuts:
        yield {
            "type": "transaction",
            "v": SCHEMA_VERSION,
            "producerId": cut.producer_id,
            "firstOffset": cut.first,
            "markerLost": cut.marker_lost,
            "what": cut.what,
        }
    yield {
        "type": "summary",
        "v": SCHEMA_VERSION,
        "source": r.source,
        "output": None if dry_run else r.output,
        "batchesKept": r.kept,
        "losses": dict(r.counts),
        "lastStableOffset": r.lso,
        "skippedBeforeFromOffset": r.skipped_before,
        "kafkaRecoveryStop": r.kafka_stop,
        "kafkaRecoveryBatches": r.kafka_batches,
        "kafkaDeletedSegments": r.kafka_deleted_segments,
        "keptBeyondKafkaRecovery": r.beyond_kafka,
        "copied": r.copied,
        "producerSnapshotsNotCopied": r.snapshots,
        "exitCode": code,
    }


def json_lines(r: Salvage, dry_run: bool, code: int) -> Iterator[str]:
    for row in json_rows(r, dry_run, code):
        yield dumps(row)
