"""Verify many partition directories: work items, parallel segments, the run's summary.

The unit of work is the segment.  ``--jobs N`` verifies segments in ``N``
processes; results come back in the order of discovery so output is stable.
After all segments of a partition are in, consecutive segments are checked
for overlap -- within one partition of one log directory only: the replicas
of ``orders-0`` under two brokers' log roots are two logs.  A partition
directory that could not be listed is one ``failed`` row (see
:func:`verify_item`).  Like black's ``Report``: counts -> exit code -> summary line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, NamedTuple

from kseg.ops.verify import epochs
from kseg.ops.verify.verify import SegmentResult, check_overlap, verify_segment
from kseg.storage import outcome
from kseg.storage.listing import Listed
from kseg.storage.partition import Partition, Segment
from kseg.storage.workers import working

if TYPE_CHECKING:
    from kseg.storage.context import Store

DIRECTORY = ""  # the ``segment`` of a row standing for a whole partition directory that could not be listed


class WorkItem(NamedTuple):
    """One segment to verify, with the identity of its partition (log directory, name).

    ``segment`` is None for a partition directory that could not be listed; ``error`` says why.  ``store`` is
    the partition's (its segment's): what a row for the directory shows its path by and asks of its place."""

    log_dir: str
    partition: str
    path: str  # the partition directory
    store: Store
    segment: Segment | None
    error: str | None = None
    first: bool = False  # the partition's first segment: it carries what concerns the leader-epoch-checkpoint
    leader_epochs: bool | None = None  # whether the listing held a leader-epoch-checkpoint (None: ask)


def is_directory_row(res: SegmentResult) -> bool:
    """True for the ``failed`` result standing for a partition directory that could not be listed."""
    return res.segment == DIRECTORY


def several_log_dirs(partitions: Iterable[Partition]) -> bool:
    """True when the partitions lie in more than one log directory (outputs then name the directory)."""
    return len({p.log_dir for p in partitions}) > 1


@dataclass
class Report:
    """Outcome counts of a verification run."""

    segments: int = 0
    clean: int = 0
    with_problems: int = 0
    failed: int = 0
    unreadable_dirs: int = 0
    problems: int = 0
    bytes: int = 0
    results: list[SegmentResult] = field(default_factory=list)
    resumed: int = 0  # of ``segments``, those whose rows came from an earlier report (--resume)

    def add(self, res: SegmentResult, keep: bool = True) -> None:
        """Count ``res``; ``keep`` False counts without holding it (a fleet's worth of results)."""
        if keep:
            self.results.append(res)
        if is_directory_row(res):
            self.unreadable_dirs += 1
            return
        self.segments += 1
        self.bytes += res.bytes
        self.problems += res.problem_count
        if res.status == "failed":
            self.failed += 1
        elif res.status == "problems":
            self.with_problems += 1
        else:
            self.clean += 1

    COUNTS = ("segments", "clean", "with_problems", "failed", "unreadable_dirs", "problems", "bytes")

    def counts(self) -> tuple:
        return tuple(getattr(self, name) for name in self.COUNTS)

    def merge(self, counts: tuple) -> None:
        """Add the :meth:`counts` of a report kept elsewhere (a Spark task's)."""
        for name, value in zip(self.COUNTS, counts, strict=True):
            setattr(self, name, getattr(self, name) + value)

    @property
    def exit_code(self) -> int:
        """:func:`kseg.storage.outcome.exit_code` of what was found: a segment that could not be verified
        or a directory that could not be listed is an input not read (2); problems found, 1."""
        return outcome.exit_code((), problems=bool(self.problems), failed=bool(self.failed or self.unreadable_dirs))


def work_items(partitions: Iterable[Partition | Listed]) -> list[WorkItem]:
    """Every segment of ``partitions`` in discovery order (a compact listing's too: a Spark task's share);
    one item for a directory that could not be listed."""
    items = []
    for p in partitions:
        if p.error is not None:
            items.append(WorkItem(p.log_dir, p.name, p.path, p.store, None, p.error))
            continue
        first = not p.head_left_out  # the log's first segment carries what concerns the leader-epoch-checkpoint
        items.extend(
            WorkItem(p.log_dir, p.name, p.path, p.store, seg, None, first and i == 0, p.leader_epochs)
            for i, seg in enumerate(p.segments)
        )
    return items


def verify_item(item: WorkItem, *, strict: bool, max_message_size: int) -> SegmentResult:
    """Verify one work item; any failure is a ``failed`` result, never a missing or clean one."""
    seg = item.segment
    if seg is None:
        res = SegmentResult(item.partition, DIRECTORY, -1, item.path, log_dir=item.log_dir, names=item.store.names)
        res.failed = item.error
        return res
    try:
        check = epochs.epoch_check(item.path, item.leader_epochs, store=seg.store)
        res = verify_segment(item.partition, seg, strict=strict, max_message_size=max_message_size, epochs=check)
        epochs.report(res, item.path, check, item.first, item.leader_epochs, store=seg.store)
    except Exception as exc:  # an unexpected failure is a failed segment, never a clean one
        path = seg.log or seg.index or ""
        res = SegmentResult(item.partition, seg.name, seg.base_offset, path, names=seg.store.names)
        res.failed = f"{type(exc).__name__}: {exc}"
    res.log_dir = item.log_dir
    return res


def _verify(job: tuple[WorkItem, bool, int]) -> SegmentResult:
    item, strict, max_message_size = job
    return verify_item(item, strict=strict, max_message_size=max_message_size)


def verify_all(
    partitions: list[Partition],
    *,
    strict: bool = False,
    jobs: int = 1,
    max_message_size: int,
    on_result: Callable[[SegmentResult], None] | None = None,
    before: dict[tuple[str, str, str], SegmentResult] | None = None,
) -> Report:
    """Verify every segment of ``partitions``; ``on_result`` sees each as it completes, in order.
    ``before``: for a segment whose previous one is not verified here (``--resume``), that one."""
    items = [(item, strict, max_message_size) for item in work_items(partitions)]
    report = Report()
    if jobs > 1 and len(items) > 1:
        died = "a verifying process died (killed, or out of memory?); run again with --jobs 1 to see which segment"
        with working(jobs, died) as pool:
            results = pool.map(_verify, items, chunksize=max(1, len(items) // (jobs * 8)))
            collect(results, report, on_result, before)
    else:
        collect(map(_verify, items), report, on_result, before)
    return report


def previous_of(res: SegmentResult, before: dict[tuple[str, str, str], SegmentResult] | None) -> SegmentResult | None:
    """The segment before ``res`` that ``--resume`` did not verify again (its last offset from the
    report: :mod:`kseg.ops.verify.resume`), or None."""
    return before.get((res.log_dir, res.partition, res.segment)) if before else None


def collect(results: Iterable[SegmentResult], report: Report, on_result=None, before=None) -> None:
    """Add results (in discovery order) to ``report``, checking consecutive segments for overlap.

    Only segments of the same partition in the same log directory are compared; a segment after one
    ``--resume`` skipped (``before``) is compared with that one."""
    prev = None
    for res in results:
        resumed = previous_of(res, before)
        if resumed is not None:
            check_overlap(resumed, res)
        elif (
            prev is not None
            and prev.partition == res.partition
            and prev.log_dir == res.log_dir
            and not is_directory_row(prev)
            and not is_directory_row(res)
        ):
            check_overlap(prev, res)
        prev = res
        report.add(res)
        if on_result is not None:
            on_result(res)
