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

from kseg.errors import InputError
from kseg.format.indexes import OFFSET_ENTRY, TIME_ENTRY, TXN_ENTRY
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT
from kseg.ops.rebuild.rebuild import Recovered
from kseg.storage import files, location
from kseg.storage.atomic import write_atomic

SAME, DIFFERS, MISSING, ABSENT = "same", "differs", "missing", "absent"
OLDER_RULE = "older-rule"  # differs from what recovery writes, but valid: an older Kafka writer's rule
UNCHANGED, WRITTEN, REPLACED = "unchanged", "written", "replaced"
REFUSED, SKIPPED, FAILED = "refused", "skipped", "failed"
KEPT = "kept"  # not written without --force: the existing file differs but is valid by its writer's rule
_ENTRY = {files.INDEX: OFFSET_ENTRY, files.TIME_INDEX: TIME_ENTRY, files.TXN_INDEX: TXN_ENTRY}


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
        if self.checking:
            return f"not compared: the existing file could not be read: {self.error.message}"
        return f"not written: {self.error.describe()}"


def rebuilt_files(rec: Recovered) -> dict[str, bytes | None]:
    """The bytes of each file recovery leaves; None for a ``.txnindex`` that would not exist."""
    txn = rec.txn_index_bytes()
    if not txn and rec.segment.txnindex is None:
        txn = None
    return {files.INDEX: rec.index_bytes(), files.TIME_INDEX: rec.time_index_bytes(), files.TXN_INDEX: txn}


class _LargeIndex:
    """An existing index file over ``files.WHOLE_INDEX`` bytes (a preallocated or garbage one), compared
    with the rebuilt bytes a window at a time: the slices and comparisons :func:`difference` and the
    callers make, without holding the file (a sparse 1 GiB index would cost its size)."""

    def __init__(self, source: files.IndexFile) -> None:
        self.source = source

    def __len__(self) -> int:
        return self.source.length

    def __getitem__(self, part: slice) -> bytes:
        start, stop, _ = part.indices(self.source.length)
        return self.source.read(start, max(start, stop))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (bytes, bytearray)) or len(other) != len(self):
            return False
        step = 1 << 20
        return all(self[at : at + step] == other[at : at + step] for at in range(0, len(self), step))

    __hash__ = None  # type: ignore[assignment]

    def zero_from(self, start: int) -> bool:
        step = 1 << 20
        for at in range(start, len(self), step):
            chunk = self[at : at + step]
            if chunk.count(0) != len(chunk):
                return False
        return True


def _read(path: str) -> bytes | _LargeIndex | None:
    if not files.exists(path):
        return None
    data = files.open_index(path)
    return data if isinstance(data, bytes) else _LargeIndex(data)


def _zero_from(existing, start: int) -> bool:
    """Whether every byte of ``existing`` from ``start`` is zero."""
    if isinstance(existing, _LargeIndex):
        return existing.zero_from(start)
    return not any(existing[start:])


def _entry_text(kind: str, data, n: int, base: int) -> str:
    size = _ENTRY[kind].size
    chunk = data[n * size : (n + 1) * size]
    if len(chunk) < size:
        return f"{len(chunk)} trailing bytes"
    e = _ENTRY[kind].unpack(chunk)
    if kind == files.INDEX:
        return f"(offset {base + e[0]}, position {e[1]})"
    if kind == files.TIME_INDEX:
        return f"(timestamp {e[0]}, offset {base + e[1]})"
    return f"(producerId {e[1]}, firstOffset {e[2]}, lastOffset {e[3]}, lastStableOffset {e[4]})"


def difference(kind: str, existing, rebuilt: bytes, base: int) -> str:
    """The first difference between two index files, entry by entry."""
    size = _ENTRY[kind].size
    n_old, n_new = -(-len(existing) // size), len(rebuilt) // size
    for n in range(min(n_old, n_new)):
        if existing[n * size : (n + 1) * size] != rebuilt[n * size : (n + 1) * size]:
            return (
                f"entry #{n}: existing {_entry_text(kind, existing, n, base)}, "
                f"rebuilt {_entry_text(kind, rebuilt, n, base)}"
            )
    if n_old > n_new:
        extra = len(existing) - n_new * size
        if _zero_from(existing, n_new * size):
            return (
                f"the existing file has {extra} more bytes, all zero from entry #{n_new} "
                "(a preallocated index of a segment that was not closed)"
            )
        return (
            f"the existing file has {n_old - n_new} more entries, from entry #{n_new} "
            f"{_entry_text(kind, existing, n_new, base)}"
        )
    return (
        f"the rebuilt file has {n_new - n_old} more entries, from entry #{n_old} "
        f"{_entry_text(kind, rebuilt, n_old, base)}"
    )


def inferred_interval(index: bytes) -> int | None:
    """The largest ``index.interval.bytes`` an existing ``.index`` can have been written at, or None.

    Recovery (``LogSegment.recover``) and a broker appending a batch at a time add an entry when more
    than ``index.interval.bytes`` were appended since the last one (from position 0), so every gap
    between consecutive entries' positions (the first: from 0) is larger than the interval: the
    smallest gap less one bounds it.  None for an index with no entries or whose positions do not
    increase (a zero tail, damage)."""
    size = OFFSET_ENTRY.size
    if not index or len(index) % size:
        return None
    prev, smallest = 0, None
    for _, pos in OFFSET_ENTRY.iter_unpack(index):
        gap = pos - prev
        if gap <= 0:
            return None
        smallest = gap if smallest is None or gap < smallest else smallest
        prev = pos
    return None if smallest is None else smallest - 1


def at_inferred_interval(
    rec: Recovered, existing_index, interval: int, max_index_size: int, limit: int
) -> tuple[int, dict[str, bytes | None]] | None:
    """``(N, rebuilt files)`` when recovery at the interval the existing ``.index`` shows (N, not
    ``interval``) rebuilds that ``.index`` byte for byte; else None.  An empty ``.index`` beside a log
    whose recovery makes entries shows an interval of at least the last batch's position (N: recovery
    at N makes none; the outcome then says "≥ N").  Reads the log once more (only for
    a segment whose ``.index`` differs); producer state is not involved in the ``.index``/``.timeindex``."""
    if not isinstance(existing_index, bytes) or rec.truncated or rec.stop is not None or rec.failure is not None:
        return None  # none, or over files.WHOLE_INDEX (_LargeIndex: more entries than any segment.index.bytes)
    if existing_index == b"" and rec.last_position > 0:  # no entry was ever due: interval >= the last batch's start
        n = rec.last_position
    else:
        n = inferred_interval(existing_index)
    if n is None or n == interval:
        return None
    from kseg.ops.rebuild.rebuild import recover_segment
    from kseg.storage.producer_state import ProducerState

    try:
        again = recover_segment(
            rec.segment, ProducerState(), index_interval_bytes=n, max_index_size=max_index_size, limit=limit
        )
    except InputError:
        return None
    if again.failure is not None or again.index_bytes() != existing_index:
        return None
    return n, {files.INDEX: again.index_bytes(), files.TIME_INDEX: again.time_index_bytes()}


def zero_tail(kind: str, existing: bytes, rebuilt: bytes) -> int:
    """Bytes of a preallocated zero tail when ``existing`` is ``rebuilt`` followed by zeros (an active
    segment's ``.index``/``.timeindex``, preallocated to ``segment.index.bytes``, after a crash or copied
    from a live broker: ``verify-index`` notes it, the broker trims it when the segment rolls), else 0.
    A ``.timeindex`` may lack recovery's last entry: the one ``LogSegment.onBecomeInactiveSegment``
    (or a clean ``close``) adds for the largest timestamp, never written for a segment still active."""
    if kind == files.TXN_INDEX:
        return 0
    used = [rebuilt]
    if kind == files.TIME_INDEX and rebuilt:
        used.append(rebuilt[: -TIME_ENTRY.size])
    for head in used:
        if len(existing) > len(head) and existing[: len(head)] == head and _zero_from(existing, len(head)):
            return len(existing) - len(head)
    return 0


def tail_rule(kind: str, existing: bytes, rebuilt: bytes) -> str | None:
    """What a healthy zero-tailed existing file is (:func:`zero_tail`), for the outcome's ``rule``; None
    when ``existing`` is not one."""
    tail = zero_tail(kind, existing, rebuilt)
    if not tail:
        return None
    text = (
        f"the existing file's used entries; then a preallocated zero tail of {tail} bytes (an active "
        "segment's index, as after a crash or copied from a live broker; Kafka trims it when the segment "
        "rolls)"
    )
    if len(existing) - tail < len(rebuilt):
        text += "; recovery adds the last entry, which a segment gets when it rolls"
    return text


def _nothing_to_do(rec: Recovered, kind: str, data: bytes | None, shown: str) -> FileOutcome | None:
    """The outcome of a file that is neither compared nor written: its segment could not be
    recovered (skipped), or recovery leaves no such file (absent)."""
    if rec.failure is not None:
        return FileOutcome(kind, shown, None, SKIPPED)
    if data is None:
        return FileOutcome(kind, shown, None, ABSENT)
    return None


def check(
    rec: Recovered, interval: int = 4096, max_index_size: int = 10 << 20, limit: int = DEFAULT_DECOMPRESSION_LIMIT
) -> list[FileOutcome]:
    """Compare the rebuilt files with those beside the log; nothing is written.  ``interval``,
    ``max_index_size``, ``limit``: what ``rec`` was recovered with (:func:`at_inferred_interval`)."""
    out = []
    base = rec.segment.base_offset
    directory = files.parent(rec.segment.log)
    rebuilt = rebuilt_files(rec)
    inferred = None
    if rec.segment.index is not None:
        try:
            existing_index = _read(rec.segment.index)
        except InputError:
            existing_index = None
        if existing_index is not None and existing_index != rebuilt[files.INDEX]:
            inferred = at_inferred_interval(rec, existing_index, interval, max_index_size, limit)
    for kind, data in rebuilt.items():
        path = location.join(directory, rec.segment.name + kind)
        shown = files.display(
            files.sibling(rec.segment.log, kind)
            if location.is_uri(rec.segment.log)
            else os.path.join(os.path.dirname(rec.segment.log), rec.segment.name + kind)
        )
        size = _ENTRY[kind].size
        nothing = _nothing_to_do(rec, kind, data, shown)
        if nothing is not None:
            out.append(nothing)
            continue
        o = FileOutcome(kind, shown, len(data) // size, SAME, checking=True)
        try:
            existing = _read(path)
        except InputError as exc:
            o.status, o.error = FAILED, exc
            out.append(o)
            continue
        if existing is None:
            o.status = MISSING
        else:
            o.existing_entries = len(existing) // size
            if existing != data:
                if inferred is not None and inferred[1].get(kind) == existing:
                    o.interval, o.at_least = inferred[0], not existing_index
                elif tail_rule(kind, existing, data):
                    o.rule = tail_rule(kind, existing, data)
                    o.existing_entries = (len(existing) - zero_tail(kind, existing, data)) // size
                else:
                    o.status, o.difference = DIFFERS, difference(kind, existing, data, base)
        out.append(o)
    _older_rules(rec, out)
    return out


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
        rules = older_writer_rules(location.basename(files.parent(seg.log)), seg)
    except InputError:
        return
    for o in pending:
        path = seg.index if o.kind == files.INDEX else seg.timeindex
        found = rules.get(path)
        if found and not (o.difference or "").endswith("(a preallocated index of a segment that was not closed)"):
            o.status = o.status if keep_status else OLDER_RULE
            o.rule = "; ".join(note.split(": ", 1)[1] for note in found)


_ensured: set[str] = set()  # --output-dir directories this process made or found, once


def _ensure_directory(directory: str, *, created: bool) -> None:
    """The directory a file is written to must be there: a log's directory is never made (it held the
    log: gone, it was renamed or deleted -- a broker renames a deleted partition to ``*-delete`` -- and
    recreating it would leave orphan indexes); an ``--output-dir`` directory is made once, and not
    again should it vanish during the run."""
    if os.path.isdir(directory):
        if created:
            _ensured.add(directory)
        return
    if not created or directory in _ensured:
        raise InputError(
            "the directory vanished during the run (renamed or deleted: a broker "
            "renames a deleted partition to *-delete); it is not recreated",
            path=directory,
        )
    os.makedirs(directory, exist_ok=True)
    _ensured.add(directory)


def write(
    rec: Recovered,
    output_dir: str | None,
    force: bool,
    interval: int = 4096,
    max_index_size: int = 10 << 20,
    limit: int = DEFAULT_DECOMPRESSION_LIMIT,
) -> list[FileOutcome]:
    """Write the rebuilt files next to the log or in ``output_dir`` (created if needed).  Without
    ``force`` an existing file that differs but is healthy (written at another interval, or by an older
    broker's rule) is kept and said (``unchanged``/``kept``); any other difference is refused."""
    out = []
    refused: list[FileOutcome] = []
    base = rec.segment.base_offset
    directory = output_dir or os.path.dirname(os.path.abspath(rec.segment.log))
    rebuilt = rebuilt_files(rec)
    inferred = None
    if not force:
        try:
            existing_index = _read(os.path.join(directory, rec.segment.name + files.INDEX))
        except InputError:
            existing_index = None
        if existing_index is not None and existing_index != rebuilt[files.INDEX]:
            inferred = at_inferred_interval(rec, existing_index, interval, max_index_size, limit)
    for kind, data in rebuilt.items():
        path = os.path.join(directory, rec.segment.name + kind)
        shown = files.display(
            path if output_dir else os.path.join(os.path.dirname(rec.segment.log), rec.segment.name + kind)
        )
        size = _ENTRY[kind].size
        nothing = _nothing_to_do(rec, kind, data, shown)
        if nothing is not None:
            out.append(nothing)
            continue
        o = FileOutcome(kind, shown, len(data) // size, WRITTEN)
        out.append(o)
        try:
            existing = _read(path)
            if existing is not None:
                o.existing_entries = len(existing) // size
                if existing == data:
                    o.status = UNCHANGED
                    continue
                if inferred is not None and inferred[1].get(kind) == existing:
                    o.status, o.interval, o.at_least = UNCHANGED, inferred[0], not existing_index
                    continue
                rule = None if force else tail_rule(kind, existing, data)
                if rule:
                    o.status, o.rule = UNCHANGED, rule
                    o.existing_entries = (len(existing) - zero_tail(kind, existing, data)) // size
                    continue
                o.difference = difference(kind, existing, data, base)
                if not force:
                    o.status = REFUSED
                    refused.append(o)
                    continue
                o.status = REPLACED
            _ensure_directory(directory, created=output_dir is not None)
            write_atomic(path, data, replace=existing is not None)
        except InputError as exc:
            o.status, o.error = FAILED, exc
        except OSError as exc:
            o.status, o.error = FAILED, InputError(f"cannot write: {exc.strerror or exc}", path=directory)
    if not output_dir:
        _older_rules(rec, refused, REFUSED, keep_status=True)
        for o in refused:
            if o.rule:
                o.status = KEPT
    return out
