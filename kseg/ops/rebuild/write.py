"""What ``kseg rebuild-index`` does with rebuilt indexes: compare them, or write them atomically.

Files per segment, as Kafka's recovery leaves them: ``.index`` and
``.timeindex`` always (0 bytes when empty); ``.txnindex`` only when it has
entries or already existed (``TransactionIndex`` creates its file on first
append, and recovery truncates an existing one to 0 bytes).

* check: each rebuilt file against the one beside the log -- same, differs
  (with the first differing entry), or missing;
* write: to the log's directory or ``--output-dir``; identical files are
  left alone, a different existing file is replaced only with ``--force``,
  every write is atomic (:func:`kseg.storage.atomic.write_atomic`);
* one rule for "healthy", shared with ``verify-index``: an existing
  ``.index`` written at another ``index.interval.bytes`` is rebuilt again at
  the interval its entries show (:func:`inferred_interval`) and is ``same``
  (``unchanged``) when that gives it byte for byte; a file valid by an older
  broker's rule is ``older-rule`` (check) or ``kept`` (write, without
  ``--force``), never an error;
* a segment whose recovery Kafka would not survive gets no files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple

from kseg.errors import InputError
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT
from kseg.ops.rebuild.compare import ENTRY, LargeIndex, at_inferred_interval, difference, tail_rule, zero_tail
from kseg.ops.rebuild.recovered import Recovered
from kseg.storage import files, location
from kseg.storage.atomic import write_atomic

if TYPE_CHECKING:
    from kseg.storage.context import Store
    from kseg.storage.outputs import Destination

SAME, DIFFERS, MISSING, ABSENT = "same", "differs", "missing", "absent"
OLDER_RULE = "older-rule"  # differs from what recovery writes, but valid: an older Kafka writer's rule
UNCHANGED, WRITTEN, REPLACED = "unchanged", "written", "replaced"
REFUSED, SKIPPED, FAILED = "refused", "skipped", "failed"
KEPT = "kept"  # not written without --force: the existing file differs but is valid by its writer's rule


@dataclass
class FileOutcome:
    """One index file of a segment: what was rebuilt and what happened to it."""

    kind: str  # ".index", ".timeindex", ".txnindex"
    path: str  # the file compared with, or written
    entries: int | None  # entries rebuilt; None when no file is due
    status: str
    existing_entries: int | None = None
    difference: str | None = None
    error: InputError | None = None
    rule: str | None = None  # OLDER_RULE: which older writer rule the existing file follows
    interval: int | None = None  # same as recovery at index.interval.bytes <= this (the existing file's)
    at_least: bool = False  # ``interval`` is a lower bound: an empty .index, no entry ever due
    checking: bool = False  # --check: nothing is written, a FAILED file is one that could not be compared

    def failure(self) -> str:
        """What a FAILED file is, in words: ``--check`` never says "written"."""
        error = self.error or InputError("failed", path=self.path)  # a FAILED file carries its error
        if self.checking:
            return f"not compared: the existing file could not be read: {error.message}"
        return f"not written: {error.describe()}"


def rebuilt_files(rec: Recovered) -> dict[str, bytes | None]:
    """The bytes of each file recovery leaves; None for a ``.txnindex`` that would not exist."""
    txn: bytes | None = rec.txn_index_bytes()
    if not txn and rec.segment.txnindex is None:
        txn = None
    return {files.INDEX: rec.index_bytes(), files.TIME_INDEX: rec.time_index_bytes(), files.TXN_INDEX: txn}


def _read(path: str, store: Store) -> bytes | LargeIndex | None:
    if not files.exists(path, store=store):
        return None
    data = files.open_index(path, store=store)
    return data if isinstance(data, bytes) else LargeIndex(data)


def _files_due(
    rec: Recovered, rebuilt: dict[str, bytes | None], out: list[FileOutcome], shown: Callable[[str], str]
) -> Iterator[tuple[str, bytes, str]]:
    """Each rebuilt file to compare or write: ``(kind, bytes, path shown)``.  The outcomes of the others
    go to ``out``, in order: ``skipped`` (the segment's recovery fails), ``absent`` (recovery leaves no
    such file)."""
    for kind, data in rebuilt.items():
        if rec.failure is not None:
            out.append(FileOutcome(kind, shown(kind), None, SKIPPED))
        elif data is None:
            out.append(FileOutcome(kind, shown(kind), None, ABSENT))
        else:
            yield kind, data, shown(kind)


def _in(directory: str, store: Store, rec: Recovered, kind: str) -> str:
    """The segment's ``kind`` file in ``directory`` of ``store`` (a log's own, absolute, or ``--output-dir`` as
    given): the one path rule for the files compared and written."""
    return store.names.join(directory, rec.segment.stem + kind)


def _shown_beside(rec: Recovered, kind: str) -> str:
    """The segment's ``kind`` file beside its log, as the log was named on the command line."""
    names = rec.segment.store.names
    return names.display(names.join(names.dirname(rec.log), rec.segment.stem + kind))


class _Existing(NamedTuple):
    """The existing ``.index`` (None: none, or unreadable) and, when it differs from recovery's, the
    interval it was written at with the files recovery writes there (:func:`at_inferred_interval`)."""

    existing: bytes | LargeIndex | None
    inferred: tuple[int, dict[str, bytes | None]] | None

    def interval_for(self, kind: str, existing: bytes | LargeIndex) -> int | None:
        """The interval the existing ``.index`` shows when ``existing`` is what recovery writes at it, else None."""
        if self.inferred is not None and self.inferred[1].get(kind) == existing:
            return self.inferred[0]
        return None


def _existing_index(
    rec: Recovered,
    path: str | None,
    rebuilt: dict[str, bytes | None],
    interval: int,
    max_index_size: int,
    limit: int,
    store: Store,
) -> _Existing:
    if path is None:
        return _Existing(None, None)
    try:
        existing = _read(path, store)
    except InputError:
        return _Existing(None, None)
    if existing is None or existing == rebuilt[files.INDEX]:
        return _Existing(existing, None)
    return _Existing(existing, at_inferred_interval(rec, existing, interval, max_index_size, limit))


def check(
    rec: Recovered, interval: int = 4096, max_index_size: int = 10 << 20, limit: int = DEFAULT_DECOMPRESSION_LIMIT
) -> list[FileOutcome]:
    """Compare the rebuilt files with those beside the log; nothing is written.  ``interval``,
    ``max_index_size``, ``limit``: what ``rec`` was recovered with (:func:`at_inferred_interval`)."""
    out: list[FileOutcome] = []
    directory = files.parent(rec.log, store=rec.segment.store)
    rebuilt = rebuilt_files(rec)
    index = _existing_index(rec, rec.segment.index, rebuilt, interval, max_index_size, limit, rec.segment.store)
    for kind, data, shown in _files_due(rec, rebuilt, out, lambda kind: _shown_beside(rec, kind)):
        o = FileOutcome(kind, shown, len(data) // ENTRY[kind].size, SAME, checking=True)
        try:
            existing = _read(_in(directory, rec.segment.store, rec, kind), rec.segment.store)
        except InputError as exc:
            o.status, o.error = FAILED, exc
        else:
            _compare(rec, o, data, existing, index)
        out.append(o)
    _older_rules(rec, out)
    return out


def _compare(
    rec: Recovered, o: FileOutcome, data: bytes, existing: bytes | LargeIndex | None, index: _Existing
) -> None:
    """``--check``: the existing file against the rebuilt ``data``: ``missing``, ``same`` (byte for byte, at
    the interval the existing ``.index`` shows, or with a preallocated zero tail) or ``differs``."""
    if existing is None:
        o.status = MISSING
        return
    kind, size = o.kind, ENTRY[o.kind].size
    o.existing_entries = len(existing) // size
    if existing == data:
        return
    o.interval = index.interval_for(kind, existing)
    if o.interval is not None:
        o.at_least = not index.existing
        return
    rule = tail_rule(kind, existing, data)
    if rule:
        o.rule = rule
        o.existing_entries = (len(existing) - zero_tail(kind, existing, data)) // size
    else:
        o.status, o.difference = DIFFERS, difference(kind, existing, data, rec.segment.base_offset)


def _older_rules(rec: Recovered, outcomes: list[FileOutcome], status: str = DIFFERS, keep_status: bool = False) -> None:
    """A differing ``.index``/``.timeindex`` that ``verify-index`` finds valid by the lookup rule and
    written by an older broker's rule (before KAFKA-806, the log cleaner, before Kafka 3.7) is
    OLDER_RULE, not a difference to repair.  A preallocated zero tail stays DIFFERS (recovery trims it).
    With ``keep_status`` (a refused write) only the rule is recorded, for the message."""
    pending = [o for o in outcomes if o.status == status and o.kind in (files.INDEX, files.TIME_INDEX)]
    if not pending or rec.truncated or rec.stop is not None:
        return
    from kseg.ops.verify.verify import older_writer_rules

    seg = rec.segment
    try:
        rules = older_writer_rules(location.basename(files.parent(rec.log, store=rec.segment.store)), seg)
    except InputError:
        return
    for o in pending:
        path = seg.index if o.kind == files.INDEX else seg.timeindex
        found = None if path is None else rules.get(path)
        if found and not (o.difference or "").endswith("(a preallocated index of a segment that was not closed)"):
            o.status = o.status if keep_status else OLDER_RULE
            o.rule = "; ".join(note.split(": ", 1)[1] for note in found)


def _ensure_directory(directory: str, *, created: bool, made: set[str]) -> None:
    """The directory a file is written to must be there: a log's directory is never made (it held the
    log: gone, it was renamed or deleted -- a broker renames a deleted partition to ``*-delete`` -- and
    recreating it would leave orphan indexes); an ``--output-dir`` directory is made once, and not
    again should it vanish during the run (``made``: the directories the run made or found so far)."""
    if os.path.isdir(directory):
        if created:
            made.add(directory)
        return
    if not created or directory in made:
        raise InputError(
            "the directory vanished during the run (renamed or deleted: a broker "
            "renames a deleted partition to *-delete); it is not recreated",
            path=directory,
        )
    os.makedirs(directory, exist_ok=True)
    made.add(directory)


def write(
    rec: Recovered,
    output: Destination | None,
    force: bool,
    interval: int = 4096,
    max_index_size: int = 10 << 20,
    limit: int = DEFAULT_DECOMPRESSION_LIMIT,
    made: set[str] | None = None,
) -> list[FileOutcome]:
    """Write the rebuilt files next to the log or in ``output`` (created if needed; ``made``: the
    directories this run made or found, kept by the caller across a partition's segments).  Without
    ``force`` an existing file that differs but is healthy (written at another interval, or by an older
    broker's rule) is kept and said (``unchanged``/``kept``); any other difference is refused."""
    out: list[FileOutcome] = []
    made = set() if made is None else made
    store = rec.segment.store if output is None else output.store
    directory = files.parent(rec.log, store=store) if output is None else output.path
    rebuilt = rebuilt_files(rec)
    index = _Existing(None, None)
    if not force:
        index = _existing_index(
            rec, _in(directory, store, rec, files.INDEX), rebuilt, interval, max_index_size, limit, store
        )

    def shown(kind: str) -> str:
        return _shown_beside(rec, kind) if output is None else files.display(_in(directory, store, rec, kind), store)

    in_place_tiered = output is None and rec.segment.store.original_size(rec.log) is not None
    for kind, data, path_shown in _files_due(rec, rebuilt, out, shown):
        o = FileOutcome(kind, path_shown, len(data) // ENTRY[kind].size, WRITTEN)
        out.append(o)
        path = _in(directory, store, rec, kind)
        if in_place_tiered:  # its indexes are in the segment's objects: a file beside them would be ignored
            o.status = FAILED
            o.error = InputError("kseg writes nothing beside a tiered segment's objects; give --output-dir")
            continue
        try:
            existing = _read(path, store)
            if existing is None or _replaces(rec, o, data, existing, index, force):
                _ensure_directory(directory, created=output is not None, made=made)
                write_atomic(path, data, replace=existing is not None)
        except InputError as exc:
            o.status, o.error = FAILED, exc
        except OSError as exc:
            o.status, o.error = FAILED, InputError(f"cannot write: {exc.strerror or exc}", path=directory)
    if output is None:
        refused = [o for o in out if o.status == REFUSED]
        _older_rules(rec, refused, REFUSED, keep_status=True)
        for o in refused:
            if o.rule:
                o.status = KEPT
    return out


def _replaces(
    rec: Recovered, o: FileOutcome, data: bytes, existing: bytes | LargeIndex, index: _Existing, force: bool
) -> bool:
    """Whether the existing file is to be replaced by the rebuilt ``data`` (``replaced``, with ``force``);
    else ``o`` says why not: ``unchanged`` (identical, at the interval its ``.index`` shows, a preallocated
    zero tail) or ``refused`` (it differs; without ``force``)."""
    kind, size = o.kind, ENTRY[o.kind].size
    o.existing_entries = len(existing) // size
    if existing == data:
        o.status = UNCHANGED
        return False
    o.interval = index.interval_for(kind, existing)
    if o.interval is not None:
        o.status, o.at_least = UNCHANGED, not index.existing
        return False
    rule = None if force else tail_rule(kind, existing, data)
    if rule:
        o.status, o.rule = UNCHANGED, rule
        o.existing_entries = (len(existing) - zero_tail(kind, existing, data)) // size
        return False
    o.difference = difference(kind, existing, data, rec.segment.base_offset)
    o.status = REPLACED if force else REFUSED
    return force
