"""The Spark job: segments spread over tasks by size, each verified by the local code.

Discovery runs on the driver.  The unit of work is the segment: segments are
sorted by size and dealt into bins, largest first, each to the lightest bin
(longest-processing-time first), so one huge partition does not become one
straggler task.  Each bin is one Spark partition; each task runs
:func:`kseg.ops.verify.verify.verify_segment` — the local command's code — on
its segments, reading them by path or URI (a local path must be on a mount
every executor sees; ``s3://`` and other URIs are read with ranged requests).
A segment whose task cannot read it comes back as a ``failed`` segment naming
the executor host, never as a clean one.  The report is written by the
executors, one part file per task; only counts and the results to show reach
the driver (:func:`run`).
"""

from __future__ import annotations

import heapq
import socket
from typing import NamedTuple

from kseg.ops.verify.report import report_format, write_part
from kseg.ops.verify.run import Report, WorkItem, verify_item, work_items
from kseg.ops.verify.verify import SegmentResult, check_overlap
from kseg.storage.partition import Partition


def _segment_bytes(item: tuple[int, WorkItem]) -> int:
    seg = item[1].segment
    assert seg is not None  # run() bins only the items with a segment
    return seg.log_size()


def plan_bins(items: list, bins: int, size=_segment_bytes) -> list[list]:
    """Deal ``(index, work)`` pairs into ``bins`` lists of about equal bytes (``size`` of an item:
    by default its segment's), largest first, each to the lightest bin."""
    bins = max(1, min(bins, len(items)))
    heap = [(0, b) for b in range(bins)]
    out: list[list] = [[] for _ in range(bins)]
    for item in sorted(items, key=lambda it: -size(it)):
        load, b = heapq.heappop(heap)
        out[b].append(item)
        heapq.heappush(heap, (load + max(size(item), 1), b))
    return out


#: ``--spark-conf spark.kseg.bytesPerTask=N``: the bytes of segments one first-stage task reads (docs/spark.md).
BYTES_PER_TASK_CONF = "spark.kseg.bytesPerTask"
DEFAULT_BYTES_PER_TASK = 1 << 30
#: At most this many segments' results in one second-stage task (one report part file).
SEGMENTS_PER_PART = 10_000


def bytes_per_task(sc) -> int:
    """:data:`BYTES_PER_TASK_CONF` from the Spark configuration (a positive integer), else the default."""
    raw = sc.getConf().get(BYTES_PER_TASK_CONF, None)
    if raw is None:
        return DEFAULT_BYTES_PER_TASK
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{BYTES_PER_TASK_CONF} takes a positive number of bytes, got {raw!r}")
    return value


def bin_count(total_bytes: int, items: int, parallelism: int, per_task: int) -> int:
    """How many first-stage tasks: one per ``per_task`` bytes of data, and at least four per core
    present (so that small runs use every core), never more than the items.  Sized from the data, so
    a fleet's job is not cut into ``4 x`` the few executors registered when it started."""
    by_data = -(-total_bytes // per_task)
    return max(1, min(items, max(by_data, 4 * parallelism)))


def verify_bin(items, strict: bool, max_message_size: int):
    """Runs on an executor: verify each segment (the local command's code); any failure (no such file,
    no credentials, access denied, the network) is a failed segment naming the executor, never a
    corruption row; a local path's asks about the mount."""
    from kseg.spark.paths import MOUNT_HINT
    from kseg.storage.location import is_remote

    host = socket.gethostname()
    for index, item in items:
        res = verify_item(item, strict=strict, max_message_size=max_message_size)
        if res.failed:  # the mount question only where a mount is the answer: not for a URI
            hint = "" if is_remote(item.path) else f" ({MOUNT_HINT})"
            res.failed = f"executor {host}: {res.failed}{hint}"
        yield index, res


class Outcome(NamedTuple):
    """What reaches the driver: the counts, and the results to show (problems and failures; every
    result with ``keep_all``), in discovery order."""

    report: Report
    shown: list[SegmentResult]
    parts: list[str]  # the report's part files, where the executors (and the driver) wrote them


def run(
    spark,
    partitions: list[Partition],
    *,
    strict: bool,
    max_message_size: int,
    report: str | None = None,
    keep_all: bool = True,
) -> Outcome:
    """Verify every segment on the cluster.

    Stage 1 verifies segments in size-balanced bins.  Stage 2 gathers each
    partition's results (small: no record data) in one task, checks
    consecutive segments for overlap as the local command does, writes the
    report's part file for its share of partitions straight from the
    executor, and sends back only counts and the results to show.  A
    partition directory the driver could not list is a failed row made on
    the driver (its own part file).
    """
    items = list(enumerate(work_items(partitions)))
    todo = [(i, item) for i, item in items if item.segment is not None]
    fmt = report_format(report) if report else "jsonl"
    total = Report()
    shown: list[tuple[int, SegmentResult]] = []
    part_files: list[str] = []
    if todo:
        sc = spark.sparkContext
        total_bytes = sum(_segment_bytes(it) for it in todo)
        bins = plan_bins(todo, bin_count(total_bytes, len(todo), sc.defaultParallelism, bytes_per_task(sc)))
        # n bins in n slices: parallelize puts exactly one bin in each Spark partition (no shuffle)
        verified = sc.parallelize(bins, len(bins)).flatMap(lambda b: verify_bin(b, strict, max_message_size))
        by_partition = verified.map(lambda ir: ((ir[1].log_dir, ir[1].partition), ir))
        partitions_seen = len({(it.log_dir, it.partition) for _, it in todo})
        # report parts: 4 per core, or more where a part would hold over SEGMENTS_PER_PART results
        wanted = max(4 * sc.defaultParallelism, -(-len(todo) // SEGMENTS_PER_PART))
        parts = max(1, min(partitions_seen, len(bins), wanted))
        outcomes = (
            by_partition.groupByKey(parts)
            .mapPartitionsWithIndex(lambda n, groups: finish_part(n, groups, report, fmt, keep_all))
            .collect()
        )
        seen = set()
        for counts, part_shown, indexes, part in outcomes:
            if part is not None:
                part_files.append(part)
            total.merge(counts)
            shown.extend(part_shown)
            seen.update(indexes)
        for index, item in todo:
            if index not in seen:  # lost: report it, never drop it
                seg = item.segment
                assert seg is not None  # todo holds only the items with a segment
                res = SegmentResult(item.partition, seg.name, seg.base_offset, seg.log or "", log_dir=item.log_dir)
                res.failed = "no result came back from the cluster for this segment"
                total.add(res, keep=False)
                shown.append((index, res))
    directory_rows = [
        (i, verify_item(item, strict=strict, max_message_size=max_message_size))
        for i, item in items
        if item.segment is None
    ]
    for index, res in directory_rows:
        total.add(res, keep=False)
        shown.append((index, res))
    if report and directory_rows:
        part_files.append(write_part(report, "driver", [res for _, res in directory_rows], fmt))
    shown.sort(key=lambda ir: ir[0])
    return Outcome(total, [res for _, res in shown], part_files)


def finish_part(number: int, groups, report: str | None, fmt: str, keep_all: bool):
    """Runs on an executor (stage 2): overlap checks per partition, this task's part file, the counts.

    Yields one ``(counts, shown, indexes, part)``: ``indexes`` lets the driver see that no segment was
    lost, ``part`` (the part file written, or None) that the report is where it says."""
    results: list[tuple[int, SegmentResult]] = []
    for _, indexed in groups:
        prev = None
        for index, res in sorted(indexed, key=lambda ir: ir[0]):
            if prev is not None:
                check_overlap(prev, res)
            prev = res
            results.append((index, res))
    results.sort(key=lambda ir: ir[0])
    part = write_part(report, f"{number:05d}", [res for _, res in results], fmt) if report else None
    counts = Report()
    for _, res in results:
        counts.add(res, keep=False)
    shown = [(i, res) for i, res in results if keep_all or res.status != "clean"]
    yield counts.counts(), shown, [i for i, _ in results], part
