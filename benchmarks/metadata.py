"""Time and peak memory of ``kseg metadata`` on a large ``__cluster_metadata-0`` (issue 38).

Usage: ``python3 benchmarks/metadata.py [--topics T] [--partitions P] [--changes C] [--dir D]``.

Writes (once) a log of ``T`` topics of ``P`` partitions each (replicas 1,2,3), then ``C``
``PartitionChangeRecord``s moving ISRs and leaders round the partitions, 1,000 records a batch, records
encoded with kseg's schema-driven writer; then runs ``kseg metadata -q --format json`` on it as a child
process and reports its wall and CPU time, peak resident set size (``ru_maxrss``) and exit code.  The default,
1,000 x 100 partitions and 900,000 changes, is a million records over a hundred thousand partitions: the
memory is the image's (one registration per partition), never the log's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def write_log(directory: Path, topics: int, partitions: int, changes: int) -> None:
    from kseg.decoders import schema
    from kseg.decoders.encode import write
    from kseg.decoders.wire import Writer
    from kseg.testing.segment import SegmentWriter
    from kseg.testing.v2 import RecordSpec, build_v2_batch

    keys = {name: key for key, name in schema.metadata_names().items()}

    def record(kind: str, version: int = 0, **values) -> bytes:
        w = Writer()
        w.uvarint(1)
        w.uvarint(keys[kind])
        w.uvarint(version)
        write(schema.message(kind).struct, values, version, w)
        return w.getvalue()

    def records():
        yield record("FeatureLevelRecord", name="metadata.version", featureLevel=21)
        for t in range(topics):
            tid = (t + 1).to_bytes(16, "big")
            yield record("TopicRecord", name=f"topic-{t}", topicId=tid)
            for p in range(partitions):
                yield record(
                    "PartitionRecord",
                    partitionId=p,
                    topicId=tid,
                    replicas=[1, 2, 3],
                    isr=[1, 2, 3],
                    leader=1,
                    leaderEpoch=0,
                    partitionEpoch=0,
                )
        isrs = ([1, 2, 3], [1, 2], [2, 3], [3, 1])
        for n in range(changes):
            p = n % (topics * partitions)
            tid = (p // partitions + 1).to_bytes(16, "big")
            isr = isrs[n % len(isrs)]
            yield record("PartitionChangeRecord", partitionId=p % partitions, topicId=tid, isr=isr, leader=isr[0])

    directory.mkdir(parents=True)
    writer = SegmentWriter(directory, 0)
    pending, offset, t0 = [], 0, 1780000000000
    for value in records():
        pending.append(RecordSpec(None, value, t0))
        if len(pending) == 1000:
            writer.append([build_v2_batch(pending, base_offset=offset, partition_leader_epoch=1)])
            offset, pending = offset + len(pending), []
    if pending:
        writer.append([build_v2_batch(pending, base_offset=offset, partition_leader_epoch=1)])
    writer.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--changes", type=int, default=900_000)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/kseg-metadata-bench"))
    args = ap.parse_args(argv)
    directory = args.dir / f"{args.topics}x{args.partitions}+{args.changes}" / "__cluster_metadata-0"
    if not directory.exists():
        started = time.monotonic()
        write_log(directory, args.topics, args.partitions, args.changes)
        print(f"wrote {directory} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    size = sum(f.stat().st_size for f in directory.iterdir())
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "kseg", "metadata", "-q", "--format", "json", str(directory)],
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(HERE.parent)},
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - started
    records = args.topics * (args.partitions + 1) + args.changes + 1
    print(
        f"{records:,} records, {args.topics * args.partitions:,} partitions, {size / 1e6:.0f} MB: "
        f"{wall:.1f} s ({usage.ru_utime + usage.ru_stime:.1f} s of CPU), peak {usage.ru_maxrss / 1024:.0f} MiB, "
        f"exit {os.waitstatus_to_exitcode(status)}"
    )


if __name__ == "__main__":
    main()
