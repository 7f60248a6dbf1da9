"""Rows and text for ``kseg compaction``: a ``segment`` row per segment, a ``summary`` row per
partition (camelCase fields, docs/json-output.md)."""

from __future__ import annotations

from types import MappingProxyType

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.compaction.compaction import BOTH, CLEANED, DIRTY, CompactionReport, SegmentTombstones
from kseg.render.txn import human, iso
from kseg.storage import outcome


def _n(count: int, word: str, plural: str | None = None) -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def overdue(s: SegmentTombstones, report: CompactionReport) -> bool:
    """Tombstones or markers older than delete.retention.ms that no cleaning has given a horizon."""
    oldest = min((t for t in (s.oldest_tombstone, s.oldest_control) if t is not None), default=None)
    return s.without_horizon > 0 and oldest is not None and report.at - oldest > report.delete_retention_ms


def segment_row(report: CompactionReport, s: SegmentTombstones) -> dict:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    return {
        "type": "segment",
        "v": SCHEMA_VERSION,
        "logDir": report.partition.log_dir,
        "partition": report.partition.name,
        "segment": s.segment.name,
        "path": s.segment.log,
        "tombstones": s.tombstones,
        "tombstoneBatches": s.tombstone_batches,
        "oldestTombstoneTimestamp": s.oldest_tombstone,
        "newestTombstoneTimestamp": s.newest_tombstone,
        "controlBatches": s.control_batches,
        "commitMarkers": s.commit_markers,
        "abortMarkers": s.abort_markers,
        "oldestControlTimestamp": s.oldest_control,
        "withDeleteHorizon": s.with_horizon,
        "pastDeleteHorizon": s.past_horizon,
        "withoutDeleteHorizon": s.without_horizon,
        "minDeleteHorizonMs": s.min_horizon,
        "maxDeleteHorizonMs": s.max_horizon,
        "legacyTombstones": s.legacy_tombstones,
        "lastModifiedMs": s.modified_ms,
        "olderThanRetentionWithoutHorizon": overdue(s, report),
        "stopped": s.stopped,
        "read": s.read.as_json() if s.read is not None else None,
        "section": s.section,
    }


def summary_row(report: CompactionReport) -> dict:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    segs = report.segments
    return {
        "type": "summary",
        "v": SCHEMA_VERSION,
        "logDir": report.partition.log_dir,
        "partition": report.partition.name,
        "at": report.at,
        "deleteRetentionMs": report.delete_retention_ms,
        "segments": len(segs),
        "tombstones": sum(s.tombstones for s in segs),
        "controlBatches": sum(s.control_batches for s in segs),
        "legacyTombstones": sum(s.legacy_tombstones for s in segs),
        "pastDeleteHorizon": sum(s.past_horizon for s in segs),
        "withoutDeleteHorizon": sum(s.without_horizon for s in segs),
        "segmentsOlderThanRetentionWithoutHorizon": sum(overdue(s, report) for s in segs),
        "segmentsNotReadToEnd": sum(1 for s in segs if s.read is not None and not s.read.complete),
        "logStartOffset": report.log_start.offset if report.log_start else None,
        "logStartOffsetFile": report.log_start.file if report.log_start else None,
        "cleanerCheckpoint": report.cleaner.value if report.cleaner else None,
        "cleanerCheckpointFile": report.cleaner.file if report.cleaner and report.cleaner.value is not None else None,
        "firstDirtyOffset": report.first_dirty,
        "notes": list(report.notes),
    }


def text_lines(report: CompactionReport) -> list[str]:
    out = [
        f"{report.partition.name}: at {iso(report.at)}, delete.retention.ms {report.delete_retention_ms} "
        f"({human(report.delete_retention_ms)})"
    ]
    out += _dirty_line(report)
    for s in report.segments:
        lines = _segment_lines(report, s)
        section = [f"    {_SECTION[s.section].format(report.first_dirty)}"] if s.section is not None else []
        out += lines[:1] + section + lines[1:]
    row = summary_row(report)
    unread = row["segmentsNotReadToEnd"]
    out.append(
        f"  total{' in the bytes read' if unread else ''}: {_n(row['tombstones'], 'tombstone')}, "
        f"{_n(row['controlBatches'], 'control batch', 'control batches')}, "
        f"{_n(row['pastDeleteHorizon'], 'batch', 'batches')} past their delete horizon, "
        f"{row['withoutDeleteHorizon']} without one"
        + (f"; {outcome.counts(s.read for s in report.segments)}" if unread else "")
    )
    out += [f"  note: {n}" for n in report.notes]
    return out


def _segment_lines(report: CompactionReport, s: SegmentTombstones) -> list[str]:
    """One segment's lines: what it holds, its delete horizons, whether the cleaner is overdue."""
    out: list[str] = []
    if s.read is not None and s.read.failed:  # nothing to count: the OS refused the read
        return [f"  {s.segment.name}: FAILED ({s.read.summary()}): {s.read.describe()}"]
    parts = []
    if s.tombstones and s.oldest_tombstone is not None:  # a tombstone counted has its batch's time
        parts.append(
            f"{_n(s.tombstones, 'tombstone')} in {_n(s.tombstone_batches, 'batch', 'batches')} (oldest "
            f"{iso(s.oldest_tombstone)}, {human(report.at - s.oldest_tombstone)} old)"
        )
    if s.control_batches and s.oldest_control is not None:  # as is a control batch counted
        parts.append(
            f"{_n(s.control_batches, 'control batch', 'control batches')} "
            f"({s.commit_markers} COMMIT, {s.abort_markers} ABORT; "
            f"oldest {iso(s.oldest_control)}, {human(report.at - s.oldest_control)} old)"
        )
    if s.legacy_tombstones:
        parts.append(f"{_n(s.legacy_tombstones, 'v0/v1 tombstone')} (segment modified {iso(s.modified_ms)})")
    if s.read is not None and not s.read.complete:  # a count of what was read, never a verdict on the rest
        out.append(f"  {s.segment.name}: NOT READ TO ITS END ({s.read.summary()}): {s.read.describe()}")
        if parts:
            out.append("    in the bytes read: " + "; ".join(parts))
    elif not parts:
        return [f"  {s.segment.name}: no tombstones, no control batches"]
    else:
        out.append(f"  {s.segment.name}: " + "; ".join(parts))
    if s.with_horizon or s.without_horizon:
        line = f"    delete horizon: {_n(s.with_horizon, 'batch', 'batches')} carry one"
        if s.with_horizon:
            line += (
                f" ({iso(s.min_horizon)}..{iso(s.max_horizon)}; {s.past_horizon} past it: "
                "the next cleaning removes them)"
            )
        line += f", {s.without_horizon} without (the next cleaning sets one at its time + delete.retention.ms)"
        out.append(line)
    if overdue(s, report):
        out.append(
            "    older than delete.retention.ms and never given a horizon: if the topic is compacted, "
            "the cleaner has not cleaned this segment (min.cleanable.dirty.ratio, is it running?)"
        )
    return out


_SECTION = MappingProxyType(
    {
        CLEANED: "cleaned section (below the first dirty offset {})",
        DIRTY: "dirty section (the next cleaning reads it)",
        BOTH: "cleaned below offset {0}, dirty from offset {0}",
    }
)


def _dirty_line(report: CompactionReport) -> list[str]:
    """Where the dirty section starts (``cleaner-offset-checkpoint``), and the file it came from."""
    if report.cleaner is None:  # not looked for (a report built by hand)
        return []
    if report.first_dirty is None:
        return ["  dirty section: not known (no cleaner checkpoint read; see the note)"]
    c = report.cleaner
    if c is not None and c.value == report.first_dirty:
        return [f"  dirty section: from offset {report.first_dirty} (the cleaner checkpoint, from {c.file})"]
    start = report.log_start
    source = f", from {start.file}" if start is not None and start.file else ""
    return [f"  dirty section: from offset {report.first_dirty} (the log start offset{source}; see the note)"]
