"""Constructed tiered-storage clusters for ``kseg tiered``: a ``__remote_log_metadata`` topic written the way
Kafka's ``RemoteLogMetadataSerde`` writes it (``kseg.testing.remote_metadata``), the store's objects under the
keys an RSM gives them (``kseg.storage.remote_keys``) and a broker's local log directory -- healthy, then with
one fault each (docs/tiered-metadata.md names them)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from kseg.ops.tiered.partitioner import metadata_partition
from kseg.ops.tiered.reconcile import finished
from kseg.storage.remote_keys import AIVEN_SUFFIXES, LOCAL_SUFFIXES, Layout, object_key
from kseg.testing import remote_metadata as rm
from kseg.testing.segment import write_segment
from kseg.testing.v2 import RecordSpec, build_v2_batch

__all__ = ["finished", "metadata_partition"]  # re-exported for the tests

TOPIC, TOPIC_ID, PARTITION = "orders", "Wd7Ynb0xRJ2-8HlQ_3aZ1g", 0
PARTITIONS = 3  # remote.log.metadata.topic.num.partitions of these clusters
SIZE = 2048  # each segment's segmentSizeInBytes
INDEXES = 64  # each segment's .indexes (and, local layout, each index file)
#: Aiven's manifest of such a segment: neither compressed nor encrypted, one chunk, four 16-byte indexes
MANIFEST = json.dumps(
    {
        "version": "1",
        "chunkIndex": {
            "type": "fixed",
            "originalChunkSize": SIZE,
            "originalFileSize": SIZE,
            "transformedChunkSize": SIZE,
            "finalTransformedChunkSize": SIZE,
        },
        "segmentIndexes": {
            name: {"position": 16 * i, "size": 16}
            for i, name in enumerate(("offset", "timestamp", "producerSnapshot", "leaderEpoch"))
        }
        | {"transaction": None},
        "compression": False,
        "encryption": None,
    },
    separators=(",", ":"),
).encode()
OBJECT_BYTES = SIZE + INDEXES + len(MANIFEST)  # what Aiven's plugin uploads for one segment
IDS = {  # one Uuid per remote segment
    "old": "AAAAAAAAAAAAAAAAAAAAAQ",
    "a": "-kq3PZs0T8ayL1x9V0fHbA",
    "b": "Zm9vYmFyYmF6cXV4MTIzNA",
    "c": "ERITFBUWFxgZGhscHR4fIA",
    "new": "EBAQEBAQEBAQEBAQEBAQEA",
    "stray": "ICAgICAgICAgICAgICAgIA",
    "late": "MDAwMDAwMDAwMDAwMDAwMA",
}


def seg(name: str, partition: int = PARTITION) -> rm.SegmentId:
    return rm.SegmentId(TOPIC_ID, TOPIC, partition, IDS[name])


def copied(name: str, start: int, end: int, epochs: dict[int, int] | None = None) -> list[bytes]:
    """A copy as RemoteLogManager makes it: COPY_SEGMENT_STARTED, then the FINISHED update."""
    return [
        rm.segment_metadata(seg(name), start, end, epochs=epochs, size=SIZE),
        rm.segment_update(seg(name), rm.COPY_SEGMENT_FINISHED),
    ]


def deleted(name: str) -> list[bytes]:
    return [rm.segment_update(seg(name), state) for state in (rm.DELETE_SEGMENT_STARTED, rm.DELETE_SEGMENT_FINISHED)]


@dataclass
class Cluster:
    """What to write: the metadata values, the segments whose objects the store holds, the local log."""

    values: list[bytes] = field(default_factory=list)
    stored: dict[str, int] = field(default_factory=dict)  # segment name -> start offset
    local_start: int = 400
    log_start: int = 100
    layout: Layout = "aiven"
    drop_objects: tuple[str, ...] = ()  # keys (relative) not written

    def write(self, root: Path) -> tuple[Path, Path, Path]:
        """``(metadata log root, store root, broker log dir)`` under ``root``."""
        meta, store, logdir = root / "meta", root / "store", root / "broker"
        home = metadata_partition(rm.uuid_bytes(TOPIC_ID), PARTITION, PARTITIONS)
        for n in range(PARTITIONS):
            rm.write_metadata_log(meta / f"__remote_log_metadata-{n}", self.values if n == home else [])
        for name, start in self.stored.items():
            suffixes = AIVEN_SUFFIXES if self.layout == "aiven" else LOCAL_SUFFIXES
            for suffix in suffixes:
                key = object_key(self.layout, "", TOPIC, TOPIC_ID, PARTITION, start, IDS[name], suffix)
                if key in self.drop_objects:
                    continue
                path = store / key
                path.parent.mkdir(parents=True, exist_ok=True)
                body = MANIFEST if suffix == "rsm-manifest" else b"\0" * (SIZE if suffix == "log" else INDEXES)
                path.write_bytes(body)
        part = logdir / f"{TOPIC}-{PARTITION}"
        batch = build_v2_batch([RecordSpec(None, b"v", 1_780_000_000_000)], base_offset=self.local_start)
        write_segment(part, [[batch]], base_offset=self.local_start)
        (part / "partition.metadata").write_text(f"version: 0\ntopic_id: {TOPIC_ID}\n")
        (logdir / "log-start-offset-checkpoint").write_text(f"0\n1\n{TOPIC} {PARTITION} {self.log_start}\n")
        return meta, store, logdir


def healthy(layout: Layout = "aiven") -> Cluster:
    """Retention deleted 0-99; 100-399 remote, finished; the local log from 400; log start 100."""
    values = (
        copied("old", 0, 99)
        + copied("a", 100, 199)
        + copied("b", 200, 299)
        + copied("c", 300, 399, epochs={0: 300, 1: 350})
        + deleted("old")
    )
    return Cluster(values, {"a": 100, "b": 200, "c": 300}, layout=layout)
