"""Rows and text for ``kseg logdir``: a ``logdir`` row per log directory, a ``partition`` row per partition
directory (camelCase fields, docs/json-output.md); a value is ``null`` when the file holding it is absent."""

from __future__ import annotations

from typing import Any

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.logdir.logdir import LogDirReport, PartitionReport
from kseg.words import noun, plural


def logdir_row(report: LogDirReport) -> dict[str, Any]:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    meta = report.meta
    return {
        "type": "logdir",
        "v": SCHEMA_VERSION,
        "logDir": report.path,
        "clusterId": meta.cluster_id if meta else None,
        "nodeId": meta.node_id if meta else None,
        "directoryId": meta.directory_id if meta else None,
        "cleanShutdown": {"brokerEpoch": report.broker_epoch} if report.clean_shutdown else None,
        "checkpoints": report.checkpoints,
        "problems": report.problems,
    }


def partition_row(part: PartitionReport) -> dict[str, Any]:
    # a JSON row: one field a line in docs/json-output.md's order; alike other commands' rows in shape only
    log = part.log
    return {
        "type": "partition",
        "v": SCHEMA_VERSION,
        "logDir": part.log_dir,
        "partition": part.name,
        "topicId": part.topic_id,
        "logStartOffset": part.log_start,
        "logEndOffset": log.log_end,
        "highWatermark": part.high_watermark,
        "recoveryPoint": part.recovery_point,
        "cleanerCheckpoint": part.cleaner,
        "leaderEpoch": part.leader_epoch,
        "segments": log.segments,
        "bytes": log.bytes,
        "firstTimestamp": log.first_timestamp,
        "lastTimestamp": log.last_timestamp,
        "status": part.status,
        "problems": part.problems,
    }


def rows(report: LogDirReport) -> list[dict[str, Any]]:
    """The log directory's row, then one per partition."""
    return [logdir_row(report), *(partition_row(p) for p in report.partitions)]


def _value(v: object) -> str:
    return "-" if v is None else str(v)


def text_lines(report: LogDirReport) -> list[str]:
    """A log directory as text: its line, its problems, then a line per partition with its problems."""
    meta = report.meta
    shutdown = "no .kafka_cleanshutdown"
    if report.clean_shutdown:
        shutdown = "clean shutdown" + (
            f" (broker epoch {report.broker_epoch})" if report.broker_epoch is not None else ""
        )
    out = [
        f"{report.path}: cluster {_value(meta and meta.cluster_id)}, node {_value(meta and meta.node_id)}, "
        f"directory {_value(meta and meta.directory_id)}, {shutdown}; checkpoints: "
        f"{', '.join(report.checkpoints) or 'none'}; {len(report.partitions)} partition"
        f"{'s' * (len(report.partitions) != 1)}"
    ]
    out.extend(f"  PROBLEM {p}" for p in report.problems)
    for part in report.partitions:
        log = part.log
        out.append(
            f"  {part.name}: {part.status}; topic ID {_value(part.topic_id)}, log start {_value(part.log_start)}, "
            f"log end {_value(log.log_end)}, high watermark {_value(part.high_watermark)}, recovery point "
            f"{_value(part.recovery_point)}, cleaner {_value(part.cleaner)}, leader epoch {_value(part.leader_epoch)}, "
            f"{log.segments} segment{'s' * (log.segments != 1)}, {log.bytes} bytes"
        )
        out.extend(f"    PROBLEM {p}" for p in part.problems)
    return out


def summary_line(reports: list[LogDirReport]) -> str:
    """``2 log directories, 40 partitions: 38 clean, 1 with problems, 1 failed; 3 directory problems``."""
    parts = [p for r in reports for p in r.partitions]
    by = {s: sum(1 for p in parts if p.status == s) for s in ("clean", "problems", "failed")}
    dir_problems = sum(len(r.problems) for r in reports)
    return (
        f"{len(reports)} log {noun(len(reports), 'directory')}, {plural(len(parts), 'partition')}: "
        f"{by['clean']} clean, {by['problems']} with problems, {by['failed']} failed; "
        f"{dir_problems} log-directory {noun(dir_problems, 'problem')}"
    )
