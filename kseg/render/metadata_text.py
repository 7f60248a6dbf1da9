"""``kseg metadata``'s text: the image in sections (cluster, topics like ``kafka-topics --describe``,
configs, quotas, ACLs, SCRAM users, delegation tokens, producer ids), fitting 80 columns; secrets never
shown (:mod:`kseg.render.metadata`)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Iterator

from kseg.ops.metadata.image import Endpoint, PartitionState
from kseg.ops.metadata.image import b64 as uuid
from kseg.ops.metadata.read import Replay
from kseg.render.metadata import (
    EVERYTHING,
    HIDDEN,
    METADATA_VERSIONS,
    RECOVERY_STATES,
    SECURITY_PROTOCOLS,
    Filter,
    image_row,
    topics_of,
)
from kseg.render.txn import iso
from kseg.words import plural

WIDTH = 80


def _wrap(text: str, indent: int) -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent=" " * (indent + 2), break_on_hyphens=False) or [""]


def _line(out: list[str], text: str, indent: int = 2) -> None:
    out.extend(_wrap(" " * indent + text, indent))


def _ids(values: Iterable[int]) -> str:
    return ",".join(map(str, values)) or "-"


def stop_text(replay: Replay) -> str | None:
    """Why the image stops short of the point asked: where reading or applying stopped."""
    if replay.halt is not None:
        h = replay.halt
        return f"nothing applied from offset {h.offset}, at byte {h.position} of {h.path}"
    damaged = replay.damaged
    if damaged is None:
        return None
    where = f"byte {damaged.position} of " if damaged.position is not None else ""
    return f"not read past {where}{damaged.path}"


def headline(replay: Replay) -> list[str]:
    p = replay.image.provenance
    stop = stop_text(replay)
    if stop is not None:
        head = f"Partial image, as of offset {p.offset} ({stop}): not the cluster's current metadata"
    else:
        head = f"Cluster metadata as of offset {p.offset}"
    out = _wrap(head, 0)
    when = f"epoch {p.epoch}, {iso(p.time)}" if p.offset >= 0 else "nothing applied"
    snap = replay.snapshot
    if snap is None:
        source = "the log from offset 0"
    else:
        source = f"snapshot {snap.path.rsplit('/', 1)[-1]}"
        if replay.last_read is not None and replay.last_read > snap.last_offset:
            source += f" and the log to offset {replay.last_read}"
    _line(out, f"{when}; from {source}")
    return out


def cluster_lines(replay: Replay, only: Filter) -> list[str]:
    im = replay.image
    out = ["", "Features"]
    if im.metadata_version is not None:
        name = METADATA_VERSIONS.get(im.metadata_version, "unknown")
        _line(out, f"metadata.version {im.metadata_version} ({name})")
    for name, level in sorted(im.features.items()):
        _line(out, f"{name} {level}")
    if replay.loader.kraft_version is not None:
        _line(out, f"kraft.version {replay.loader.kraft_version} (from the log's control records)")
    if len(out) == 2:
        _line(out, "none")
    out += ["", f"Controllers ({len(im.controllers)})"]
    for c in sorted(im.controllers.values(), key=lambda c: c.id):
        _line(
            out,
            f"{c.id}  incarnation {uuid(c.incarnation_id)}" + ("  zkMigrationReady" if c.zk_migration_ready else ""),
        )
        _line(out, _endpoint_text(c.endpoints), 6)
    brokers = [b for n, b in sorted(im.brokers.items()) if only.broker(n)]
    out += ["", f"Brokers ({len(brokers)})"]
    for b in brokers:
        state = "fenced" if b.fenced else "unfenced"
        if b.in_controlled_shutdown:
            state += ", in controlled shutdown"
        _line(out, f"{b.id}  epoch {b.epoch}  {state}  rack {b.rack if b.rack is not None else '-'}")
        _line(out, f"incarnation {uuid(b.incarnation_id)}", 6)
        _line(out, _endpoint_text(b.endpoints), 6)
        if b.directories:
            _line(out, "directories " + " ".join(uuid(d) for d in b.directories), 6)
        if b.cordoned_directories:
            _line(out, "cordoned " + " ".join(uuid(d) for d in b.cordoned_directories), 6)
    return out


def _endpoint_text(eps: Iterable[Endpoint]) -> str:
    listed = [
        f"{e.name}://{e.host}:{e.port}"
        + (
            ""
            if e.name == SECURITY_PROTOCOLS.get(e.security_protocol)
            else f" ({SECURITY_PROTOCOLS.get(e.security_protocol, e.security_protocol)})"
        )
        for e in eps
    ]
    return "endpoints " + (" ".join(listed) if listed else "none")


def topic_lines(replay: Replay, only: Filter) -> Iterator[str]:
    """A topic at a time: a hundred thousand partitions are never all lines at once."""
    topics = topics_of(replay, only)
    yield from ("", f"Topics ({len(topics)})")
    for t in topics:
        out: list[str] = []
        _line(out, f"{t.name}  ID {uuid(t.id)}  {plural(len(t.partitions), 'partition')}")
        for pid, p in sorted(t.partitions.items()):
            if only.partition(p):
                _line(out, _partition_text(pid, p), 4)
        yield from out


def _partition_text(pid: int, p: PartitionState) -> str:
    parts = [
        f"{pid}: leader {p.leader} (epoch {p.leader_epoch})",
        f"replicas {_ids(p.replicas)}",
        f"isr {_ids(p.isr)}",
        f"partition epoch {p.partition_epoch}",
    ]
    if p.elr:
        parts.append(f"elr {_ids(p.elr)}")
    if p.last_known_elr:
        parts.append(f"last known elr {_ids(p.last_known_elr)}")
    if p.adding:
        parts.append(f"adding {_ids(p.adding)}")
    if p.removing:
        parts.append(f"removing {_ids(p.removing)}")
    if p.leader_recovery_state != 0:
        parts.append(RECOVERY_STATES.get(p.leader_recovery_state, str(p.leader_recovery_state)))
    if any(d != bytes(16) for d in p.directories):
        parts.append("directories " + " ".join(uuid(d) for d in p.directories))
    return "  ".join(parts)


def _quota(value: float) -> str:
    """A quota's value in full: a whole number without its ``.0``, any other as its shortest exact form."""
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def security_lines(replay: Replay, only: Filter) -> list[str]:
    im = replay.image
    row = image_row(replay, only, whole=False)
    out = ["", f"Configs ({len(row['configs'])})"]
    for c in row["configs"]:
        _line(out, f"{c['resourceType'].lower()} {c['resourceName'] or '(default)'}")
        for k, v in c["configs"].items():
            _line(out, f"{k}={HIDDEN if v is None else v}", 6)
    out += ["", f"Client quotas ({len(row['clientQuotas'])})"]
    for q in row["clientQuotas"]:
        who = ", ".join(f"{k}={'(default)' if v is None else v}" for k, v in q["entity"].items())
        _line(out, f"{who}: " + ", ".join(f"{k}={_quota(v)}" for k, v in q["quotas"].items()))
    out += ["", f"ACLs ({len(row['acls'])})"]
    for a in row["acls"]:
        _line(
            out,
            f"{a['permissionType']} {a['principal']} {a['operation']} from {a['host']} on "
            f"{a['resourceType']}:{a['patternType']}:{a['resourceName']}",
        )
    out += ["", f"SCRAM users ({len(row['scramUsers'])})"]
    for s in row["scramUsers"]:
        _line(out, f"{s['name']}  {s['mechanism']}  {s['iterations']} iterations  credentials present")
    out += ["", f"Delegation tokens ({len(row['delegationTokens'])})"]
    for t in row["delegationTokens"]:
        _line(out, f"{t['tokenId']}  owner {t['owner']}  requester {t['requester']}")
        _line(
            out,
            f"renewers {','.join(t['renewers']) or '-'}  issued {iso(t['issueTimestamp'])}  "
            f"expires {iso(t['expiryTimestamp'])}  max {iso(t['maxTimestamp'])}",
            6,
        )
    out += ["", "Producer IDs"]
    _line(out, f"next producer id {im.next_producer_id}" if im.next_producer_id >= 0 else "none allocated")
    return out


def problem_lines(replay: Replay) -> list[str]:
    faults = replay.loader.faults
    if not faults:
        return []
    out = ["", f"Records Kafka's loader would refuse ({len(faults)}): not applied"]
    for f in faults:
        _line(out, f"offset {f.offset} {f.record}: {f.message}")
    return out


def text_lines(replay: Replay, only: Filter = EVERYTHING) -> Iterator[str]:
    """The image in sections; with --topic only the topics and their configs."""
    yield from headline(replay)
    if only.topics:
        yield from topic_lines(replay, only)
        row = image_row(replay, only, whole=False)
        out = ["", f"Configs ({len(row['configs'])})"]
        for c in row["configs"]:
            _line(out, f"{c['resourceType'].lower()} {c['resourceName']}")
            for k, v in c["configs"].items():
                _line(out, f"{k}={HIDDEN if v is None else v}", 6)
        yield from out
    else:
        yield from cluster_lines(replay, only)
        yield from topic_lines(replay, only)
        yield from security_lines(replay, only)
    yield from problem_lines(replay)
