"""What verifying a segment finds: its problems, the segment's result (a report row), the log scan.

Plain values shared by :mod:`kseg.ops.verify.verify` (the log and the
transaction index) and :mod:`kseg.ops.verify.index` (the offset and time
indexes); how they print is :mod:`kseg.render.verify`'s business.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

from kseg.errors import InputError
from kseg.format.indexes import OffsetIndexView, TimeIndexView

if TYPE_CHECKING:
    from kseg.storage.context import Names


@dataclass
class Problem:
    """One thing wrong: which file, where (byte position or index entry), expected vs found."""

    kind: str
    file: str
    message: str
    position: int | None = None  # byte position in the file
    entry: int | None = None  # index entry number
    expected: str | None = None
    found: str | None = None
    consequences: int | None = None  # index entries this one row stands for (all wrong for one earlier cause)


#: Problems of one kind in one file kept as :class:`Problem` objects; the rest are only counted
#: (:attr:`SegmentResult.omitted`), so a garbage index (a random 10 MiB file has ~2 M wrong entries)
#: costs a bounded report and bounded memory, not one object per entry.
KEPT_PER_KIND = 100


@dataclass
class SegmentResult:
    """The outcome for one segment (a report row), with its problems and notes.

    ``problems`` holds at most :data:`KEPT_PER_KIND` problems of each (kind, file); ``omitted``
    counts the others by (kind, file); :attr:`problem_count` is the total.  ``names`` is the grammar of the
    segment's store (how its paths show, :meth:`Names.display <kseg.storage.context.Names.display>`): a
    result comes back from a Spark task or a ``--jobs`` worker without its store, and the renderer shows its
    paths by it, never choosing a store again.
    """

    partition: str
    segment: str
    base_offset: int
    path: str
    bytes: int = 0
    batches: int = 0
    last_offset: int | None = None
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: str | None = None  # the segment could not be verified at all (I/O)
    log_dir: str = ""  # the log directory holding the partition (with ``partition``, its identity)
    identity: str | None = None  # the .log's version when it was read (files.identity): what --resume trusts
    kept: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, file) -> problems in ``problems``
    omitted: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, file) -> problems only counted
    names: Names = field(kw_only=True)  # its store's paths' grammar (stateless: a few bytes in a pickle)

    @property
    def status(self) -> str:
        if self.failed:
            return "failed"
        return "problems" if self.problems else "clean"

    @property
    def problem_count(self) -> int:
        """Every problem found: those kept and those only counted."""
        return len(self.problems) + sum(self.omitted.values())

    def omitted_notes(self) -> list[str]:
        """One line per (kind, file) with problems past :data:`KEPT_PER_KIND`: how many were not listed."""
        return [
            f"{file}: {n} more {kind} problem{'s' * (n != 1)} not listed (the first {KEPT_PER_KIND} of each kind are)"
            for (kind, file), n in self.omitted.items()
        ]

    def fail(self, why: str) -> None:
        """This segment could not be read whole: ``failed`` (exit 2), whatever else was found."""
        self.failed = why if self.failed is None else f"{self.failed}; {why}"

    def entry_problem(
        self, kind: str, file: str, message: str, entry: int, entry_size: int, expected: str, found: object
    ) -> None:
        """A problem with index entry ``entry`` (``entry_size`` bytes an entry: at byte ``entry * entry_size``)."""
        self.problem(kind, file, message, entry=entry, position=entry * entry_size, expected=expected, found=str(found))

    def problem_at(
        self, kind: str, file: str, message: str, position: int | None, expected: str, found: object
    ) -> None:
        """A problem at byte ``position`` of ``file``: what was expected there and what was found."""
        self.problem(kind, file, message, position=position, expected=expected, found=str(found))

    def problem(self, kind: str, file: str | None, message: str, **where: Any) -> None:
        key = (kind, file or self.path)
        n = self.kept.get(key, 0)
        if n >= KEPT_PER_KIND:
            self.omitted[key] = self.omitted.get(key, 0) + 1
            return
        self.kept[key] = n + 1
        self.problems.append(Problem(kind, key[1], message, **where))


@dataclass
class LogScan:
    """What one pass over the log found: the log's extent and order, and the batches the indexes ask about.

    Memory follows the index entries, not the batches: a batch is recorded when an ``.index``
    entry names its position or when it is the first batch whose last offset reaches an offset
    an index entry names (with ``.timeindex`` entries: the batch ending at it).  Where the
    log's last offsets strictly increase (``ordered``), the index checks' answers on these
    batches are their answers on all batches (:mod:`kseg.ops.verify.index`); otherwise a second
    pass records the first batches answering each entry's questions (:mod:`kseg.ops.verify.sieve`;
    :func:`kseg.ops.verify.log.scan_log`), and every batch only when no index keys were given.
    """

    positions: array = field(default_factory=lambda: array("q"))
    base_offsets: array = field(default_factory=lambda: array("q"))
    last_offsets: array = field(default_factory=lambda: array("q"))
    running_max: array = field(default_factory=lambda: array("q"))  # largest batch max timestamp so far
    size: int = 0
    valid_end: int = 0
    batches: int = 0  # every batch read, recorded or not
    ordered: bool = True  # every batch's last offset above the one before


class IndexFiles(NamedTuple):
    """A segment's ``.index`` and ``.timeindex``, each read once for both the log pass and the checks:
    the file's view, the :class:`~kseg.errors.InputError` reading it raised, or None (no such file)."""

    offsets: OffsetIndexView | InputError | None
    times: TimeIndexView | InputError | None


class IndexKeys(NamedTuple):
    """What a segment's indexes ask of its log (:class:`LogScan`), each stream in ascending order (repeats
    allowed), read lazily from the index files' bytes; and the files, for a log whose offsets go back or keys
    that do not ascend (every entry's questions read at once: :class:`kseg.ops.verify.sieve.Sieve`)."""

    positions: Iterable[int]  # the ``.log`` positions ``.index`` entries name
    offsets: tuple[Iterable[int], ...]  # the offsets ``.index`` entries name, and those ``.timeindex`` entries name
    files: IndexFiles | None = None


def entries(n: int) -> str:
    """``1 entry``, ``2 entries``."""
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def end_cause(scan: "LogScan") -> str:
    """Why a log's readable batches end where they do, for the row of the index entries past that end."""
    if scan.size == 0:
        return "the log is empty"
    if scan.valid_end < scan.size:
        return (
            f"the log's readable batches end at byte {scan.valid_end} of {scan.size} (its corrupt-batch or "
            "trailing-bytes problem)"
        )
    return f"the log ends at byte {scan.size} (the index was written for a longer log)"


class PastEnd:
    """The index entries pointing past the log's readable end (a truncation point, an empty log): all
    wrong for that one cause, so reported as one problem row with their count (``consequences``)."""

    __slots__ = ("count", "first", "last_entry", "first_value", "low", "high")

    def __init__(self) -> None:
        self.count = self.first = self.last_entry = self.first_value = 0
        self.low = self.high = 0

    def add(self, entry: int, value: int) -> None:
        if not self.count:
            self.first, self.first_value, self.low, self.high = entry, value, value, value
        self.count += 1
        self.last_entry = entry
        self.low, self.high = min(self.low, value), max(self.high, value)
