"""``verify-index --resume REPORT``: the segments an earlier report already verified, skipped.

A report's segment rows (:mod:`kseg.ops.verify.report`: JSON Lines, one file or a directory of part
files; or Parquet part files; on a local disk or a store, ``s3://`` ...) name each segment by ``logDir``,
``partition`` and ``segment``, give the ``bytes`` read, the ``lastOffset`` read and the ``.log``'s
``identity`` when it was read.  A segment whose row is ``clean`` or ``problems`` and whose ``.log`` has the
same identity now is *resumed*: not read again, its rows (the segment row and its problem rows) carried into
the new report and counted in the summary.  The identity is what cannot stay the same across a write: a
local file's size, ``mtime_ns`` and ``ctime_ns`` (a user can set the mtime back with ``touch -d``, never the
ctime: any write, and any change of the mtime, sets it to now), a store object's ETag (S3 gives a new one to
each write; without one, the size and modification time the store sets).  Size and mtime alone are no
identity: a byte flipped and the mtime restored keeps both.

A ``failed`` row, a segment that changed (a note says what), one read only up to a fault (its ``bytes``
short of the file), a row without ``lastOffset`` or ``identity`` (an older report: a note) is verified
again.

The report is read as a stream (:func:`read_rows`): a FIFO, a device or a directory's non-regular part is
refused before a byte is read (one line, exit 2), and a JSON Lines row longer than :data:`MAX_ROW` bytes
(no report row is near it) is refused where it starts, never held whole.

Continuity across a resumed segment is checked as a full run checks it (Kafka's ``LogSegments`` keep
segments ordered by base offset; each must start after the previous one's last offset):

- a verified segment after a resumed one is checked against the resumed one's ``lastOffset`` as the
  report gives it (:attr:`Resumption.before`), never against the segment before that;
- a segment whose verdict could be resumed but whose previous segment is verified again is verified
  again too (one segment per such place): an overlap with that previous segment belongs on its row, as
  in a full run.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from kseg.errors import InputError
from kseg.ops.verify.report import PART_PREFIX, own_fields
from kseg.ops.verify.result import SegmentResult
from kseg.ops.verify.run import Report
from kseg.storage import files, location
from kseg.storage.listing import Listed
from kseg.storage.partition import Partition, Segment
from kseg.storage.stores.discover import store_of

if TYPE_CHECKING:
    from kseg.storage.context import Store

#: A verified segment as a report names it: (logDir, partition, segment, bytes).
Key = tuple[str, str, str, int]
#: A segment's identity: (logDir, partition, segment).
Name = tuple[str, str, str]
#: A partition as discovered, or packed compactly (``verify-index --spark``).
P = TypeVar("P", Partition, Listed)
#: Statuses of segments that were verified to a verdict (``failed`` ones were not).
VERDICTS = ("clean", "problems")
#: Bytes a JSON Lines report on a store is read in (one ranged request each).
CHUNK = 1 << 20
#: The longest report row read (a segment row with its notes is a few KiB; its problem rows less).
MAX_ROW = 16 << 20


class Resumption(NamedTuple):
    """What ``--resume`` leaves out of a run: the report, the segments skipped, and for each segment
    verified right after a skipped one, that one as the report gives it (its last offset); ``notes``: why
    segments the report gave a verdict for are verified again."""

    path: str
    skipped: set[Name]
    before: dict[Name, SegmentResult]
    notes: tuple[str, ...] = ()


class Verdict(NamedTuple):
    """A segment's verdict in the report: the last offset it read and the identity of its ``.log`` then."""

    last_offset: int | None
    identity: str | None


def report_files(path: str, store: Store) -> list[str]:
    """The files of a report (of ``store``): the file itself, or a directory's ``part-*.jsonl``/``.parquet``
    (local or a URI)."""
    if store.remote:
        return _remote_files(path)
    path = location.local_path(path)
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            names = sorted(os.listdir(path))
        else:
            _regular(path, mode)
            return [path]
    except OSError as exc:
        raise InputError(f"cannot read the report to resume: {exc.strerror or exc}", path=path) from None
    return [os.path.join(path, n) for n in names if _part(n)]


def _regular(path: str, mode: int) -> None:
    """A report is a regular file: a FIFO would block, a device never end (``/dev/zero``)."""
    if not stat.S_ISREG(mode):
        what = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else None
        raise InputError(
            f"cannot resume from it: {what or 'not a regular file'}, not a report (give a verify-index --report file "
            "or directory)",
            path=path,
        )


def _part(name: str) -> bool:
    return name.startswith(PART_PREFIX) and name.endswith((".jsonl", ".parquet"))


def _remote_files(uri: str) -> list[str]:
    try:
        what = location.kind(uri)
        if what == "file":
            return [uri]
        if what == "missing":
            raise InputError("no such file or directory", path=uri)
        return [e.path for e in location.children(uri) if _part(location.basename(e.path))]
    except InputError as exc:
        raise InputError(f"cannot read the report to resume: {exc.message}", path=exc.path or uri) from None


def read_rows(path: str) -> Iterator[dict]:
    """Every row of a report, file by file (a Parquet part by record batches, JSON Lines by lines in
    pieces of :data:`CHUNK`: bounded memory)."""
    store = store_of(path)  # the report given: its store chosen once, for it and each of its part files
    for name in report_files(path, store):
        if name.endswith(".parquet"):
            yield from _parquet_rows(name, store)
        else:
            yield from _jsonl_rows(name, store)


def _parquet_rows(name: str, store: Store) -> Iterator[dict]:
    import pyarrow.parquet as pq

    try:
        with _open(name, store) as f:
            for batch in pq.ParquetFile(f).iter_batches(batch_size=10_000):
                yield from (own_fields(row) for row in batch.to_pylist())
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise InputError(f"cannot read the report to resume: {exc}", path=name) from None


def _open(name: str, store: Store):
    """A report file opened for reading: a local regular file (checked on the open file, without blocking on
    a FIFO), or a store's object read by ranged requests."""
    try:
        if store.remote:
            return location.open_input(name)
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            _regular(name, os.fstat(fd).st_mode)
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
    except InputError as exc:
        raise InputError(f"cannot read the report to resume: {exc.message}", path=name) from None
    except OSError as exc:
        raise InputError(f"cannot read the report to resume: {exc.strerror or exc}", path=name) from None


def _lines(f, name: str) -> Iterator[bytes]:
    """The lines of ``f`` read :data:`CHUNK` bytes at a time (the last one without its newline); a line
    longer than :data:`MAX_ROW` is refused where it starts (:class:`InputError`), never held whole."""
    rest = bytearray()
    position = 0  # where ``rest`` starts in the file
    while True:
        data = f.read(CHUNK)
        if not data:
            break
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            line = bytes(rest) + data[start : end + 1]
            rest.clear()
            yield line
            position += len(line)
            start = end + 1
        rest += data[start:]
        if len(rest) > MAX_ROW:
            raise InputError(
                f"cannot resume from it: a line longer than {MAX_ROW} bytes, not a verify-index report row",
                path=name,
                position=position,
            )
    if rest:
        yield bytes(rest)


def _jsonl_rows(name: str, store: Store) -> Iterator[dict]:
    position = 0
    try:
        with _open(name, store) as f:
            for line in _lines(f, name):
                try:
                    row = json.loads(line)
                except ValueError:
                    row = None
                if not isinstance(row, dict) or "type" not in row:
                    raise InputError(
                        "cannot resume from it: expected a verify-index report row (a JSON object), found "
                        f"{line[:40]!r}",
                        path=name,
                        position=position,
                    )
                position += len(line)
                yield row
    except OSError as exc:
        raise InputError(f"cannot read the report to resume: {exc.strerror or exc}", path=name) from None


def verified(path: str) -> dict[Key, Verdict]:
    """The segments the report at ``path`` gives a verdict for (clean or with problems), each with the
    last offset it read (None: no batch) and its ``.log``'s identity then (None: an older report)."""
    return {
        (row.get("logDir") or "", row["partition"], row["segment"], int(row.get("bytes") or 0)): Verdict(
            row["lastOffset"], row.get("identity")
        )
        for row in read_rows(path)
        if row.get("type") == "segment" and row.get("segment") and row.get("status") in VERDICTS and "lastOffset" in row
    }


def _unchanged(seg: Segment, verdict: Verdict | None, notes: list[str]) -> bool:
    """Whether ``seg``'s ``.log`` is the one the report's verdict was given for: the same identity (a note
    says why not when it is not)."""
    if verdict is None or seg.log is None:
        return False
    if verdict.identity is None:
        notes.append(f"{seg.log}: verified again: the report records no identity of it (an older report)")
        return False
    try:
        now = files.identity(seg.log, seg.store)
    except InputError:
        return False  # the read says why
    if now != verdict.identity:
        notes.append(f"{seg.log}: verified again: changed since the report ({_changed(verdict.identity, now)})")
        return False
    return True


def _changed(then: str, now: str) -> str:
    """``mtime_ns 1 -> 2, ctime_ns 3 -> 4``: the parts of two identities that differ."""
    old = dict(part.partition("=")[::2] for part in then.split(" "))
    new = dict(part.partition("=")[::2] for part in now.split(" "))
    parts = [
        f"{k} {old.get(k, '-')} -> {new.get(k, '-')}" for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)
    ]
    return ", ".join(parts) or f"{then} -> {now}"


def skip_verified(
    partitions: list[P], keys: dict[Key, Verdict], notes: list[str] | None = None
) -> tuple[list[P], set[Name], dict[Name, SegmentResult]]:
    """``partitions`` without the segments in ``keys`` (same log dir, partition, name and ``.log`` size, and
    the same identity now) whose previous segment is resumable too (or who have none); those skipped as
    ``(logDir, partition, segment)``; and for each segment verified right after a skipped one, that one as
    the report gives it (:attr:`Resumption.before`).  ``notes``: why a segment with a verdict is verified
    again.  A compact listing (``--spark``'s) stays compact, one partition's segments made at a time."""
    notes = [] if notes is None else notes
    skipped: set[Name] = set()
    before: dict[Name, SegmentResult] = {}
    out = []
    for p in partitions:
        if p.error is not None or not keys:
            out.append(p)
            continue
        log_dir, name, segments = p.log_dir, p.name, p.segments
        known = [(log_dir, name, seg.name, seg.log_size()) for seg in segments]
        same = [_unchanged(seg, keys.get(known[i]), notes) for i, seg in enumerate(segments)]
        keep: list[Segment] = []
        for i, seg in enumerate(segments):
            if same[i] and (i == 0 or same[i - 1]):
                skipped.add((log_dir, name, seg.name))
                continue
            if i and (log_dir, name, known[i - 1][2]) in skipped:
                prev = segments[i - 1]
                before[(log_dir, name, seg.name)] = SegmentResult(
                    name,
                    prev.name,
                    prev.base_offset,
                    prev.log or "",
                    last_offset=keys[known[i - 1]].last_offset,
                    log_dir=log_dir,
                    names=prev.store.names,
                )
            keep.append(seg)
        if len(keep) != len(segments):
            p = _kept(p, keep, p.head_left_out or (keep[:1] != segments[:1]))
        out.append(p)
    return out, skipped, before


def _kept(p: P, keep: list[Segment], head_left_out: bool) -> P:
    """``p`` with only the segments ``keep``, in the same shape (a :class:`Partition` or a compact
    :class:`~kseg.storage.listing.Listed`)."""
    if isinstance(p, Partition):
        return p.replace(segments=keep, head_left_out=head_left_out)
    return Listed(Partition(p.path, keep, head_left_out=head_left_out, store=p.store))


def carried_rows(path: str, skipped: set[Name], prior: Report) -> Iterator[dict]:
    """The rows of the skipped segments in the report at ``path`` (read again: not held), counted in
    ``prior`` as they pass (``prior.resumed`` the segments)."""
    for row in read_rows(path):
        if (row.get("logDir") or "", row.get("partition"), row.get("segment")) not in skipped:
            continue
        if row.get("type") == "segment":
            prior.resumed += 1
            prior.segments += 1
            prior.bytes += int(row.get("bytes") or 0)
            prior.problems += int(row.get("problems") or 0)
            if row.get("status") == "problems":
                prior.with_problems += 1
            else:
                prior.clean += 1
        yield row
