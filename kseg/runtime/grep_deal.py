"""``kseg grep --jobs N`` and ``--spark``: the search dealt out as tasks, printed as one process prints it.

A task is a run of consecutive segments of one partition (:func:`deal`; with ``--jobs`` as many segments a
task as make a few tasks a process, so one large partition is searched by every process; on Spark a
partition's segments in one task).  A task searches its segments in offset order (:func:`search_into`),
writing what it prints to a spool file of a private temporary directory (Spark: memory) and its stderr
lines aside; with ``--limit`` it notes, at each match, where the output and stderr end and what it had
read so far (a :class:`Mark`).

:class:`Merge` walks the partitions' steps in order -- the segments skipped by their names, then each task's
answer -- as one process walks them: it copies each answer to the output, cutting it at the match where
``--limit`` is reached (what one process would have read then, and nothing after); it drops the later tasks
of a partition whose answer says no later segment can match (past an offset range's end) or that could not
be read (its error line, as one process stops there); it prints a partition's count once its tasks are in.
So the output is the bytes one process prints, stdout and stderr, whatever the tasks' order of completion.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from kseg.errors import KsegError
from kseg.limits import EXIT_OK
from kseg.ops.grep.search import Budget, Searched, Searcher, plan
from kseg.render.grep import GrepSink
from kseg.runtime.run import Run

TASKS_A_PROCESS = 8  # tasks dealt a process (at least): a large partition's segments spread over all


@dataclass(frozen=True)
class Task:
    """Segments of one partition to search: ``partition`` holding only them, in offset order."""

    partition: Any
    query: Any
    output: Any  # kseg.runtime.grep.Output
    bytes_limit: int
    limit: int | None
    spool_dir: str


class Mark(NamedTuple):
    """Where a task stood at one of its matches: the ends of its output and of its stderr, the segments
    it had opened and skipped, the places not read it had said."""

    out: int
    err: int
    segments: int
    skipped: int
    unread: int


@dataclass
class Done:
    """A task's answer: what it read (None: it never ran, ``error`` says why), whether no later segment of
    its partition can match (``stopped``), what it prints on stdout (a spool file, or the bytes) and on
    stderr, its marks (``--limit``) and the error that ended it (the partition is not searched further)."""

    result: Searched | None
    stopped: bool
    err: bytes
    marks: list[Mark] | None
    error: str | None = None
    spool: str | None = None
    data: bytes = b""
    reasons: tuple[list, list] | None = None  # the registry decoder's counts in this task (Registry.reasons)

    @classmethod
    def failed(cls, error: str) -> Done:
        return cls(None, True, b"", None, error)


class _Marked:
    """A match sink noting a :class:`Mark` at each match (``--limit``: the parent cuts there)."""

    def __init__(self, sink: GrepSink, out: Any, err: Any, result: Searched, marks: list[Mark]) -> None:
        self.sink, self.out, self.err, self.result, self.marks = sink, out, err, result, marks

    def match(self, where: Any, batch: Any, rec: Any) -> None:
        self.sink.match(where, batch, rec)
        self.sink.flush()
        r = self.result
        self.marks.append(Mark(self.out.tell(), self.err.tell(), r.segments, r.skipped, len(r.unread)))

    def unread(self, where: Any, problem: Any) -> None:
        self.sink.unread(where, problem)


def search_into(task: Task, out: Any) -> Done:
    """A task's segments searched, what it prints written to ``out`` (a spool file, or memory on Spark)."""
    err = io.BytesIO()
    sink = task.output.sink(out, err)
    result = Searched(task.partition)
    marks: list[Mark] | None = None if task.limit is None else []
    target: Any = sink if marks is None else _Marked(sink, out, err, result, marks)
    searcher = Searcher(task.query, target, task.bytes_limit, Budget(task.limit))
    registry = _registry(task.query)
    before = None if registry is None else registry.reasons()
    try:
        stopped = not searcher.segments(task.partition, task.partition.segments, result)
        error = None
    except KsegError as exc:
        stopped, error = True, exc.describe()
    sink.flush()
    done = Done(result, stopped, err.getvalue(), marks, error)
    if registry is not None:
        done.reasons = _since(before, registry.reasons())
    return done


def _registry(query: Any) -> Any:
    """The registry decoder's shared registry (its reasons counted), or None."""
    for decoder in (query.key_decoder, query.value_decoder):
        registry = getattr(decoder, "registry", None)
        if registry is not None:
            return registry
    return None


def _since(before: Any, after: tuple[list, list]) -> tuple[list, list]:
    """The counts of ``after`` less those of ``before``: what one task added."""
    out = []
    for old, new in zip(before, after, strict=True):
        was = dict(old)
        out.append([(slot, n - was.get(slot, 0)) for slot, n in new if n > was.get(slot, 0)])
    return out[0], out[1]


class Piece(NamedTuple):
    """A step of a partition's merge: ``skipped`` segments not opened (their names), or task ``task``."""

    skipped: int
    task: int | None


def deal(
    partitions: list, query: Any, output: Any, bytes_limit: int, limit: int | None, spool_dir: str, per_task: int
) -> tuple[list[tuple[Any, list[Piece]]], list[Task]]:
    """Each partition's pieces and the tasks: runs of at most ``per_task`` consecutive segments to read
    (0: all of a partition's in one)."""
    plans: list[tuple[Any, list[Piece]]] = []
    tasks: list[Task] = []
    for part in partitions:
        pieces: list[Piece] = []
        run: list = []
        for step in [*plan(part, query.ranges), None]:
            if run and (step is None or step.segment is None or len(run) == per_task):
                pieces.append(Piece(0, len(tasks)))
                tasks.append(Task(part.replace(segments=run), query, output, bytes_limit, limit, spool_dir))
                run = []
            if step is not None and step.segment is None:
                pieces.append(Piece(step.skipped, None))
            elif step is not None:
                run.append(step.segment)
        plans.append((part, pieces))
    return plans, tasks


class Merge:
    """The answers printed in the partitions' order as one process prints them (the module's text); the
    partitions' totals added to ``totals`` (:class:`kseg.runtime.grep.Totals`)."""

    def __init__(self, run: Run, sink: GrepSink, out: Any, budget: Budget, totals: Any) -> None:
        self.run, self.sink, self.out, self.budget, self.totals = run, sink, out, budget, totals

    def partitions(self, plans: list[tuple[Any, list[Piece]]], answer: Callable[[int], Done]) -> int:
        """Every partition's answers (``answer(i)``: task i's); the code (2: a partition not read)."""
        code = EXIT_OK
        for part, pieces in plans:
            if self.budget.spent:
                break
            code = max(code, self._partition(part, pieces, answer))
        return code

    def _partition(self, part: Any, pieces: list[Piece], answer: Callable[[int], Done]) -> int:
        """One partition's pieces in order; its count printed and its totals added unless it failed."""
        result = Searched(part)
        for piece in pieces:
            if self.budget.spent:
                break
            if piece.task is None:
                result.skipped += piece.skipped
                continue
            done = answer(piece.task)
            error = self._take(done, result)
            if error is not None:
                self.totals.failed += 1
                return self.run.error(error)
            if done.stopped:
                break
        self.sink.searched(result)
        self.sink.flush()
        self.totals.add(result)
        return EXIT_OK

    def _take(self, done: Done, result: Searched) -> str | None:
        """A task's answer printed and added to ``result``, cut at the match that spends ``--limit``; the
        error that ended the task (None: none, or the limit was reached before it)."""
        left, marks = self.budget.left, done.marks
        got = done.result
        if marks is not None and left is not None and len(marks) >= left:
            mark = marks[left - 1]
            self._copy(done, mark.out, mark.err)
            result.segments += mark.segments
            result.skipped += mark.skipped
            result.unread += got.unread[: mark.unread] if got is not None else []
            result.matches += left
            self.budget.take(left)
            return None
        self._copy(done, None, None)
        if got is not None:
            result.segments += got.segments
            result.skipped += got.skipped
            result.unread += got.unread
            result.matches += got.matches
            self.budget.take(got.matches)
        return done.error

    def _copy(self, done: Done, out_end: int | None, err_end: int | None) -> None:
        """A task's output (up to ``out_end``) and stderr lines (up to ``err_end``), then its spool removed."""
        try:
            with open(done.spool, "rb") if done.spool is not None else io.BytesIO(done.data) as spool:
                if out_end is None:
                    shutil.copyfileobj(spool, self.out)
                else:
                    self.out.write(spool.read(out_end))
            self.out.flush()
        finally:
            if done.spool is not None:
                os.unlink(done.spool)
        err = done.err if err_end is None else done.err[:err_end]
        if err:
            self.run.err.write(err)
            self.run.err.flush()


# -- --jobs: the tasks in worker processes ---------------------------------------------------------------
def _search_one(task: Task) -> Done:
    """A worker: one task searched into a spool file."""
    fd, spool_path = tempfile.mkstemp(dir=task.spool_dir, suffix=".spool")
    with os.fdopen(fd, "wb") as spool:
        done = search_into(task, spool)
    done.spool = spool_path
    return done


def tasks_wanted(partitions: list, query: Any, jobs: int) -> int:
    """Segments a task with ``jobs`` processes: a few tasks a process, at least one segment a task."""
    segments = sum(step.segment is not None for part in partitions for step in plan(part, query.ranges))
    return max(1, segments // (jobs * TASKS_A_PROCESS))


def in_workers(run: Run, partitions: list, query: Any, output: Any, merge: Merge, bytes_limit: int, jobs: int) -> int:
    """The search dealt to ``jobs`` worker processes, segments of a partition to several; the code."""
    from kseg.storage.workers import stop, working

    spool_dir = tempfile.mkdtemp(prefix="kseg-grep-")
    per_task = tasks_wanted(partitions, query, jobs)
    plans, tasks = deal(partitions, query, output, bytes_limit, merge.budget.left, spool_dir, per_task)
    if len(tasks) < 2:  # nothing to share out
        return merge.partitions(plans, lambda i: _search_one(tasks[i]))
    run.read_in(jobs)
    died = "a searching process died (killed, or out of memory?); run again with --jobs 1 to see which partition"
    try:
        with working(jobs, died) as pool:
            futures = [pool.submit(_search_one, task) for task in tasks]
            code = merge.partitions(plans, lambda i: futures[i].result())
            if merge.budget.spent or not all(f.done() for f in futures):  # the rest is not wanted
                stop(pool)
    finally:
        shutil.rmtree(spool_dir, ignore_errors=True)
    return code
