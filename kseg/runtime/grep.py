"""The run of ``kseg grep``: its partitions searched in order, here or (``--jobs N``) by N worker processes.

Here, each match goes to the output as it is read.  With ``--jobs``, each worker searches whole partitions
(a partition's segments are read in offset order, so ``--limit`` and the stop at an offset range's end
hold), writing what it prints to a spool file of a private temporary directory; the parent copies each
partition's spool to the output in the partitions' order as it completes, then its stderr lines, and
removes it -- memory stays a partition's bookkeeping whatever the matches.  With ``--limit N`` every
worker stops at N matches and the parent copies matches up to the N-th of the run (a worker notes where
each of its matches ends), then stops the workers.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from kseg.errors import InputError, KsegError
from kseg.limits import EXIT_ERROR, EXIT_OK, EXIT_PROBLEMS
from kseg.ops.grep.search import Budget, Searched, Searcher
from kseg.render.grep import GrepSink
from kseg.runtime.run import Run

EXIT_NONE = EXIT_PROBLEMS  # no record matched


@dataclass(frozen=True)
class Output:
    """How matches print: ``--format json``, ``--count``, the key and value decoders, the KRaft text."""

    json: bool
    count: bool
    key_decoder: Any
    value_decoder: Any
    kraft_text: Any = None

    def sink(self, out: Any, err: Any) -> GrepSink:
        return GrepSink(
            out,
            err,
            json=self.json,
            count=self.count,
            key_decoder=self.key_decoder,
            value_decoder=self.value_decoder,
            kraft_text=self.kraft_text,
        )


@dataclass
class Totals:
    """What the run read and found, for its summary row and its last line."""

    matches: int = 0
    partitions: int = 0
    segments: int = 0
    skipped: int = 0
    unread: int = 0
    crc: int = 0
    failed: int = 0
    counts: dict = field(default_factory=dict)

    def add(self, result: Searched) -> None:
        self.matches += result.matches
        self.segments += result.segments
        self.skipped += result.skipped
        self.partitions += 1
        self.unread += sum(not u.read_past for u in result.unread)
        self.crc += sum(u.read_past for u in result.unread)

    def row(self) -> dict:
        return {
            "matches": self.matches,
            "partitions": self.partitions,
            "segments": self.segments,
            "skipped": self.skipped,
            "unread": self.unread,
            "crc": self.crc,
            "failed": self.failed,
        }


def search(
    run: Run,
    partitions: list,
    query: Any,
    output: Output,
    out: Any,
    limit: int | None,
    bytes_limit: int,
    jobs: int,
    on_spark: Any = None,
) -> tuple[Totals, bool, int]:
    """Search ``partitions`` (those that could not be listed are counted as failed); ``(totals, limit
    reached, code)``, the code 2 when a partition could not be read, else 0."""
    totals = Totals()
    code = EXIT_OK
    readable = []
    for part in partitions:
        if part.error is not None:
            totals.failed += 1
        else:
            readable.append(part)
    sink = output.sink(out, run.err)
    sink.quiet = run.quiet
    budget = Budget(limit)
    if on_spark is not None:  # --spark: each partition a task; the answers printed here, in order
        tasks = [Task(p, query, output, bytes_limit, budget.left, "") for p in readable]
        for done in on_spark(tasks):
            code = max(code, copy(run, done, out, budget, totals))
            if budget.spent:
                break
    elif jobs > 1 and len(readable) > 1:
        code = _in_workers(run, readable, query, output, out, budget, bytes_limit, jobs, totals)
    else:
        searcher = Searcher(query, sink, bytes_limit, budget)
        for part in readable:
            if budget.spent:
                break
            try:
                result = searcher.partition(part)
            except KsegError as exc:
                sink.flush()
                code = run.error(exc)
                totals.failed += 1
                continue
            sink.searched(result)
            totals.add(result)
    sink.flush()
    return totals, budget.spent, code


def finish(
    run: Run, output: Output, out: Any, totals: Totals, left_out: int, limit: int | None, spent: bool, code: int
) -> int:
    """The run's exit code, its summary row (JSON) and its last word on stderr."""
    from kseg.words import plural

    if code != EXIT_ERROR:
        code = EXIT_OK if totals.matches else EXIT_NONE
    sink = output.sink(out, run.err)
    sink.summary({**totals.row(), "leftOut": left_out, "limitReached": spent, "exitCode": code})
    if spent:
        run.note(f"stopped at --limit {limit}")
    if code != EXIT_NONE:
        return code
    read = (
        f"{plural(totals.partitions, 'partition')}, {plural(totals.segments, 'segment')} read, "
        f"{totals.skipped} skipped by their names or indexes"
    )
    if left_out:
        read += f"; {plural(left_out, 'partition')} left out: not the key's partition, or not of --topic"
    if totals.unread:
        run.say(
            f"kseg: no match in what was read ({read}); {plural(totals.unread, 'place')} not read past "
            "corruption (the corrupt lines above)"
        )
    else:
        run.say(f"kseg: no match ({read})")
    return code


# -- --jobs ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    partition: Any
    query: Any
    output: Output
    bytes_limit: int
    limit: int | None
    spool_dir: str


@dataclass
class Done:
    """A worker's or a Spark task's answer: the partition's result (None when it could not be read:
    ``error``), what it prints on stdout (a spool file, or the bytes), its stderr lines, and where each
    match ends in that output (``--limit``)."""

    result: Searched | None
    spool: str | None
    err: bytes
    ends: list[int] | None
    error: str | None = None
    data: bytes = b""


class _Marked:
    """A match sink noting where each match ends in the spool (``--limit``: the parent cuts there)."""

    def __init__(self, sink: GrepSink, spool: Any, ends: list[int]) -> None:
        self.sink, self.spool, self.ends = sink, spool, ends

    def match(self, where: Any, batch: Any, rec: Any) -> None:
        self.sink.match(where, batch, rec)
        self.sink.flush()
        self.ends.append(self.spool.tell())

    def unread(self, where: Any, problem: Any) -> None:
        self.sink.unread(where, problem)


def search_into(task: Task, out: Any) -> Done:
    """One partition searched, what it prints written to ``out`` (a spool file, or memory on Spark)."""
    err = io.BytesIO()
    sink = task.output.sink(out, err)
    ends: list[int] | None = [] if task.limit is not None and not task.output.count else None
    target: Any = sink if ends is None else _Marked(sink, out, ends)
    try:
        result = Searcher(task.query, target, task.bytes_limit, Budget(task.limit)).partition(task.partition)
    except KsegError as exc:
        sink.flush()
        return Done(None, None, err.getvalue(), ends, exc.describe())
    sink.searched(result)
    sink.flush()
    return Done(result, None, err.getvalue(), ends)


def _search_one(task: Task) -> Done:
    """A worker: one partition searched into a spool file."""
    fd, spool_path = tempfile.mkstemp(dir=task.spool_dir, suffix=".spool")
    with os.fdopen(fd, "wb") as spool:
        done = search_into(task, spool)
    done.spool = spool_path
    return done


def _in_workers(
    run: Run,
    partitions: list,
    query: Any,
    output: Output,
    out: Any,
    budget: Budget,
    bytes_limit: int,
    jobs: int,
    totals: Totals,
) -> int:
    from kseg.storage.workers import new_pool, stop

    code = EXIT_OK
    spool_dir = tempfile.mkdtemp(prefix="kseg-grep-")
    tasks = [Task(p, query, output, bytes_limit, budget.left, spool_dir) for p in partitions]
    run.read_in(jobs)
    pool = new_pool(jobs)
    try:
        for done in pool.map(_search_one, tasks):
            code = max(code, copy(run, done, out, budget, totals))
            if budget.spent:
                break
    except BrokenProcessPool:
        stop(pool)
        raise InputError(
            "a searching process died (killed, or out of memory?); run again with --jobs 1 to see which partition"
        ) from None
    except BaseException:  # Ctrl-C, a closed stdout: stop the workers now, not after the queued work
        stop(pool)
        raise
    finally:
        shutil.rmtree(spool_dir, ignore_errors=True)
    if budget.spent:  # the rest is not wanted
        stop(pool)
    else:
        pool.shutdown()
    return code


def copy(run: Run, done: Done, out: Any, budget: Budget, totals: Totals) -> int:
    """One partition's answer to the output, in order; the code it adds (2: it could not be read)."""
    try:
        with open(done.spool, "rb") if done.spool is not None else io.BytesIO(done.data) as spool:
            if done.ends is not None and budget.left is not None and len(done.ends) > budget.left:
                cut = done.ends[budget.left - 1]
                out.write(spool.read(cut))
                kept = budget.left
            else:
                shutil.copyfileobj(spool, out)
                kept = None
        out.flush()
    finally:
        if done.spool is not None:
            os.unlink(done.spool)
    if done.err:
        run.err.write(done.err)
        run.err.flush()
    if done.error is not None:
        totals.failed += 1
        return run.error(done.error)
    assert done.result is not None
    if kept is not None:
        done.result.matches = kept
    totals.add(done.result)
    budget.take(done.result.matches)
    return EXIT_OK
