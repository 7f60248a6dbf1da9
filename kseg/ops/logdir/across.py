"""The rules that need more than one partition directory or log directory, judged once every partition is
read (on the driver with ``--spark``): what a broker starting on these log directories, or the controller
it registers with, refuses.

* **One partition, two directories on one node** (``LogManager.loadLog``: "Duplicate log directories for
  <tp> are found in both ..."; the broker stops): ``orders-0`` beside ``orders-00``, ``orders-+0`` or
  ``orders-٠`` (``UnifiedLog.parseTopicPartitionName`` reads the partition with ``Integer.parseInt``), or
  ``orders-0`` in two log directories of one node.
* **meta.properties across log directories**: a v1 file without ``cluster.id``, a reserved
  ``directory.id`` (``DirectoryId.reserved``: below 100), a ``directory.id`` in two log directories, a
  ``node.id`` differing between one broker's log directories (``MetaPropertiesEnsemble.verify``), a
  ``cluster.id`` differing between the log directories given (``MetaPropertiesEnsemble.verify`` for one
  broker's, ``ClusterControlManager.registerBroker`` for two brokers': the controller refuses a directory
  ID another broker registered, and a broker of another cluster).
* **Topic IDs** (``partition.metadata``): a topic has one ID; a partition directory holding another is a
  replica of a deleted incarnation (``UnifiedLog.assignTopicId``: ``InconsistentTopicIdException``; a
  KRaft broker takes it for a stray: ``LogManager.isStrayKraftReplica``), within a log directory or across.

A **node** is the log directories whose ``meta.properties`` name one ``cluster.id`` and ``node.id``, and
those under one broker's directory of a fleet root (``<root>/<broker>/<log dir>``).
"""

from __future__ import annotations

from collections.abc import Iterable

from kseg.format.uuid import parse_uuid
from kseg.ops.logdir.logdir import METADATA_TOPIC, LogDirReport, PartitionReport
from kseg.storage import checkpoints as cp
from kseg.storage import location

RESERVED_DIRECTORY_IDS = 100  # DirectoryId.reserved: most significant bits 0, least below 100


def judge(reports: list[LogDirReport], brokers: list[str | None]) -> None:
    """Every rule of the module docstring over ``reports``; ``brokers[i]``: the fleet broker directory
    ``reports[i]`` lies in (None: given on its own)."""
    nodes = _nodes(reports, brokers)
    for node in nodes:
        _duplicate_partitions([reports[i] for i in node])
    for report in reports:
        _meta_alone(report)
    for broker in sorted({b for b in brokers if b is not None}):
        _differs([r for r, b in zip(reports, brokers, strict=True) if b == broker], "node.id", _NODE_ID_RULE)
    _differs(reports, "cluster.id", _CLUSTER_ID_RULE)
    _shared_directory_ids(reports)
    _topic_ids(reports)


def _meta_file(report: LogDirReport) -> str:
    return location.join(report.path, cp.META_PROPERTIES)


def _nodes(reports: list[LogDirReport], brokers: list[str | None]) -> list[list[int]]:
    """The indices of ``reports`` grouped by node (module docstring): a union of the two keys."""
    group = list(range(len(reports)))

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    first: dict[object, int] = {}
    for i, (report, broker) in enumerate(zip(reports, brokers, strict=True)):
        meta = report.meta
        keys: list[object] = [("broker", broker)] if broker is not None else []
        if meta is not None and meta.node_id is not None:
            keys.append(("node", meta.cluster_id, meta.node_id))
        for key in keys:
            if key in first:
                group[root(i)] = root(first[key])
            else:
                first[key] = i
    out: dict[int, list[int]] = {}
    for i in range(len(reports)):
        out.setdefault(root(i), []).append(i)
    return list(out.values())


def _duplicate_partitions(node: list[LogDirReport]) -> None:
    seen: dict[tuple[str, int], list[PartitionReport]] = {}
    for report in node:
        for part in report.partitions:
            tp = cp.topic_partition(part.name)
            if tp is not None and tp[0] != METADATA_TOPIC:  # the raft layer's, not LogManager's
                seen.setdefault(tp, []).append(part)
    for (topic, number), parts in seen.items():
        if len(parts) < 2:
            continue
        where = " and ".join(p.path for p in parts)
        for part in parts:
            part.problems.append(
                f"duplicate log directories for {topic}-{number} on one node: {where}: Kafka reads each name as "
                f"partition {number} of {topic} (UnifiedLog.parseTopicPartitionName) and refuses to start "
                '(LogManager.loadLog: "Duplicate log directories")'
            )


def _meta_alone(report: LogDirReport) -> None:
    meta = report.meta
    if meta is None:
        return
    if meta.version == 1 and not meta.cluster_id:
        report.problems.append(
            f"{_meta_file(report)}: version 1 without cluster.id: Kafka refuses the log directory "
            '(MetaPropertiesEnsemble.verify: "cluster.id was not specified in the v1 file")'
        )
    raw = parse_uuid(meta.directory_id) if meta.directory_id is not None else None
    if raw is not None and int.from_bytes(raw, "big") < RESERVED_DIRECTORY_IDS:
        report.problems.append(
            f"{_meta_file(report)}: directory.id {meta.directory_id} is a reserved ID (DirectoryId.reserved): "
            "Kafka refuses the log directory (MetaPropertiesEnsemble.verify)"
        )


_NODE_ID_RULE = (
    "one broker's log directories name one node (MetaPropertiesEnsemble.verify: \"Stored node id ... doesn't "
    'match previous node id"): the broker refuses to start'
)
_CLUSTER_ID_RULE = (
    'one broker refuses log directories of two clusters (MetaPropertiesEnsemble.verify: "Invalid cluster.id"), '
    "the controller a broker of another cluster (ClusterControlManager.registerBroker: InconsistentClusterIdException)"
)


def _differs(reports: Iterable[LogDirReport], key: str, rule: str) -> None:
    """``key`` of ``meta.properties`` taking more than one value across ``reports``: a problem on each."""
    values = [
        (r, value)
        for r in reports
        if r.meta is not None and (value := r.meta.node_id if key == "node.id" else r.meta.cluster_id) is not None
    ]
    if len({value for _, value in values}) < 2:
        return
    where = ", ".join(f"{value} in {_meta_file(r)}" for r, value in values)
    for report, _ in values:
        report.problems.append(f"{key} differs between log directories: {where}: {rule}")


def _shared_directory_ids(reports: list[LogDirReport]) -> None:
    holders: dict[str, list[LogDirReport]] = {}
    for report in reports:
        if report.meta is not None and report.meta.directory_id is not None:
            holders.setdefault(report.meta.directory_id, []).append(report)
    for directory_id, shared in holders.items():
        if len(shared) < 2:
            continue
        where = ", ".join(_meta_file(r) for r in shared)
        for report in shared:
            report.problems.append(
                f"directory.id {directory_id} in more than one log directory: {where}: a broker refuses two "
                'log directories of one ID (MetaPropertiesEnsemble.verify: "Duplicate directory ID"), the '
                'controller a second broker registering it (ClusterControlManager.registerBroker: "already '
                'registered with directory")'
            )


def _topic_ids(reports: list[LogDirReport]) -> None:
    by_topic: dict[str, list[PartitionReport]] = {}
    for report in reports:
        for part in report.partitions:
            tp = cp.topic_partition(part.name)
            if part.topic_id is not None and tp is not None:
                by_topic.setdefault(tp[0], []).append(part)
    for topic, parts in by_topic.items():
        if len({p.topic_id for p in parts}) < 2:
            continue
        if len({p.name for p in parts}) == 1:  # the replicas of one partition
            what, where = "between replicas", ", ".join(f"{p.topic_id} in {p.log_dir}" for p in parts)
        else:
            what = f"between partitions of topic {topic}"
            where = ", ".join(f"{p.topic_id} in {location.join(p.path, cp.PARTITION_METADATA)}" for p in parts)
        for part in parts:
            part.problems.append(
                f"topic ID differs {what}: {where}: a topic has one ID; Kafka refuses a replica of another "
                "(UnifiedLog.assignTopicId: InconsistentTopicIdException; LogManager.isStrayKraftReplica "
                "takes it for a stray)"
            )
