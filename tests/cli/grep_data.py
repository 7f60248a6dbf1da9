"""A topic written as Kafka's producer and broker would have it, for ``kseg grep``'s tests: every keyed record
placed by Kafka's default partitioner, batches of every codec, headers, tombstones, transactional batches
with their COMMIT markers, several segments a partition with indexes -- and the list of what was written, the
independent answer every search is checked against."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kseg.ops.grep.partitioner import partition_for_key
from kseg.testing.writer import RecordSpec, build_control_batch, build_v2_batch, write_partition

TOPIC = "orders"
PARTITIONS = 6
RECORDS = 600
T0 = 1_760_000_000_000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
COLORS = ("red", "green", "blue", "amber")
PRODUCER = 4000  # + the partition: the transactional producer of each partition
PER_BATCH = 4


@dataclass(frozen=True)
class Written:
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple
    timestamp: int
    producer_id: int
    transactional: bool
    control: bool = False


def key_of(i: int) -> bytes | None:
    if i % 50 == 49:
        return None  # a record without a key: sent to any partition (here i's)
    if i % 25 == 7:
        return b"\xff\xfe-bin-%d" % i  # not UTF-8
    return b"order-%d" % i


def value_of(i: int) -> bytes | None:
    if i % 20 == 13:
        return None  # a tombstone
    return f"order {i} color {COLORS[i % len(COLORS)]} qty {i % 9}".encode()


def headers_of(i: int) -> tuple:
    hs: list = [("trace", f"t-{i % 7}".encode())]
    if i % 3 == 0:
        hs.append(("tenant", b"acme" if i % 2 else b"\x00\x01"))
    if i % 11 == 0:
        hs.append(("flag", None))
    return tuple(hs)


def write_topic(root: Path) -> list[Written]:
    """``root/orders-0`` .. ``orders-5``, each of several segments; the records written, in order."""
    per: dict[int, list[int]] = {p: [] for p in range(PARTITIONS)}
    for i in range(RECORDS):
        key = key_of(i)
        per[i % PARTITIONS if key is None else partition_for_key(key, PARTITIONS)].append(i)
    written: list[Written] = []
    for p, items in per.items():
        appends, offset, seq = [], 0, 0
        for b in range(0, len(items), PER_BATCH):
            chunk = items[b : b + PER_BATCH]
            n = b // PER_BATCH
            txn = n % 3 == 1
            pid = PRODUCER + p if txn else -1
            specs = [RecordSpec(key_of(i), value_of(i), T0 + i * 1000, headers_of(i)) for i in chunk]
            batch = build_v2_batch(
                specs,
                base_offset=offset,
                codec=CODECS[n % len(CODECS)],
                producer_id=pid,
                producer_epoch=0 if txn else -1,
                base_sequence=seq if txn else -1,
                transactional=txn,
            )
            for k, i in enumerate(chunk):
                written.append(Written(p, offset + k, key_of(i), value_of(i), headers_of(i), T0 + i * 1000, pid, txn))
            offset += len(chunk)
            batches = [batch]
            if txn:
                seq += len(chunk)
                ts = T0 + chunk[-1] * 1000
                batches.append(
                    build_control_batch(
                        "COMMIT",
                        base_offset=offset,
                        producer_id=pid,
                        producer_epoch=0,
                        coordinator_epoch=3,
                        timestamp=ts,
                    )
                )
                written.append(Written(p, offset, None, None, (), ts, pid, True, control=True))
                offset += 1
            appends.append(batches)
        write_partition(root / f"{TOPIC}-{p}", appends, segment_bytes=2048, index_interval_bytes=256)
    return written
