"""``kseg metadata --logdir``'s output: the disagreements between the image and the log directories, grouped
by cause (text, 80 columns), and as ``disagreement`` rows and one ``disks`` row (JSON)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from types import MappingProxyType

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.metadata.disks import CAUSES, DIRECTORY, MISSING, STRAY, TOPIC_ID, UNCOMPARED, Disks, Finding
from kseg.render.metadata import Filter
from kseg.words import noun, plural

WIDTH = 80
HEADINGS = MappingProxyType(
    {
        STRAY: "Strays: partition directories the image does not assign to their node",
        TOPIC_ID: "Topic IDs that differ from the image",
        MISSING: "Assigned replicas with no partition directory",
        DIRECTORY: "Directory assignments (KIP-858) that differ",
        UNCOMPARED: "Not compared",
    }
)
SHORT = MappingProxyType(
    {STRAY: "stray", TOPIC_ID: "topic ID", MISSING: "missing", DIRECTORY: "directory", UNCOMPARED: "not compared"}
)


def shown(disks: Disks, only: Filter) -> list[Finding]:
    """The findings ``--topic`` and ``--broker`` keep (a log directory not compared is always kept)."""
    return [
        f
        for f in disks.findings
        if (f.topic is None or not only.topics or f.topic in only.topics)
        and (f.node is None or not only.brokers or f.node in only.brokers)
    ]


def _wrap(text: str, indent: int) -> list[str]:
    return textwrap.wrap(
        " " * indent + text, WIDTH, subsequent_indent=" " * (indent + 4), break_on_hyphens=False, break_long_words=False
    )


def _where(f: Finding) -> str:
    node = "" if f.node is None else f"node {f.node}  "
    if f.path is not None:
        return node + f.path
    if f.topic is not None:
        return f"{node}{f.topic}-{f.partition}"
    return node + (f.log_dir or "")


def text_lines(disks: Disks, only: Filter) -> Iterator[str]:
    found = shown(disks, only)
    nodes = sorted({d.node for d in disks.log_dirs if d.node is not None})
    yield ""
    n = len(disks.log_dirs)
    head = f"Against the disks: {n} log {noun(n, 'directory')}"
    if nodes:
        head += f" of {noun(len(nodes), 'node')} {', '.join(map(str, nodes))}"
    yield from _wrap(head, 0)
    yield from _wrap(f"{disks.compared} partition {noun(disks.compared, 'directory')} compared", 2)
    for d in disks.log_dirs:
        node = "node ?" if d.node is None else f"node {d.node}"
        directory = f"  directory {d.directory_id}" if d.directory_id else ""
        yield from _wrap(f"{node}  {d.path}{directory}  {plural(d.partitions, 'partition')}", 2)
    for cause in CAUSES:
        rows = [f for f in found if f.cause == cause]
        if not rows:
            continue
        yield ""
        yield f"{HEADINGS[cause]} ({len(rows)})"
        for f in rows:
            yield from _wrap(_where(f), 2)
            yield from _wrap(f.reason, 6)
    yield ""
    if not found:
        yield "The disks agree with the image."
    else:
        counts = ", ".join(f"{n} {SHORT[c]}" for c in CAUSES if (n := sum(f.cause == c for f in found)))
        yield from _wrap(f"{plural(len(found), 'disagreement')} with the image: {counts}", 0)


def finding_row(f: Finding) -> dict:
    return {
        "type": "disagreement",
        "v": SCHEMA_VERSION,
        "cause": f.cause,
        "node": f.node,
        "topic": f.topic,
        "partition": None if f.topic is None else f"{f.topic}-{f.partition}",
        "partitionId": f.partition,
        "logDir": f.log_dir,
        "path": f.path,
        "topicId": f.topic_id,
        "imageTopicId": f.image_topic_id,
        "replicas": None if f.replicas is None else list(f.replicas),
        "directory": f.directory,
        "imageDirectory": f.image_directory,
        "reason": f.reason,
    }


def json_rows(disks: Disks, only: Filter) -> list[dict]:
    found = shown(disks, only)
    summary = {
        "type": "disks",
        "v": SCHEMA_VERSION,
        "logDirs": [
            {"path": d.path, "node": d.node, "directoryId": d.directory_id, "partitions": d.partitions}
            for d in disks.log_dirs
        ],
        "compared": disks.compared,
        "disagreements": {c: n for c in CAUSES if (n := sum(f.cause == c for f in found))},
    }
    return [finding_row(f) for f in found] + [summary]
