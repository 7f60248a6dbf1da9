"""What a command read of each segment, and why it stopped: the one outcome every command reports.

A verdict ("clean", "identical", "no tombstones", "no problems", "N records
written") is a statement about bytes: it may only be given for a segment
read to its end.  Each command records, per ``.log`` it reads, a
:class:`ReadOutcome`: the bytes present when it was opened, the bytes read
(up to the end of the last whole batch), and why reading stopped:

``complete``
    read to its end (``FileRecords.batches`` ran out of whole batches at the file's end);
``corrupt``
    a batch that does not follow the format (Kafka's ``CorruptRecordException``) at byte N:
    the rest of the segment was not read;
``truncated``
    a partial batch runs past the end of the file (the "invalid bytes" Kafka's recovery
    truncates, ``LogSegment.recover``);
``unreadable``
    the operating system refused the read (``EACCES``, ``EIO``...): the OS's reason is kept;
``vanished``
    the file was deleted, or shrank, between listing and reading.

:func:`exit_code` maps outcomes to the exit code, once for every command:
``unreadable``/``vanished`` -> 2 (an I/O error is never "corrupt"), ``corrupt``/``truncated``
-> 1, else 1 when the command found problems of its own, else 0.  ``kseg dump`` keeps
Kafka's meaning and does not use it.
"""

from __future__ import annotations

import errno as _errno
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, TypedDict

from kseg.errors import CorruptRecordError, InputError, KsegError
from kseg.limits import EXIT_ERROR, EXIT_OK, EXIT_PROBLEMS

if TYPE_CHECKING:
    from kseg.storage.batch import FileBatch
    from kseg.storage.records import FileRecords

COMPLETE, CORRUPT, TRUNCATED, UNREADABLE, VANISHED = "complete", "corrupt", "truncated", "unreadable", "vanished"
FAILED = (UNREADABLE, VANISHED)  # I/O: exit 2
DAMAGED = (CORRUPT, TRUNCATED)  # the format: exit 1


class ReadJson(TypedDict):
    """A :class:`ReadOutcome` in JSON rows (``read``, docs/json-output.md): camelCase fields."""

    path: str
    bytesPresent: int
    bytesRead: int
    stop: str
    position: int | None
    reason: str | None


@dataclass
class ReadOutcome:
    """One segment file's read: ``read`` of ``present`` bytes, and why it stopped (module docstring)."""

    path: str
    present: int = 0
    read: int = 0
    stop: str = COMPLETE
    position: int | None = None  # where reading stopped (corrupt batch, partial batch, failed read)
    reason: str | None = None  # the format fault or the OS's reason, in words

    @property
    def complete(self) -> bool:
        return self.stop == COMPLETE

    @property
    def failed(self) -> bool:
        """An I/O failure (exit 2): nothing after ``read`` is known, not even that it is damaged."""
        return self.stop in FAILED

    def describe(self) -> str:
        """``<path>: at byte N: <reason>``, the error line's text for a segment not read to its end."""
        where = [self.path]
        if self.position is not None:
            where.append(f"at byte {self.position}")
        return ": ".join(where + [self.reason or self.stop])

    def summary(self) -> str:
        """``read 4868 of 28637 bytes`` (with the stop's kind when not complete)."""
        text = f"read {self.read} of {self.present} bytes"
        return text if self.complete else f"{self.stop}, {text}"

    def stopped_at(self, exc: KsegError, present: int | None = None) -> "ReadOutcome":
        """Record ``exc`` (raised reading this file) as the stop; returns self."""
        if present is not None:
            self.present = present
        self.stop = kind_of(exc)
        self.position = exc.position if exc.position is not None else (None if self.failed else self.read)
        self.reason = exc.message
        return self

    def as_json(self) -> ReadJson:
        """camelCase fields for JSON rows (docs/json-output.md, ``read``)."""
        return {
            "path": self.path,
            "bytesPresent": self.present,
            "bytesRead": self.read,
            "stop": self.stop,
            "position": self.position,
            "reason": self.reason,
        }


def kind_of(exc: BaseException) -> str:
    """The stop an exception stands for: I/O errors are ``unreadable`` or ``vanished``, never ``corrupt``."""
    if isinstance(exc, InputError):
        text = exc.message.lower()
        if "no such file" in text or "shrank" in text or "vanished" in text:
            return VANISHED
        return UNREADABLE
    if isinstance(exc, OSError):
        return VANISHED if exc.errno == _errno.ENOENT else UNREADABLE
    if isinstance(exc, CorruptRecordError):
        return CORRUPT
    return CORRUPT


def read_batches(records: FileRecords, outcome: ReadOutcome, start: int = 0) -> Iterator[FileBatch]:
    """``records.batches(start)`` (a :class:`kseg.storage.records.FileRecords`), recording in ``outcome``
    how far they were read and why they stopped.  A corrupt batch or an I/O error ends the iteration
    (recorded, not raised); bytes after the last whole batch are ``truncated``."""
    outcome.present = records.end
    outcome.read = start
    try:
        for batch in records.batches(start):
            yield batch
            outcome.read = batch.position + batch.size
    except KsegError as exc:
        outcome.stopped_at(exc.at(outcome.path))
        return
    if outcome.read < records.end:
        outcome.stop, outcome.position = TRUNCATED, outcome.read
        outcome.reason = (
            f"{records.end - outcome.read} bytes after the last whole batch: a partial batch "
            "(Kafka's recovery truncates them)"
        )


def exit_code(outcomes: Iterable[ReadOutcome | None], problems: bool = False, failed: bool = False) -> int:
    """The exit code for a run: 2 when any input could not be read (I/O) or ``failed`` (an input not read
    at all: a directory that could not be listed, a segment that could not be verified; or an output
    not written), 1 when data could not be read past corruption or the command found problems, else 0.
    The one mapping, for every command."""
    if failed:
        return EXIT_ERROR
    code = EXIT_PROBLEMS if problems else EXIT_OK
    for o in outcomes:
        if o is None:
            continue
        if o.failed:
            return EXIT_ERROR
        if not o.complete:
            code = EXIT_PROBLEMS
    return code


def counts(outcomes: Iterable[ReadOutcome | None]) -> str:
    """``2 segments not read to their end (1 corrupt, 1 unreadable)`` for a summary line, or ''."""
    kinds: dict[str, int] = {}
    for o in outcomes:
        if o is not None and not o.complete:
            kinds[o.stop] = kinds.get(o.stop, 0) + 1
    total = sum(kinds.values())
    if not total:
        return ""
    detail = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    return f"{total} segment{'s' * (total != 1)} not read to {'their' if total != 1 else 'its'} end ({detail})"
