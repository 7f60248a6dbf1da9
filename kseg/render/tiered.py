"""Rows and text for ``kseg tiered`` (docs/tiered-metadata.md): a ``partition`` row per topic-partition, a
``segment`` row per remote segment the metadata holds, an ``orphan`` row per segment whose objects no
finished metadata holds, and one ``summary`` row (camelCase fields, docs/json-output.md)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.tiered.keys import expected_key
from kseg.ops.tiered.reconcile import Orphan, PartitionCheck, finished
from kseg.ops.tiered.run import TieredReport
from kseg.ops.tiered.state import RemoteSegment
from kseg.storage import files
from kseg.words import plural

#: Each problem kind's cause, as the text's by-cause lines name it (docs/tiered-metadata.md, "The checks").
CAUSES = MappingProxyType(
    {
        "transition": "metadata events Kafka refuses or drops",
        "undecodable": "records no RemoteLogMetadataSerde reads",
        "overlap": "finished segments holding the same offsets",
        "gap": "offsets between finished segments in no remote segment",
        "missing": "finished segments whose objects are not at their keys: data loss",
        "size": "objects not of the size the metadata or manifest states",
        "manifest": "manifests the RSM cannot read",
        "orphan": "objects at no key a finished segment is fetched from",
        "local-gap": "offsets neither remote nor local",
        "log-start": "a log start offset below what is held",
    }
)
FIRST_PLACES = 3


def _object_key(check: PartitionCheck, seg: RemoteSegment, report: TieredReport) -> str:
    """The listed ``.log`` object when the store was listed and holds it, else the expected key."""
    for obj in check.objects.get(seg.segment_id, []):
        if obj.key.suffix == "log":
            return obj.path
    return expected_key(check.tp, seg, report.layout, report.store)


def segment_row(check: PartitionCheck, seg: RemoteSegment, report: TieredReport) -> dict[str, Any]:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    tp, custom = check.tp, seg.custom
    objects = check.objects.get(seg.segment_id) if report.store is not None else None
    return {
        "type": "segment",
        "v": SCHEMA_VERSION,
        "partition": tp.name,
        "topicId": tp.topic_id,
        "segmentId": seg.segment_id,
        "state": seg.state,
        "startOffset": seg.start,
        "endOffset": seg.end,
        "leaderEpochs": [{"epoch": e, "startOffset": o} for e, o in seg.epochs.items()],
        "segmentSizeInBytes": seg.size,
        "remoteSize": None if custom is None else custom.remote_size,
        "brokerId": seg.broker,
        "maxTimestamp": seg.max_timestamp,
        "eventTimestamp": seg.event_timestamp,
        "txnIndexEmpty": seg.txn_index_empty,
        "objectKey": _object_key(check, seg, report),
        "objects": None if objects is None else len(objects),
        "objectBytes": None if objects is None else sum(o.size for o in objects),
        "metadata": seg.record,
        "lastUpdate": seg.updated,
    }


def partition_row(check: PartitionCheck) -> dict[str, Any]:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    tp = check.tp
    done = finished(tp)
    return {
        "type": "partition",
        "v": SCHEMA_VERSION,
        "partition": tp.name,
        "topic": tp.topic,
        "topicId": tp.topic_id,
        "metadataPartition": tp.metadata_partition or None,
        "segments": len(tp.segments),
        "finishedSegments": len(done),
        "deletedSegments": tp.deleted_count,
        "startOffset": min((s.start for s in done), default=None),
        "endOffset": max((s.end for s in done), default=None),
        "bytes": sum(s.size for s in done),
        "deleteState": tp.delete_state,
        "localLogStartOffset": check.local_start,
        "logStartOffset": check.log_start,
        "orphanObjects": sum(len(o.objects) for o in check.orphans),
        "orphanBytes": check.orphan_bytes,
        "status": check.status,
        "problems": [{"kind": p.kind, "text": p.text} for p in check.problems],
    }


def orphan_row(check: PartitionCheck, orphan: Orphan) -> dict[str, Any]:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    return {
        "type": "orphan",
        "v": SCHEMA_VERSION,
        "partition": check.tp.name,
        "topicId": check.tp.topic_id,
        "segmentId": orphan.segment_id,
        "state": orphan.state,
        "objects": [o.path for o in orphan.objects],
        "bytes": orphan.bytes,
        "judged": check.known,
    }


def summary_row(report: TieredReport) -> dict[str, Any]:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    store, local = report.store, report.log_dir
    read = report.read
    return {
        "type": "summary",
        "v": SCHEMA_VERSION,
        "metadataPartitions": read.partitions,
        "records": read.fold.records,
        "topicPartitions": len(report.checks),
        "segments": sum(len(c.tp.segments) for c in report.checks),
        "store": None if store is None else store.root,
        "objects": None if store is None else store.objects,
        "otherObjects": None if store is None else store.other_objects,
        "orphanObjects": report.orphan_objects,
        "orphanBytes": report.orphan_bytes,
        "localLogDir": None if local is None else files.absolute(local.path, store=local.store),
        "problems": report.problems,
        "notRead": [r.as_json() for r in read.reads if not r.complete],
        "errors": report.errors,
        "exitCode": report.exit_code(),
    }


def rows(report: TieredReport) -> list[dict[str, Any]]:
    """Per topic-partition its row, its segments' rows and its orphans' rows; then the summary."""
    out: list[dict[str, Any]] = []
    for check in report.checks:
        out.append(partition_row(check))
        out.extend(segment_row(check, seg, report) for seg in check.tp.live())
        out.extend(orphan_row(check, orphan) for orphan in check.orphans)
    out.append(summary_row(report))
    return out


def _size(n: int) -> str:
    """``1234 bytes``, ``5.0 MiB``: the orphans' cost at a glance (the rows keep bytes)."""
    if n < 1024:
        return f"{n} bytes"
    value, units = n / 1024, ["KiB", "MiB", "GiB", "TiB"]
    while value >= 1024 and len(units) > 1:
        value, units = value / 1024, units[1:]
    return f"{value:.1f} {units[0]}"


def text_lines(report: TieredReport) -> list[str]:
    """A block per topic-partition: its line, a line per segment, a line per problem."""
    lines = []
    for check in report.checks:
        tp = check.tp
        row = partition_row(check)
        span = "-" if row["startOffset"] is None else f"{row['startOffset']}-{row['endOffset']}"
        deleted = f", partition {tp.delete_state}" if tp.delete_state else ""
        if not check.known:
            deleted += " (its metadata partition was not read to its end: not judged)"
        lines.append(
            f"{tp.name} ({tp.topic_id}, {tp.metadata_partition or 'no metadata'}): {check.status}, "
            f"{row['finishedSegments']} of {row['segments']} segments finished, offsets {span}, "
            f"{_size(row['bytes'])}{deleted}"
        )
        for seg in tp.live():
            epochs = ",".join(f"{e}@{o}" for e, o in seg.epochs.items())
            lines.append(
                f"  {seg.segment_id} {seg.state} {seg.start}-{seg.end} epochs {epochs} {seg.size} bytes "
                f"{_object_key(check, seg, report)}"
            )
        lines.extend(f"  {p.kind}: {p.text}" for p in check.problems)
        if not check.known:
            lines.extend(
                f"  segment {o.segment_id}: {plural(len(o.objects), 'object')}, {plural(o.bytes, 'byte')}"
                for o in check.orphans
            )
    lines.extend(f"undecodable: {text}" for text in report.problems)
    return lines + cause_lines(report)


def cause_lines(report: TieredReport) -> list[str]:
    """The problems grouped by cause: per kind its count and the first topic-partitions it is in (with
    their counts), in the order of :data:`CAUSES`; nothing when there is none."""
    places: dict[str, dict[str, int]] = {}
    for check in report.checks:
        if not check.known:
            continue
        for p in check.problems:
            where = places.setdefault(p.kind, {})
            where[check.tp.name] = where.get(check.tp.name, 0) + 1
    if report.problems:
        places.setdefault("undecodable", {})["__remote_log_metadata"] = len(report.problems)
    if not places:
        return []
    lines = ["problems by cause:"]
    for kind in sorted(places, key=lambda k: list(CAUSES).index(k) if k in CAUSES else len(CAUSES)):
        where = places[kind]
        first = ", ".join(f"{name} ({n})" for name, n in list(where.items())[:FIRST_PLACES])
        more = len(where) - FIRST_PLACES
        first += f" and {plural(more, 'more topic-partition')}" if more > 0 else ""
        lines.append(f"  {kind}: {plural(sum(where.values()), 'problem')}, {CAUSES.get(kind, kind)}: {first}")
    return lines


def summary_line(report: TieredReport) -> str:
    row = summary_row(report)
    problems = sum(len(c.problems) for c in report.checks if c.known) + len(report.problems)
    parts = [
        f"{plural(len(row['metadataPartitions']), 'metadata partition')}, {plural(row['records'], 'record')}",
        f"{plural(row['topicPartitions'], 'topic-partition')}, {plural(row['segments'], 'remote segment')}",
    ]
    if report.store is not None:
        parts.append(
            f"{plural(row['objects'], 'object')} listed, {plural(row['orphanObjects'], 'orphan')} "
            f"({_size(row['orphanBytes'])})"
        )
    verdict = "problems" if report.has_problems else "clean"
    if report.errors or row["notRead"]:
        verdict = "not all read: no verdict for what was not"
    return f"kseg tiered: {'; '.join(parts)}; {plural(problems, 'problem')}: {verdict}"
