"""Building ``__cluster_metadata-0`` directories for the tests: metadata records encoded with kseg's
schema-driven writer (the inverse of the decoder the dump tests check against Kafka's goldens), framed as
``MetadataRecordSerde`` frames them, in v2 batches as raft's ``BatchBuilder`` writes them (no producer,
CreateTime, every record the batch's timestamp), and snapshots laid out as ``RecordsSnapshotWriter``
lays them out (a ``SnapshotHeader`` control batch at offset 0, the records, a ``SnapshotFooter``)."""

from __future__ import annotations

import struct
from pathlib import Path

from kseg.decoders import schema
from kseg.decoders.encode import write
from kseg.decoders.wire import Writer
from kseg.testing.control import build_control_record_batch
from kseg.testing.segment import write_segment
from kseg.testing.v2 import RecordSpec, build_v2_batch

API_KEYS = {name: key for key, name in schema.metadata_names().items()}
SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, LEADER_CHANGE = 3, 4, 5, 2
T0 = 1780000000000


def uuid(n: int) -> bytes:
    return n.to_bytes(16, "big")


def record(kind: str, version: int = 0, **values) -> bytes:
    """``MetadataRecordSerde``: frame version 1, api key, version, the message (a record ``kind``)."""
    w = Writer()
    w.uvarint(1)
    w.uvarint(API_KEYS[kind])
    w.uvarint(version)
    write(schema.message(kind).struct, values, version, w)
    return w.getvalue()


def kraft_version_value(level: int) -> bytes:
    return struct.pack(">hh", 0, level) + b"\x00"


class Log:
    """Batches at consecutive offsets, the partition leader epoch given per batch."""

    def __init__(self, base: int = 0, time: int = T0, epoch: int = 1) -> None:
        self.next = base
        self.time = time
        self.epoch = epoch
        self.batches: list[tuple[int, bytes]] = []  # (base offset, bytes)

    def batch(self, *records: bytes, time: int | None = None) -> int:
        """One metadata batch; returns its base offset."""
        t = self.time if time is None else time
        base = self.next
        specs = [RecordSpec(None, r, t) for r in records]
        self.batches.append((base, build_v2_batch(specs, base_offset=base, partition_leader_epoch=self.epoch)))
        self.next += len(records)
        self.time = t + 100
        return base

    def control(self, kind: int, value: bytes, time: int | None = None) -> int:
        t = self.time if time is None else time
        base = self.next
        self.batches.append(
            (
                base,
                build_control_record_batch(
                    kind, value, base_offset=base, timestamp=t, partition_leader_epoch=self.epoch
                ),
            )
        )
        self.next += 1
        self.time = t + 100
        return base

    def write(self, directory: Path, rolls: tuple[int, ...] = (), start: int = 0) -> Path:
        """The batches from offset ``start`` on as segments, a new one at each base offset in ``rolls``."""
        directory.mkdir(parents=True, exist_ok=True)
        kept = [(b, raw) for b, raw in self.batches if b >= start]
        groups: list[list[tuple[int, bytes]]] = []
        for b, raw in kept:
            if not groups or b in rolls:
                groups.append([])
            groups[-1].append((b, raw))
        for group in groups:
            write_segment(directory, [[raw] for _, raw in group], base_offset=group[0][0])
        return directory


def write_snapshot(directory: Path, end_offset: int, epoch: int, records: list[bytes], time: int) -> Path:
    """``<end offset>-<epoch>.checkpoint`` holding ``records`` as of the log's offset ``end_offset - 1``."""
    header = build_control_record_batch(
        SNAPSHOT_HEADER,
        struct.pack(">hq", 0, time) + b"\x00",
        base_offset=0,
        timestamp=time,
        partition_leader_epoch=epoch,
    )
    body = build_v2_batch([RecordSpec(None, r, time) for r in records], base_offset=1, partition_leader_epoch=epoch)
    footer = build_control_record_batch(
        SNAPSHOT_FOOTER,
        struct.pack(">h", 0) + b"\x00",
        base_offset=1 + len(records),
        timestamp=time,
        partition_leader_epoch=epoch,
    )
    path = directory / f"{end_offset:020d}-{epoch:010d}.checkpoint"
    path.write_bytes(header + body + footer)
    return path
