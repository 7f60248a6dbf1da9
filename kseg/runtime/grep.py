"""The run of ``kseg grep``: its partitions searched in order, here, by ``--jobs N`` worker processes or on
Spark's executors.

Here, each match goes to the output as it is read.  With ``--jobs`` or ``--spark`` the search is dealt out
as tasks, runs of a partition's segments, whose answers are printed in order as this process would have
printed them (:mod:`kseg.runtime.grep_deal`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kseg.errors import KsegError
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
    if on_spark is not None or (jobs > 1 and readable):
        from kseg.runtime import grep_deal

        merge = grep_deal.Merge(run, sink, out, budget, totals)
        if on_spark is not None:  # --spark: a partition's segments a task; the answers printed here, in order
            plans, tasks = grep_deal.deal(readable, query, output, bytes_limit, limit, "", 0)
            dones = on_spark(tasks)
            code = merge.partitions(plans, dones.__getitem__)
        else:
            code = grep_deal.in_workers(run, readable, query, output, merge, bytes_limit, jobs)
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
