"""Planning ``verify-index --spark``'s bins from the compact listing, and how many tasks a job has.

The driver holds the listing compactly (:mod:`kseg.storage.listing`) and
plans from its names and sizes alone: :func:`bin_count` tasks, from the
bytes (``spark.kseg.bytesPerTask``) and the cores present; each partition's
segments cut into *runs* of consecutive segments of about one bin's share
(:func:`plan_runs`), the runs dealt into bins largest first, each to the
lightest bin (:func:`plan_bins`, longest-processing-time first), so one huge
partition does not become one straggler task.  A run is a
:class:`Run` -- a reference to its listed partition and four numbers -- so
what the driver holds grows with the partitions and bins, not the segments;
a bin's task is given its runs' partitions cut to their segments
(:meth:`Run.share`) and makes the work items itself (:func:`indexed`).
``export --spark`` sizes its tasks with :func:`bin_count` too.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from kseg.ops.verify.run import WorkItem, work_items
from kseg.spark.pool import positive_conf
from kseg.storage.listing import Listed

Indexed = tuple[int, WorkItem]
#: A task's share of the listing: runs, each the index of its first segment and the run's partition cut to
#: its segments (:meth:`~kseg.storage.listing.Listed.cut`); the task makes the work items (:func:`indexed`).
Share = list[tuple[int, Listed]]


class Run(NamedTuple):
    """Consecutive segments ``lo`` to ``hi`` (exclusive) of the listed partition ``part`` (a reference:
    the driver holds no ``Segment`` nor work item), ``first`` the index of segment ``lo`` among the
    job's work items in discovery order (every segment, and a partition not listed as one), ``bytes``
    their listed ``.log`` bytes."""

    part: Listed
    lo: int
    hi: int
    first: int
    bytes: int

    @property
    def last(self) -> int:
        """The index of the run's last segment."""
        return self.first + self.hi - self.lo - 1

    def share(self) -> tuple[int, Listed]:
        """What a task is given for this run: its first index and its partition cut to its segments."""
        whole = self.lo == 0 and self.hi == len(self.part)
        return self.first, self.part if whole else self.part.cut(self.lo, self.hi)

    def key(self) -> tuple[str, str]:
        """Its partition: (log directory, name)."""
        return (self.part.log_dir, self.part.name)

    def first_name(self) -> tuple[str, str, str]:
        """Its first segment: (log directory, partition, segment name) as ``--resume``'s names."""
        (seg,) = self.part.cut(self.lo, self.lo + 1).segments
        return (*self.key(), seg.name)


def indexed(share: Share) -> Iterator[Indexed]:
    """The work items of a task's share, each with its index (:func:`~kseg.ops.verify.run.work_items` of
    each run's cut: a cut after a partition's first segment has its head left out)."""
    for first, part in share:
        for j, item in enumerate(work_items([part])):
            yield first + j, item


def plan_bins(items: list, bins: int, size: Callable[[Any], int] = lambda item: item.bytes) -> list[list]:
    """Deal ``items`` into ``bins`` lists of about equal bytes (``size`` of an item: by default its
    ``bytes``), largest first, each to the lightest bin."""
    bins = max(1, min(bins, len(items)))
    heap = [(0, b) for b in range(bins)]
    out: list[list] = [[] for _ in range(bins)]
    for item in sorted(items, key=lambda it: -size(it)):
        load, b = heapq.heappop(heap)
        out[b].append(item)
        heapq.heappush(heap, (load + max(size(item), 1), b))
    return out


def plan_runs(listing: Sequence[Listed], run_bytes: int) -> list[Run]:
    """Cut each listed partition's segments (in discovery order; a partition not listed is one index, no
    run) into runs of consecutive segments of at most ``run_bytes`` (at least one segment each)."""
    runs: list[Run] = []
    index = 0
    for part in listing:
        if part.error is not None:
            index += 1
            continue
        lo = size = 0
        for k, n in enumerate(part.sizes):
            if k > lo and size + n > run_bytes:
                runs.append(Run(part, lo, k, index + lo, size))
                lo, size = k, 0
            size += n
        if len(part):
            runs.append(Run(part, lo, len(part), index + lo, size))
        index += len(part)
    return runs


def plan(listing: Sequence[Listed], parallelism: int, per_task: int) -> list[list[Run]]:
    """The bins: :func:`bin_count` of them from the listed bytes, each partition's segments cut into runs of
    about one bin's share (:func:`plan_runs`), the runs dealt largest first (:func:`plan_bins`).  Held: a
    :class:`Run` per run, referring to the listing -- nothing a segment."""
    segments = total = 0
    for part in listing:
        if part.error is None:
            segments, total = segments + len(part), total + sum(part.sizes)
    if not segments:
        return []
    count = bin_count(total, segments, parallelism, per_task)
    runs = plan_runs(listing, max(1, -(-total // count)))
    return plan_bins(runs, count)


#: ``--spark-conf spark.kseg.bytesPerTask=N``: the bytes of segments one task reads (docs/spark.md).
BYTES_PER_TASK_CONF = "spark.kseg.bytesPerTask"
DEFAULT_BYTES_PER_TASK = 1 << 30


def bytes_per_task(sc: Any) -> int:
    """:data:`BYTES_PER_TASK_CONF` from the Spark configuration (a positive integer), else the default."""
    return positive_conf(sc, BYTES_PER_TASK_CONF, DEFAULT_BYTES_PER_TASK, " of bytes")


def bin_count(total_bytes: int, items: int, parallelism: int, per_task: int) -> int:
    """How many tasks: one per ``per_task`` bytes of data, and at least four per core present (so that
    small runs use every core), never more than the items.  Sized from the data, so a fleet's job is not
    cut into ``4 x`` the few executors registered when it started."""
    by_data = -(-total_bytes // per_task)
    return max(1, min(items, max(by_data, 4 * parallelism)))
