"""Log directories written the way a broker writes them, around partitions of the corpus (Kafka's own bytes).

Formats (Kafka's source): ``CheckpointFile.write`` -- the version line, the entry count line, then one
``Formatter.toString`` line per entry, each ended by ``BufferedWriter.newLine`` (``\\n`` on Linux);
``OffsetCheckpointFile.Formatter``: ``topic partition offset``; ``LeaderEpochCheckpointFile.Formatter``:
``epoch startOffset``; ``PartitionMetadataFile``: ``version: 0\\ntopic_id: <Uuid>`` with no line end;
``meta.properties``: ``Properties.store`` (a ``#`` comment and the date, then ``key=value`` lines);
``.kafka_cleanshutdown``: ``CleanShutdownFileHandler``'s ``{"version":0,"brokerEpoch":N}``.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
from pathlib import Path

from tests.conftest import CORPUS_DATA

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"
DIRECTORY_ID = "b3Vt-Vo1RJOfeX2iJvGlHQ"
TOPIC_IDS = {"orders": "ZtkM3jXGTZeXkwZ3aAJvPA", "plain": "4CFTXm-WQZa2bJ8EO6yJNQ"}
# follower-v2-0: offsets 0..268 in one segment, partition leader epochs 0 (from 0), 1 (from 132), 3 (from 193)
ORDERS_EPOCHS = [(0, 0), (1, 132), (3, 193)]
ORDERS_END, PLAIN_END = 269, 420  # plain-v2-0: two segments, 0 and 251, offsets 0..419, epoch 0


def checkpoint(entries: list[tuple[object, ...]], version: int = 0) -> str:
    """A ``CheckpointFile`` as Kafka writes it."""
    return "".join(f"{line}\n" for line in [version, len(entries), *(" ".join(map(str, e)) for e in entries)])


def properties(pairs: dict[str, object]) -> str:
    """``Properties.store``: a comment line, the date line, then ``key=value`` lines."""
    return "#\n#Tue Nov 24 08:00:00 UTC 2026\n" + "".join(f"{k}={v}\n" for k, v in pairs.items())


def partition_metadata(topic_id: str) -> str:
    return f"version: 0\ntopic_id: {topic_id}"


def directory_id(node_id: int, number: int = 0) -> str:
    """A log directory's own ``directory.id`` (unique, as ``kafka-storage.sh format`` makes them): node 1's
    first is :data:`DIRECTORY_ID`."""
    if (node_id, number) == (1, 0):
        return DIRECTORY_ID
    raw = hashlib.sha256(f"directory {node_id} {number}".encode()).digest()[:16]
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def log_dir(
    base: Path, node_id: int = 1, topic_ids: dict[str, str] | None = None, directory: str | None = None
) -> Path:
    """A KRaft broker's log directory after a clean shutdown: ``orders-0`` (follower-v2-0) and ``plain-0``
    (plain-v2-0), every file a 3.7+ broker keeps; ``directory``: its ``directory.id`` (else node
    ``node_id``'s first)."""
    base.mkdir(parents=True, exist_ok=True)
    ids = topic_ids or TOPIC_IDS
    shutil.copytree(CORPUS_DATA / "follower-v2-0", base / "orders-0")
    shutil.copytree(CORPUS_DATA / "plain-v2-0", base / "plain-0")
    (base / "orders-0" / "leader-epoch-checkpoint").write_text(checkpoint(ORDERS_EPOCHS))
    (base / "plain-0" / "leader-epoch-checkpoint").write_text(checkpoint([(0, 0)]))
    for topic in ("orders", "plain"):
        (base / f"{topic}-0" / "partition.metadata").write_text(partition_metadata(ids[topic]))
    ends = [("orders", 0, ORDERS_END), ("plain", 0, PLAIN_END)]
    (base / "replication-offset-checkpoint").write_text(checkpoint(ends))
    (base / "recovery-point-offset-checkpoint").write_text(checkpoint(ends))
    (base / "log-start-offset-checkpoint").write_text(checkpoint([]))  # no log start past its first segment
    (base / "cleaner-offset-checkpoint").write_text(checkpoint([("plain", 0, 251)]))
    (base / "meta.properties").write_text(
        properties(
            {
                "cluster.id": CLUSTER_ID,
                "directory.id": directory or directory_id(node_id),
                "node.id": node_id,
                "version": 1,
            }
        )
    )
    (base / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":42}')
    return base
