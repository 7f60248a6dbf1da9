"""The Spark job: segments in runs, runs in bins, each bin its own Spark job, each verified by the local code.

The driver lists into the compact listing and plans the bins from it
(:mod:`kseg.spark.bins`: each partition's segments cut into *runs* of about one
bin's share of the bytes, the runs dealt largest first, each to the lightest
bin; a run a reference to its partition and four numbers, never a segment).
Each bin is **its own Spark job** of one task, submitted from a bounded pool
of driver threads; the task is given its runs' share of the listing, makes
their work items and runs
:func:`kseg.ops.verify.verify.verify_segment` -- the local command's code --
on its segments, reading them by path or URI (a local path must be on a mount
every executor sees; ``s3://`` and other URIs are read with ranged requests).

A segment the task cannot read comes back as a ``failed`` segment naming the
executor host.  A bin whose task keeps dying (Spark's task retries,
``spark.task.maxFailures``, exhausted: the Python worker killed, an executor
out of memory) fails only its own job: its segments become ``failed`` rows
naming the cause, and every other bin's rows stand (a *partial verdict*, exit 2).

As each bin finishes, the driver checks its segments for overlap (within a run,
and at a run's start against the previous run's last offset once that run's bin
is done) and writes the bin's rows to the report as one part file: a driver
killed mid-run leaves the finished bins' rows (no ``_SUCCESS``) for ``--resume``.
"""

from __future__ import annotations

import heapq
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from kseg.ops.verify.report import report_format, write_part
from kseg.ops.verify.run import Report, WorkItem, previous_of, verify_item
from kseg.ops.verify.verify import SegmentResult, check_overlap
from kseg.render.notes import NoteGroups
from kseg.render.verify import note_groups
from kseg.spark.bins import Indexed, Run, Share, bytes_per_task, indexed, plan
from kseg.spark.pool import context_stopped, run_jobs
from kseg.spark.spool import Spool
from kseg.storage.context import Carried
from kseg.storage.listing import Listed
from kseg.storage.partition import Partition

if TYPE_CHECKING:
    from kseg.storage.outputs import Destination

#: ``--resume``: a segment verified after one it skipped (logDir, partition, segment) -> that one.
Before = dict[tuple[str, str, str], SegmentResult]

#: Test-only (docs/spark.md): a segment file name; the Python worker verifying it dies (``os._exit``).
KILL_WORKER_ENV = "KSEG_TEST_KILL_WORKER"


def verify_bin(share: Share, strict: bool, max_message_size: int) -> Iterator[tuple[int, SegmentResult]]:
    """Runs on an executor: make the work items of the task's share of the listing (:func:`indexed`) and
    verify each segment (the local command's code); any failure (no such file,
    no credentials, access denied, the network) is a failed segment naming the executor, never a
    corruption row; a local path's asks about the mount."""
    from kseg.spark.paths import MOUNT_HINT

    host = socket.gethostname()
    poison = os.environ.get(KILL_WORKER_ENV)
    for index, item in indexed(share):
        if poison and _poisoned(item, poison):
            os._exit(17)  # test-only: a Python worker that dies, as an out-of-memory kill would end it
        res = verify_item(item, strict=strict, max_message_size=max_message_size)
        if res.failed:  # the mount question only where a mount is the answer: not for a URI
            hint = "" if item.store.remote else f" ({MOUNT_HINT})"
            res.failed = f"executor {host}: {res.failed}{hint}"
        yield index, res


def _poisoned(item: WorkItem, poison: str) -> bool:
    """The ``partition/segment`` named by :data:`KILL_WORKER_ENV` (``topic-0/00000000000000000000``)?"""
    return item.segment is not None and poison == f"{item.partition}/{item.segment.name}"


class Outcome(NamedTuple):
    """What reaches the driver: the counts, the results held (problems and failures; every result with
    ``keep_all``) in discovery order, the clean ones spooled to disk (without ``keep_all``), and -- without
    ``keep_all`` -- every result's notes grouped by kind as the local run groups them, folded in as results
    came (a clean segment is not held for its notes)."""

    report: Report
    shown: list[tuple[int, SegmentResult]]  # (index in discovery order, result)
    parts: list[str]  # the report's part files, where the driver wrote them
    notes: NoteGroups | None  # None with ``keep_all``: each result's notes are printed with it
    clean: Spool  # the clean results not held (without ``keep_all``): closed by :meth:`close`

    def in_order(self) -> Iterator[SegmentResult]:
        """Every result, in discovery order: the ones held merged with the spooled clean ones."""
        for _, res in heapq.merge(self.shown, self.clean.merged(), key=lambda pair: pair[0]):
            yield res

    def close(self) -> None:
        self.clean.close()


def unverified(item: WorkItem, why: str) -> SegmentResult:
    """A ``failed`` row for a segment whose bin gave no results (its task kept failing)."""
    seg = item.segment
    assert seg is not None
    res = SegmentResult(
        item.partition, seg.name, seg.base_offset, seg.log or "", log_dir=item.log_dir, names=seg.store.names
    )
    res.failed = why
    return res


class _Bins:
    """The driver's bookkeeping as bins finish: overlap at run starts, part files, counts, what to show.

    A bin is *settled* (its rows final, its part file written) once every run in it that continues an
    earlier run of its partition knows that run's last segment: finished, or given up.  What it holds
    past settling is bounded by what is printed: the results with problems or failures (every result
    with ``keep_all``), and the notes grouped (:class:`~kseg.render.notes.NoteGroups`: kinds, counts and
    first places) -- never a clean segment, nor a run's last segment once the run after it is settled
    (:meth:`held`)."""

    def __init__(
        self, bins: list[list[Run]], report: Destination | None, keep_all: bool, before: Before | None = None
    ) -> None:
        self.report, self.keep_all = report, keep_all
        self.fmt = "jsonl" if report is None else report_format(report.path)
        self.before = before  # a segment after one --resume skipped -> that one (kseg.ops.verify.resume)
        self.total = Report()
        self.shown: list[tuple[int, SegmentResult]] = []
        self.notes = None if keep_all else note_groups()  # every result's notes, in discovery order
        self.clean = Spool()  # without keep_all, the clean results (on disk: kseg.spark.spool)
        self.parts: list[str] = []
        self.bin_of: dict[int, int] = {}  # a run's last segment's index -> its bin (only those a later run needs)
        self.needs: list[list[tuple[int, int]]] = []  # per bin: (first index of a run, index of the one before)
        self.last: dict[int, SegmentResult | None] = {}  # such a segment's result, until used (None: bin failed)
        self.done: dict[int, list[tuple[int, SegmentResult]]] = {}  # finished bins not yet settled
        previous: dict[tuple[str, str], int] = {}  # a partition's runs in discovery order, whichever bin
        order = sorted(((run, b) for b, runs in enumerate(bins) for run in runs), key=lambda rb: rb[0].first)
        self.needs = [[] for _ in bins]
        for run, b in order:
            key = run.key()
            earlier = previous.get(key, -1)
            if earlier >= 0 and not (self.before and run.first_name() in self.before):
                self.needs[b].append((run.first, earlier))
            previous[key] = run.last
        needed = {earlier for needs in self.needs for _, earlier in needs}
        for run, b in order:
            if run.last in needed:
                self.bin_of[run.last] = b

    def finished(self, number: int, results: list[tuple[int, SegmentResult]]) -> None:
        """Bin ``number`` came back (its results in index order, or failed rows); settle what can be."""
        results.sort(key=lambda ir: ir[0])
        by_index = dict(results)
        for index, res in results:  # within a run: consecutive indexes of one partition
            prev = previous_of(res, self.before) or by_index.get(index - 1)
            if prev is not None and _key_of(prev) == _key_of(res) and not _run_start(self.needs[number], index):
                check_overlap(prev, res)
        for index, res in results:
            if self.bin_of.get(index) == number:
                self.last[index] = None if res.failed else res
        self.done[number] = results
        for b in [b for b in self.done if all(before in self.last for _, before in self.needs[b])]:
            self._settle(b)

    def _settle(self, number: int) -> None:
        results = self.done.pop(number)
        by_index = dict(results)
        for first, before in self.needs[number]:
            prev = self.last.pop(before)  # used once: by the run after it
            if prev is not None:
                check_overlap(prev, by_index[first])
        if self.report is not None:
            self.parts.append(write_part(self.report, f"{number:05d}", [res for _, res in results], self.fmt))
        for index, res in results:
            self.keep(index, res)
        if not self.keep_all:  # printed at the end as the local run prints them, read back from disk
            self.clean.add((index, res) for index, res in results if res.status == "clean")

    def keep(self, index: int, res: SegmentResult) -> None:
        """Count a final result; hold it if it is printed whole, and fold its notes into :attr:`notes`."""
        self.total.add(res, keep=False)
        if self.keep_all or res.status != "clean":
            self.shown.append((index, res))
        if self.notes is not None:
            for j, note in enumerate(res.notes):
                self.notes.add(note, at=(index, j))

    def held(self) -> int:
        """How many things the driver holds now: results (shown, waiting in unsettled bins, or a run's
        last for the run after it) and grouped notes' kinds and places -- for a test that it does not
        grow with the clean segments."""
        waiting = sum(len(results) for results in self.done.values())
        notes = self.notes.held() if self.notes is not None else 0
        return len(self.shown) + waiting + len(self.last) + notes


def _key_of(res: SegmentResult) -> tuple[str, str]:
    return (res.log_dir, res.partition)


def _run_start(needs: list[tuple[int, int]], index: int) -> bool:
    return any(first == index for first, _ in needs)


def run(
    spark: Any,
    partitions: Sequence[Listed | Partition],
    *,
    strict: bool,
    max_message_size: int,
    report: Destination | None = None,
    keep_all: bool = True,
    describe: Callable[[BaseException], str] = str,
    before: Before | None = None,
) -> Outcome:
    """Verify every segment on the cluster, one Spark job per bin, a bounded number at once.

    ``partitions`` is the listing, compact (:func:`kseg.storage.stores.find.discover_as` packing each as a
    :class:`kseg.storage.listing.Listed`; a
    :class:`~kseg.storage.partition.Partition` is packed here): the bins are planned from it
    (:func:`plan`) and each bin's task is given its share of it (:meth:`Run.share`), so what the driver
    holds does not grow with the segments.  A bin's job that fails (its task's retries exhausted) makes
    its segments ``failed`` rows (``describe`` gives the cause's line); the other bins' rows stand.  If
    the SparkContext itself is gone, the error is raised (nothing more can run).  A partition directory
    the driver could not list is a failed row made on the driver (its own part file)."""
    listing = [Listed(p) if isinstance(p, Partition) else p for p in partitions]
    bins: list[list[Run]] = []
    if any(part.error is None and len(part) for part in listing):
        sc = spark.sparkContext
        bins = plan(listing, sc.defaultParallelism, bytes_per_task(sc))
    state = _Bins(bins, report, keep_all, before)
    if bins:
        _submit_all(spark.sparkContext, bins, state, strict, max_message_size, describe)
    directory_rows = [
        (i, verify_item(item, strict=strict, max_message_size=max_message_size))
        for i, item in _directory_items(listing)
    ]
    for index, res in directory_rows:
        state.keep(index, res)
    if report is not None and directory_rows:
        state.parts.append(write_part(report, "driver", [res for _, res in directory_rows], state.fmt))
    state.shown.sort(key=lambda ir: ir[0])
    return Outcome(state.total, state.shown, state.parts, state.notes, state.clean)


def _directory_items(listing: Sequence[Listed]) -> Iterator[Indexed]:
    """The partitions that could not be listed, each one work item at its index in discovery order."""
    index = 0
    for part in listing:
        if part.error is not None:
            yield index, WorkItem(part.log_dir, part.name, part.path, part.store, None, part.error)
            index += 1
        else:
            index += len(part)


def _submit_all(
    sc: Any,
    bins: list[list[Run]],
    state: _Bins,
    strict: bool,
    max_message_size: int,
    describe: Callable[[BaseException], str],
) -> None:
    """Run each bin as its own Spark job (:func:`kseg.spark.pool.run_jobs`), its task given the bin's share
    of the listing (made as the bin is submitted, let go after); a bin of several segments whose job
    failed is run again one segment a job (:func:`_one_by_one`), so only a segment whose own job fails is
    a ``failed`` row with the cause; hand each outcome to ``state``."""

    def verify(share: Share, what: str) -> list[tuple[int, SegmentResult]]:
        sc.setJobDescription(f"kseg verify-index: {what}")
        task = Carried(lambda b: verify_bin(b, strict, max_message_size))  # --rsm-key reaches the executor
        return sc.parallelize([share], 1).flatMap(task).collect()

    def one(number: int) -> list[tuple[int, SegmentResult]]:
        runs = bins[number]
        segments = sum(run.hi - run.lo for run in runs)
        try:
            return verify([run.share() for run in runs], f"bin {number + 1} of {len(bins)} ({segments} segments)")
        except Exception as exc:  # noqa: BLE001 - the bin's retries ran out: its segments one by one
            if segments == 1 or _stopping(sc, exc):
                raise
            return _one_by_one(
                sc, runs, lambda single, label: verify(single, f"bin {number + 1} again: {label}"), describe
            )

    def done(number: int, results: list[tuple[int, SegmentResult]] | None, exc: BaseException | None) -> None:
        if exc is not None:
            why = gave_up(describe(exc))
            results = [(index, unverified(item, why)) for index, item in indexed([r.share() for r in bins[number]])]
        assert results is not None
        state.finished(number, list(results))

    run_jobs(sc, len(bins), one, done)


def gave_up(cause: str) -> str:
    """The ``error`` of a segment whose own Spark job failed (its task's retries exhausted)."""
    return f"not verified: Spark gave up this segment's task (spark.task.maxFailures reached): {cause}"


def _stopping(sc: Any, exc: BaseException) -> bool:
    """The job failed because the run is ending (the SparkContext gone; its jobs cancelled on Ctrl-C or a
    closed stdout: :func:`kseg.spark.pool.run_jobs`), not because of its task: nothing to run again."""
    return context_stopped(sc) or " cancelled" in str(exc)


def _label(item: WorkItem) -> str:
    assert item.segment is not None
    return f"{item.partition}/{item.segment.name}"


def _one_by_one(
    sc: Any,
    runs: list[Run],
    verify: Callable[[Share, str], list[tuple[int, SegmentResult]]],
    describe: Callable[[BaseException], str],
) -> list[tuple[int, SegmentResult]]:
    """A failed bin's segments, each its own Spark job (in turn, on this bin's thread; its share one
    segment cut from the listing): the segments that verify get their verdicts; one whose job fails too is
    a ``failed`` row with its own job's cause."""
    out: list[tuple[int, SegmentResult]] = []
    for run in runs:
        for k in range(run.lo, run.hi):
            single: Share = [(run.first + k - run.lo, run.part.cut(k, k + 1))]
            ((index, item),) = indexed(single)
            try:
                out.extend(verify(single, _label(item)))
            except Exception as exc:  # noqa: BLE001 - this segment's own job failed
                if _stopping(sc, exc):
                    raise
                out.append((index, unverified(item, gave_up(describe(exc)))))
    return out
