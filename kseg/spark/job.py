"""The Spark job: segments spread over tasks by size, each verified by the local code.

Discovery runs on the driver.  The unit of work is the segment: segments are
sorted by size and dealt into bins, largest first, each to the lightest bin
(longest-processing-time first), so one huge partition does not become one
straggler task.  Each bin is one Spark partition; each task runs
:func:`kseg.storage.verify.verify_segment` — the local command's code — on
its segments, reading them by path (the paths must be visible to executors:
a shared mount).  A segment whose task cannot read it comes back as a
``failed`` segment naming the executor host, never as a clean one.
"""

from __future__ import annotations

import heapq
import os
import socket

from kseg.storage.partition import Partition
from kseg.storage.verify import SegmentResult
from kseg.storage.verify_run import WorkItem, verify_item, work_items


def plan_bins(items: list[tuple[int, WorkItem]], bins: int) -> list[list[tuple[int, WorkItem]]]:
    """Deal ``(index, work item)`` pairs into ``bins`` lists of about equal bytes."""
    bins = max(1, min(bins, len(items)))
    heap = [(0, b) for b in range(bins)]
    out: list[list] = [[] for _ in range(bins)]
    for item in sorted(items, key=lambda it: -it[1].segment.log_size()):
        load, b = heapq.heappop(heap)
        out[b].append(item)
        heapq.heappush(heap, (load + max(item[1].segment.log_size(), 1), b))
    return out


def verify_bin(items, strict: bool, max_message_size: int):
    """Runs on an executor: verify each segment (the local command's code); any failure is a failed
    segment naming the executor."""
    host = socket.gethostname()
    for index, item in items:
        res = verify_item(item, strict=strict, max_message_size=max_message_size)
        if res.failed:
            res.failed = f"executor {host}: {res.failed} (is the path on a mount every executor sees?)"
        yield index, res


def run(spark, partitions: list[Partition], *, strict: bool, max_message_size: int) -> list[SegmentResult]:
    """Verify every segment on the cluster; results in discovery order.

    A partition directory the driver could not list is a failed row made on the driver."""
    items = list(enumerate(work_items(partitions)))
    todo = [(i, item) for i, item in items if item.segment is not None]
    got: dict[int, SegmentResult] = {}
    if todo:
        sc = spark.sparkContext
        bins = plan_bins(todo, sc.defaultParallelism * 4)
        # n bins in n slices: parallelize puts exactly one bin in each Spark partition (no shuffle)
        rdd = sc.parallelize(bins, len(bins))
        got = dict(rdd.flatMap(lambda b: verify_bin(b, strict, max_message_size)).collect())
    results = []
    for index, item in items:
        if item.segment is None:
            results.append(verify_item(item, strict=strict, max_message_size=max_message_size))
            continue
        res = got.get(index)
        if res is None:  # lost: report it, never drop it
            seg = item.segment
            res = SegmentResult(item.partition, seg.name, seg.base_offset, seg.log or "", log_dir=item.log_dir)
            res.failed = "no result came back from the cluster for this segment"
        results.append(res)
    return results


def dataframe(spark, all_rows: list[dict]):
    """The report rows as one DataFrame (segment and problem rows share one schema; nulls where n/a)."""
    from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

    schema = StructType([
        StructField("type", StringType(), False),
        StructField("logDir", StringType()),
        StructField("partition", StringType(), False),
        StructField("segment", StringType()),
        StructField("path", StringType()),
        StructField("bytes", LongType()),
        StructField("batches", LongType()),
        StructField("problems", LongType()),
        StructField("status", StringType()),
        StructField("error", StringType()),
        StructField("notes", ArrayType(StringType())),
        StructField("file", StringType()),
        StructField("kind", StringType()),
        StructField("message", StringType()),
        StructField("position", LongType()),
        StructField("entry", LongType()),
        StructField("expected", StringType()),
        StructField("found", StringType()),
    ])
    names = schema.fieldNames()
    return spark.createDataFrame([tuple(row.get(n) for n in names) for row in all_rows], schema)


def write_report(spark, path: str, all_rows: list[dict]) -> None:
    """JSON Lines or Parquet by extension.  A local path gets one file (JSON Lines written by
    the driver, exactly the local command's rows); a URI (``s3a://``, ``hdfs://``) gets
    Spark's directory output."""
    from kseg.storage.report import write_jsonl

    local = "://" not in path or path.startswith("file://")
    if path.endswith(".parquet"):
        df = dataframe(spark, all_rows).coalesce(1)
        df.write.mode("overwrite").parquet(path if not local else os.path.abspath(path.replace("file://", "")))
    elif local:
        write_jsonl(path.replace("file://", ""), all_rows)
    else:
        dataframe(spark, all_rows).coalesce(1).write.mode("overwrite").json(path)
