"""Running ``rebuild-index`` over several partitions: in this process, or one partition a task in
``--jobs`` processes (a partition's segments stay in one task: recovery carries producer state
across them, as ``LogLoader`` does).  Results come back in the order of the targets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, NamedTuple

from kseg.errors import KsegError
from kseg.limits import EXIT_OK
from kseg.ops.rebuild.rebuild import recover_partition
from kseg.ops.rebuild.recovered import Recovered
from kseg.ops.rebuild.write import DIFFERS, FAILED, MISSING, REFUSED, FileOutcome
from kseg.ops.rebuild.write import check as check_files
from kseg.ops.rebuild.write import write as write_files
from kseg.storage import outcome
from kseg.storage.workers import working

if TYPE_CHECKING:
    from kseg.storage.outputs import Destination


class Settings(NamedTuple):
    """What every partition is rebuilt with."""

    check: bool
    force: bool
    index_interval_bytes: int
    max_index_bytes: int
    limit: int


#: A file not compared or not written (the OS refused it), or one only ``--force`` may replace: exit 2.
NOT_DONE = frozenset((FAILED, REFUSED))
#: A file that differs from recovery's or is missing beside the log: a problem (exit 1).
PROBLEMS = frozenset((DIFFERS, MISSING))


def exit_code(rec: Recovered, outcomes: list[FileOutcome]) -> int:
    """One segment's exit code, by :func:`kseg.storage.outcome.exit_code`: 2 for a file not compared or
    not written, 1 for invalid data in the log (``LogSegment.recover`` would truncate it or fail) or a
    file that differs or is missing, else 0."""
    statuses = {o.status for o in outcomes}
    return outcome.exit_code((), problems=rec.damaged or bool(statuses & PROBLEMS), failed=bool(statuses & NOT_DONE))


@dataclass
class Verdict:
    """A run's exit code: the largest of its segments' (:func:`exit_code`), 2 once a partition directory
    could not be listed."""

    code: int = EXIT_OK

    def segment(self, rec: Recovered, outcomes: list[FileOutcome]) -> int:
        """Count one segment; returns its own exit code."""
        code = exit_code(rec, outcomes)
        self.code = max(self.code, code)
        return code

    def unreadable(self) -> None:
        """A partition directory that could not be listed: nothing of it was read."""
        self.code = max(self.code, outcome.exit_code((), failed=True))


class Done(NamedTuple):
    """One segment rebuilt (``rec``, ``outcomes``), or a partition that failed (``error``)."""

    rec: Recovered | None
    outcomes: list[FileOutcome] | None
    error: KsegError | None = None


def rebuild_target(target, directory: Destination | None, settings: Settings, progress=None) -> Iterator[Done]:
    """Recover and check or write each selected segment of one partition."""
    made: set[str] = set()  # the --output-dir directory, once this partition's first file made or found it
    try:
        for rec in recover_partition(
            target,
            index_interval_bytes=settings.index_interval_bytes,
            max_index_size=settings.max_index_bytes,
            limit=settings.limit,
            progress=progress,
        ):
            how = (settings.index_interval_bytes, settings.max_index_bytes, settings.limit)
            outcomes = (
                check_files(rec, *how)
                if settings.check
                else write_files(rec, directory, settings.force, *how, made=made)
            )
            yield Done(rec, outcomes)
    except KsegError as exc:  # a log that cannot be opened or read
        yield Done(None, None, exc)


def _task(args) -> list[Done]:
    target, directory, settings = args
    done = []
    for d in rebuild_target(target, directory, settings):
        if d.rec is not None:  # the entries are written already; send back what the report shows
            d.rec.drop_entries()
        done.append(d)
    return done


def rebuild_all(work: list, settings: Settings, jobs: int, progress=None) -> Iterator[Done]:
    """``work``: (target, output directory or None) pairs."""
    if jobs <= 1 or len(work) <= 1:
        for target, directory in work:
            yield from rebuild_target(target, directory, settings, progress)
        return
    names = [target.partition.name for target, _ in work]
    if progress is not None:  # a partition at a time: the bar counts partitions
        progress.describe(f"rebuild-index {names[0]}")
        progress.start("rebuild-index", len(work), count=True)
    died = (
        "a rebuilding process died (killed, out of memory or out of file descriptors?); "
        "run again with --jobs 1 to see which partition"
    )
    with working(jobs, died) as pool:  # workers ignore Ctrl-C: the parent stops them and says so once
        for i, done in enumerate(pool.map(_task, [(t, d, settings) for t, d in work])):
            if progress is not None:
                if i + 1 < len(names):
                    progress.describe(f"rebuild-index {names[i + 1]}")
                progress.advance_to(i + 1)
            yield from done
