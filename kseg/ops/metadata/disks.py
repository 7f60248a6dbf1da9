"""Against the disks (``kseg metadata --logdir``): what the image assigns to a node compared with what that
node's log directories hold, as a KRaft broker judges them on start (docs/metadata.md).

The log directories and their files are read as ``kseg logdir`` reads them (:mod:`kseg.ops.logdir`: the
same discovery, ``meta.properties`` for the node and directory IDs, ``partition.metadata`` for each
partition directory's topic ID); the segments are not read.  Kafka's rules (Kafka 4.x):

* **Strays**: ``BrokerMetadataPublisher.initializeManagers`` hands ``LogManager.startup`` a test, and
  ``LogManager.loadLog`` renames each log it holds true ``<topic>-<p>.<uuid>-stray``: a log without a
  topic ID, or one whose topic ID and partition the image holds no registration of, or whose replicas
  leave the node out (``TopicsImage.partitionReplicas``, ``LogManager.isStrayReplica``; Kafka 3.7-3.9:
  ``LogManager.isStrayKraftReplica``).  The lookup is by topic ID, not by name; ``__cluster_metadata``
  is not LogManager's (``LogManager.loadLogs`` skips it), and ``-delete``/``-stray``/``-future``
  directories are leftovers, not compared.
* **Topic IDs**: a directory whose ``partition.metadata`` holds another ID than the image's topic of its
  name is a replica of another incarnation of the topic (deleted and created again while the node was
  away): by the rule above Kafka takes it for a stray unless its ID is another topic's that assigns the
  node.
* **Missing**: a replica the image assigns to the node with no directory of its name in the node's log
  directories: Kafka creates it empty and fetches it from the leader (``Partition.createLogIfNotExists``
  via ``makeLeader``/``makeFollower``).  Judged only where every log directory the replica may be in was
  given: its KIP-858 directory, else every directory the broker registered.
* **Directories** (KIP-858): the image's directory for the node's replica differs from the
  ``directory.id`` of the log directory holding it; the broker then tells the controller where the
  replica is (``ReplicaManager.maybeUpdateTopicAssignment``, ``AssignReplicasToDirs``).  ``MIGRATING``
  (no directories in the image) and ``UNASSIGNED`` (a placement pending) are not compared; ``LOST`` (the
  controller takes the directory for offline) is a difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kseg.format.uuid import parse_uuid
from kseg.ops.logdir.logdir import METADATA_TOPIC, LogDirReport, PartitionReport, identify
from kseg.ops.logdir.run import Opened, open_all
from kseg.ops.metadata.image import Image, PartitionState, b64
from kseg.storage import checkpoints as cp
from kseg.words import plural

STRAY, MISSING, TOPIC_ID, DIRECTORY, UNCOMPARED = "stray", "missing", "topicId", "directory", "uncompared"
CAUSES = (STRAY, TOPIC_ID, MISSING, DIRECTORY, UNCOMPARED)  # the order the causes are shown in
MIGRATING, UNASSIGNED, LOST = 0, 1, 2  # DirectoryId's reserved IDs (most significant bits 0)
_STRAY_RULE = "Kafka renames it -stray on start (LogManager.isStrayReplica)"


@dataclass(frozen=True)
class Finding:
    """One disagreement between the image and a log directory."""

    cause: str
    node: int | None
    topic: str | None
    partition: int | None
    log_dir: str | None
    path: str | None  # the partition directory (None: missing, or a whole log directory)
    reason: str
    topic_id: str | None = None  # partition.metadata's
    image_topic_id: str | None = None
    replicas: tuple[int, ...] | None = None
    directory: str | None = None  # the log directory's directory.id
    image_directory: str | None = None


@dataclass(frozen=True)
class LogDir:
    path: str
    node: int | None
    directory_id: str | None
    partitions: int


@dataclass
class Disks:
    log_dirs: list[LogDir] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # files that could not be read (the OS's reason): exit 2
    compared: int = 0  # partition directories compared with the image


@dataclass
class _Node:
    log_dirs: list[LogDirReport] = field(default_factory=list)
    held: list[tuple[tuple[str, int], PartitionReport]] = field(default_factory=list)  # (two of a name: both)
    partial: bool = False  # a partition directory given alone: the node's other directories unseen


def compare(image: Image, paths: list[str]) -> Disks:
    """The findings of the module docstring for the log directories under ``paths``; raises
    :class:`kseg.errors.InputError` for a path that is missing or no log directory, before reading."""
    out = Disks()
    nodes: dict[int, _Node] = {}
    for one in open_all(paths, out.notes):
        _log_dir(one, out, nodes)
    for node_id, node in sorted(nodes.items()):
        for (topic, number), part in sorted(node.held, key=lambda h: (h[0], h[1].path)):
            _judge(image, node_id, node, topic, number, part, out)
        if node.partial:
            out.notes.append(f"node {node_id}: a partition directory given alone: missing replicas not judged")
        else:
            _missing(image, node_id, node, out)
    return out


def _log_dir(one: Opened, out: Disks, nodes: dict[int, _Node]) -> None:
    report = one.report
    meta = report.meta
    out.errors.extend(e for e in report.errors if cp.META_PROPERTIES in e)  # (its checkpoints are not needed)
    node_id = meta.node_id if meta is not None else None
    parts = [p for t in one.targets if t[2][0] != METADATA_TOPIC for p in [identify(report, t)]]
    for part in parts:
        out.errors.extend(part.errors)  # (whether or not the node is known: never dropped unsaid)
    out.log_dirs.append(LogDir(report.path, node_id, meta.directory_id if meta else None, len(parts)))
    if node_id is None:
        why = next((p for p in [*report.errors, *report.problems] if cp.META_PROPERTIES in p), None) or (
            "no meta.properties node.id"
        )
        out.findings.append(
            Finding(UNCOMPARED, None, None, None, report.path, None, f"the node is unknown ({why}): not compared")
        )
        return
    node = nodes.setdefault(node_id, _Node())
    node.log_dirs.append(report)
    node.partial = node.partial or one.only is not None
    for part in parts:
        tp = cp.topic_partition(part.name)
        if tp is None:  # pragma: no cover - open_log_dir gives only <topic>-<partition> directories
            continue
        if part.problems and not part.errors:
            out.findings.append(
                Finding(UNCOMPARED, node_id, *tp, report.path, part.path, f"not compared: {'; '.join(part.problems)}")
            )
        node.held.append((tp, part))
        out.compared += not part.errors and not part.problems


def _judge(image: Image, node_id: int, node: _Node, topic: str, number: int, part: PartitionReport, out: Disks) -> None:
    """One partition directory of a node: a stray, a replica of another topic ID, or a directory elsewhere."""
    if part.errors or part.problems:
        return
    base = Finding(STRAY, node_id, topic, number, part.log_dir, part.path, "", topic_id=part.topic_id)
    if part.topic_id is None:
        out.findings.append(_with(base, reason=f"no {cp.PARTITION_METADATA}, no topic ID: {_STRAY_RULE}"))
        return
    raw = parse_uuid(part.topic_id)
    by_id = image.topics.get(raw) if raw is not None else None
    state = by_id.partitions.get(number) if by_id is not None else None
    stray = state is None or node_id not in state.replicas
    named = image.topic_named(topic)
    if named is not None and named.id != raw:
        what = f"{cp.PARTITION_METADATA} holds topic ID {part.topic_id}, the image's topic {topic} is {b64(named.id)}"
        rule = f": a replica of another incarnation of {topic}; {_STRAY_RULE}" if stray else ""
        out.findings.append(_with(base, cause=TOPIC_ID, image_topic_id=b64(named.id), reason=what + rule))
        return
    if by_id is None:
        out.findings.append(_with(base, reason=f"topic ID {part.topic_id} is in no topic of the image: {_STRAY_RULE}"))
    elif state is None:
        reason = f"topic {by_id.name} has no partition {number} in the image: {_STRAY_RULE}"
        out.findings.append(_with(base, reason=reason))
    elif stray:
        reason = f"replicas {_ids(state.replicas)} leave node {node_id} out: {_STRAY_RULE}"
        out.findings.append(_with(base, replicas=state.replicas, reason=reason))
    else:
        _directory(node_id, node, part, state, out)


def _directory(node_id: int, node: _Node, part: PartitionReport, state: PartitionState, out: Disks) -> None:
    assigned = _assigned(state, node_id)
    if assigned is None or int.from_bytes(assigned, "big") in (MIGRATING, UNASSIGNED):
        return
    holder = next(r for r in node.log_dirs if r.path == part.log_dir)
    here = holder.meta.directory_id if holder.meta is not None else None
    if here is None or parse_uuid(here) == assigned:
        return
    lost = int.from_bytes(assigned, "big") == LOST
    image_dir = "LOST" if lost else b64(assigned)
    where = "a directory it takes for offline (LOST)" if lost else f"directory {image_dir}"
    reason = (
        f"in directory {here} ({cp.META_PROPERTIES} directory.id), the image puts node {node_id}'s replica in "
        f"{where}: the broker tells the controller where it is (ReplicaManager.maybeUpdateTopicAssignment)"
    )
    tp = cp.topic_partition(part.name)
    assert tp is not None
    found = Finding(DIRECTORY, node_id, *tp, part.log_dir, part.path, reason, part.topic_id, None, state.replicas)
    out.findings.append(replace(found, directory=here, image_directory=image_dir))


def _missing(image: Image, node_id: int, node: _Node, out: Disks) -> None:
    """The node's replicas with no directory of their name in its log directories (module docstring)."""
    given = {raw for r in node.log_dirs if r.meta and r.meta.directory_id and (raw := parse_uuid(r.meta.directory_id))}
    broker = image.brokers.get(node_id)
    absent = set(broker.directories) - given if broker is not None else set()
    unjudged = 0
    held = {tp for tp, _ in node.held}
    for topic in sorted(image.topics.values(), key=lambda t: t.name):
        for number, state in sorted(topic.partitions.items()):
            if node_id not in state.replicas or (topic.name, number) in held:
                continue
            assigned = _assigned(state, node_id)
            placed = assigned is not None and int.from_bytes(assigned, "big") > LOST
            if (placed and assigned not in given) or (not placed and absent):
                unjudged += 1
                continue
            image_dir = b64(assigned) if placed and assigned is not None else None
            where = f" (its directory {image_dir})" if image_dir else ""
            reason = (
                f"node {node_id} is a replica ({_ids(state.replicas)}) but no log directory given holds "
                f"{topic.name}-{number}{where}: Kafka creates it empty and fetches it from the leader "
                "(Partition.createLogIfNotExists)"
            )
            found = Finding(MISSING, node_id, topic.name, number, None, None, reason, None, b64(topic.id))
            out.findings.append(replace(found, replicas=state.replicas, image_directory=image_dir))
    if unjudged:
        out.notes.append(
            f"node {node_id}: {plural(unjudged, 'assigned replica')} may be in log directories not given (the "
            "broker registered more): not judged missing"
        )


def _assigned(state: PartitionState, node_id: int) -> bytes | None:
    """``PartitionRegistration.directory(node)``: the node's replica's directory."""
    i = state.replicas.index(node_id)
    return state.directories[i] if i < len(state.directories) else None


def _with(base: Finding, **changes: object) -> Finding:
    return replace(base, **changes)  # type: ignore[arg-type]


def _ids(values: tuple[int, ...]) -> str:
    return ",".join(map(str, values)) or "none"
