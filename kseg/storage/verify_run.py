"""Verify many partition directories: discovery, parallel segments, the run's summary.

The unit of work is the segment.  ``--jobs N`` verifies segments in ``N``
processes; results come back in the order of discovery so output is stable.
After all segments of a partition are in, consecutive segments are checked
for overlap.  Like black's ``Report``: counts → exit code → summary line.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable

from kseg.storage.partition import Partition, Segment
from kseg.storage.verify import SegmentResult, check_overlap, verify_segment

EXIT_CLEAN, EXIT_PROBLEMS, EXIT_ERROR = 0, 1, 2


@dataclass
class Report:
    """Outcome counts of a verification run."""

    segments: int = 0
    clean: int = 0
    with_problems: int = 0
    failed: int = 0
    problems: int = 0
    bytes: int = 0
    results: list[SegmentResult] = field(default_factory=list)

    def add(self, res: SegmentResult) -> None:
        self.results.append(res)
        self.segments += 1
        self.bytes += res.bytes
        self.problems += len(res.problems)
        if res.status == "failed":
            self.failed += 1
        elif res.status == "problems":
            self.with_problems += 1
        else:
            self.clean += 1

    @property
    def exit_code(self) -> int:
        if self.failed:
            return EXIT_ERROR
        return EXIT_PROBLEMS if self.problems else EXIT_CLEAN

    def summary(self) -> str:
        parts = [f"{self.segments} segment{'s' * (self.segments != 1)} verified ({self.bytes} bytes)",
                 f"{self.clean} clean"]
        if self.with_problems:
            parts.append(f"{self.with_problems} with problems ({self.problems} problem{'s' * (self.problems != 1)})")
        if self.failed:
            parts.append(f"{self.failed} failed")
        return ", ".join(parts) + "."


def work_items(partitions: Iterable[Partition]) -> list[tuple[str, Segment]]:
    return [(p.name, seg) for p in partitions for seg in p.segments]


def _verify(item: tuple[str, Segment, bool, int]) -> SegmentResult:
    name, seg, strict, max_message_size = item
    try:
        return verify_segment(name, seg, strict=strict, max_message_size=max_message_size)
    except Exception as exc:  # an unexpected failure is a failed segment, never a clean one
        res = SegmentResult(name, seg.name, seg.base_offset, seg.log or seg.index or "")
        res.failed = f"{type(exc).__name__}: {exc}"
        return res


def verify_all(partitions: list[Partition], *, strict: bool = False, jobs: int = 1, max_message_size: int,
               on_result: Callable[[SegmentResult], None] | None = None) -> Report:
    """Verify every segment of ``partitions``; ``on_result`` sees each as it completes, in order."""
    items = [(name, seg, strict, max_message_size) for name, seg in work_items(partitions)]
    report = Report()
    if jobs > 1 and len(items) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = pool.map(_verify, items, chunksize=max(1, len(items) // (jobs * 8)))
            collect(results, report, on_result)
    else:
        collect(map(_verify, items), report, on_result)
    return report


def collect(results: Iterable[SegmentResult], report: Report, on_result=None) -> None:
    """Add results (in discovery order) to ``report``, checking consecutive segments for overlap."""
    prev = None
    for res in results:
        if prev is not None and prev.partition == res.partition:
            check_overlap(prev, res)
        prev = res
        report.add(res)
        if on_result is not None:
            on_result(res)
