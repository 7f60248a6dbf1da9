"""``kseg verify-index``'s output as the results come (locally, in one process or ``--jobs``): each segment's
lines (:func:`kseg.render.verify.render_result`), notes grouped by kind unless ``--verbose``, the
per-partition table on a terminal, a progress bar, and the summary line.  See ``docs/verify-index.md``."""

from __future__ import annotations

from typing import Any, BinaryIO

from kseg.ops.verify.result import SegmentResult
from kseg.ops.verify.run import Report, several_log_dirs, work_items
from kseg.render import progress as progress_mod
from kseg.render import table
from kseg.render.notes import Repeats
from kseg.render.verify import PartitionSummary, note_groups, render_result, render_summary


class VerifyOutput:
    """Prints the results of verifying ``partitions`` on ``out`` in ``output_format`` (text or json):
    :meth:`add` each result in order, :meth:`finish` with the run's report, :meth:`close` always."""

    def __init__(
        self, out: BinaryIO, partitions: list[Any], *, output_format: str, quiet: bool, verbose: bool, jobs: int
    ) -> None:
        self.output_format = output_format
        self._total: int | None = None
        self.quiet = quiet
        self.jobs = jobs
        self.full_names = several_log_dirs(partitions)
        self.progress = progress_mod.make(quiet, screen=True)
        self.done = 0
        self.labels: list[str] = []
        if self.progress is not None:
            items = work_items(partitions)
            total = sum(item.segment.log_size() for item in items if item.segment is not None)
            if jobs == 1:  # the bytes this process reads, inside each segment (once told whose: follow)
                self.progress.reads("verify-index", total)
                self._total = total
            else:  # the workers read: a segment at a time, as results come
                self.progress.start("verify-index", total)
                self.labels = [
                    f"{it.partition}/{it.segment.stem}.log" if it.segment is not None else it.partition for it in items
                ]
            out = self.progress.writer(out)
        self.out = out
        text = output_format == "text"
        self.per_partition = PartitionSummary(self.full_names) if text and table.wanted(out) else None
        self.groups = note_groups() if text and not verbose else None
        self.repeats = Repeats() if text and verbose else None
        self._next_label()

    def follow(self, observers: Any) -> None:
        """Follow, with one process reading, the bytes read under the read context whose ``observers``
        are given (:class:`kseg.storage.context.Observers`)."""
        if self.progress is not None and self._total is not None:
            self.progress.follow(observers)

    def _next_label(self) -> None:
        if self.progress is not None and self.labels:  # results come in order: the next one is being read
            self.progress.describe(self.labels.pop(0))

    def add(self, res: SegmentResult) -> None:
        """One segment's (or unlistable directory's) result."""
        render_result(
            self.out,
            res,
            self.output_format,
            self.full_names,
            notes=self.groups,
            quiet=self.quiet,
            repeats=self.repeats,
        )
        if self.per_partition is not None:
            self.per_partition.add(res)
        if self.progress is not None and self.jobs > 1:
            self.done += res.bytes
            self._next_label()
            self.progress.advance_to(self.done)

    def finish(self, result: Report) -> None:
        """The grouped notes, the per-partition table and the summary line."""
        if self.groups is not None and not self.quiet:
            self.groups.write(self.out)
        if self.per_partition is not None:
            self.per_partition.write(self.out)
        render_summary(self.out, result, self.output_format)
        self.out.flush()

    def close(self) -> None:
        """The progress bar goes (whether the run finished or not)."""
        if self.progress is not None:
            self.progress.close()
