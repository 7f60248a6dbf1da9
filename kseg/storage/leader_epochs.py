"""``leader-epoch-checkpoint``: the leader epochs of a partition replica (``LeaderEpochFileCache``).

Text file (``CheckpointFile`` with ``LeaderEpochCheckpointFile.Formatter``), lines::

    0                 version (CURRENT_VERSION 0)
    N                 entry count
    <epoch> <startOffset>     N lines, whitespace-separated (EpochEntry)

An empty file, or one with only the version line, is an empty cache.  Any
other version, a line that is not two integers, or an entry count other than
N is an ``IOException`` ("Malformed line in checkpoint file", "Expected [N]
entries ... but found only [M]").  Entry i means: from ``startOffset`` on,
batches were written by the leader of ``epoch`` -- where two replicas' caches
part, their histories part (``LeaderEpochFileCache.endOffsetFor``, the
follower truncation of KIP-101/KIP-279).

The checkpoint against the log (:func:`order_problems`, :class:`EpochCheck`: the rule of ``verify-index``
and ``logdir``, written once here).  ``LeaderEpochFileCache.assign`` keeps the entries increasing (it drops
every entry whose epoch or start offset is not below the new one's; Kafka 1.x allowed an equal start
offset: a leader elected twice before any write), and ``UnifiedLog.append`` assigns each magic v2 batch's
partition leader epoch at its base offset *before* the append, flushed at once -- so every batch at or
after the first entry's start carries the epoch of the entry whose range holds it.  What may differ in a
healthy partition, and is never a problem:

* batches below the first entry's start: ``truncateFromStart`` (retention, ``DeleteRecords``) drops the
  entries below the log start offset and moves the last of them up to it -- possibly into the middle of a
  batch (so a batch is judged at ``max(base, first start)``) -- and flushes asynchronously, so a crash
  leaves older entries, or a first entry below the log's first batch (entries older than the log);
* entries past the log end or without any batch (a leader elected but not yet written to, a follower's
  ``truncateFromEnd`` flushed asynchronously), and an epoch whose first batch comes after its entry's start
  with no batch between (compaction removed them);
* batches of magic v0/v1: no partition leader epoch (-1, ``RecordBatch.NO_PARTITION_LEADER_EPOCH``); Kafka
  never records them (brokers before 2.1 kept assigning epochs at leader election over a v1 log).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import NamedTuple

from kseg.errors import CheckpointError, CorruptIndexError
from kseg.limits import INT64_MAX
from kseg.storage import files, location
from kseg.storage.context import Store
from kseg.storage.names import LEADER_EPOCHS_FILE
from kseg.storage.offset_checkpoints import (
    LEADER_EPOCHS,
    MAX_EPOCH_ENTRIES,
    Frame,
    Text,
    java_int,
    java_split,
    open_aux,
    read_frame,
)

FILE_NAME = LEADER_EPOCHS_FILE
VERSION = 0
NO_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH: a magic v0/v1 batch
_PAST_ALL = INT64_MAX + 1  # past every offset
MAX_TRACKED = 4096  # epochs remembered for the report (a damaged log names garbage epochs)
MAX_ENTRIES, KIND = MAX_EPOCH_ENTRIES, LEADER_EPOCHS  # the bounds of the reader (kseg.storage.checkpoints)


class EpochEntry(NamedTuple):
    """``EpochEntry``: a leader epoch and the first offset written in it."""

    epoch: int
    start_offset: int


def _int(text: str, path: str, line_no: int, bits: int) -> int:
    """``Integer.parseInt`` / ``Long.parseLong`` of ``text`` (no blanks around it), or a malformed line."""
    value = java_int(text, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if value is None:
        raise _malformed(path, line_no, text)
    return value


def _malformed(path: str, line_no: int, text: str) -> CorruptIndexError:
    return CorruptIndexError(f"malformed line {line_no} in leader-epoch-checkpoint: {text!r}", path=path)


def _unknown_version(path: str, version: int) -> CorruptIndexError:
    why = f"unrecognised version {version} in leader-epoch-checkpoint, expected {VERSION}"
    return CorruptIndexError(why, path=path)


def _miscount(path: str, expected: int, found: int, last: int) -> CorruptIndexError:
    return CorruptIndexError(f"expected {expected} entries in leader-epoch-checkpoint, found {found}", path=path)


#: ``LeaderEpochCheckpointFile``'s frame, in kseg's words for an index's problems (the file is one of the
#: partition's indexes to ``verify-index``; an offset checkpoint keeps Kafka's texts).
FRAME = Frame(VERSION, KIND, MAX_ENTRIES, _malformed, _unknown_version, _miscount)


def parse(text: Text, path: str = FILE_NAME) -> list[EpochEntry]:
    """The entries of a checkpoint file (``CheckpointFile.CheckpointReadBuffer.read``), read a line at a time
    (:func:`kseg.storage.offset_checkpoints.read_frame`): a count on line 2 above :data:`MAX_ENTRIES` is
    refused before any entry is read, and no more entries than the count are held (the lines past it are read
    to count them)."""

    def entry(n: int, line: str) -> EpochEntry:  # LeaderEpochCheckpointFile.Formatter.fromString
        parts = java_split(line)  # its WHITE_SPACES_PATTERN
        if len(parts) != 2:
            raise _malformed(path, n, line)
        return EpochEntry(_int(parts[0], path, n, 32), _int(parts[1], path, n, 64))

    try:
        return list(read_frame(text, path, FRAME, entry))
    except CheckpointError as exc:  # not UTF-8: the file's fault, as a malformed line is
        raise CorruptIndexError(
            f"leader-epoch-checkpoint is {exc.message}", path=exc.path, position=exc.position
        ) from None


def read(directory: str, listed: bool | None = None, *, store: Store) -> list[EpochEntry] | None:
    """The checkpoint of a partition directory, or None when it has none (``listed``: whether the
    directory's listing held it, so an object store is not asked again; None: ask; ``store``: the
    partition's).  A malformed file raises :class:`CorruptIndexError`; an unreadable one
    :class:`kseg.errors.InputError`."""
    path = location.join(directory, FILE_NAME)
    present = files.exists(path, store) if listed is None else listed
    return _read_file(path, store) if present else None


def _read_file(path: str, store: Store) -> list[EpochEntry]:
    return parse(open_aux(path, KIND, store), files.display(path, store))


#: A tiered segment's own checkpoint, by layout: Aiven's ``.leader-epoch-checkpoint`` (in ``.indexes``, or
#: its own object before October 2023), ``LocalTieredStorage``'s ``.leader_epoch_checkpoint``.
TIERED_SUFFIXES = (".leader-epoch-checkpoint", files.LEADER_EPOCH_CHECKPOINT)


def read_partition(directory: str, logs: list[str], store: Store) -> list[EpochEntry] | None:
    """The partition's checkpoint (:func:`read`); without one, in a tiered partition (``logs`` its
    segments' ``.log`` paths, by base offset), the checkpoint the last segment carries: the epochs up to that
    segment's end, which ``RemoteLogManager.copyLogSegment`` uploads with it (``getLeaderEpochEntries(log, -1,
    nextSegmentBaseOffset)``); None when neither exists."""
    entries = read(directory, store=store)
    if entries is not None or not logs or files.tiered_segment_id(logs[-1]) is None:
        return entries
    stem = logs[-1][: -len(files.LOG)]
    for suffix in TIERED_SUFFIXES:
        if files.exists(stem + suffix, store):
            return _read_file(stem + suffix, store)
    return None


def epoch_at(entries: list[EpochEntry] | None, offset: int) -> int | None:
    """The epoch whose range holds ``offset`` (the last entry with startOffset <= offset)."""
    if not entries:
        return None
    found = None
    for e in entries:
        if e.start_offset <= offset:
            found = e.epoch
    return found


def order_findings(entries: list[EpochEntry]) -> list[str]:
    """Entries that do not increase (``LeaderEpochFileCache.assign``): each epoch above the one before,
    each start offset at or above it (line numbers are the file's)."""
    return [
        f"line {i}: epoch {cur.epoch} at offset {cur.start_offset} does not follow epoch {prev.epoch} "
        f"at offset {prev.start_offset} (epochs increase, start offsets never decrease)"
        for i, (prev, cur) in enumerate(zip(entries, entries[1:], strict=False), start=4)
        if cur.epoch <= prev.epoch or cur.start_offset < prev.start_offset
    ]


class EpochCheck:
    """The checkpoint's entries against the batches' partition leader epochs, one batch at a time (module
    docstring); constant memory but for the epochs it reports.  Feed it the batches of one partition's
    log (any of them, in any number of calls: each batch is judged alone), then read :meth:`problems`."""

    __slots__ = (
        *("entries", "path", "order", "_starts", "_index", "_from"),
        *("first", "early", "late", "unseen", "lo", "hi", "expected"),
    )

    def __init__(self, entries: list[EpochEntry], path: str) -> None:
        self.entries, self.path = entries, path
        self._starts = [e.start_offset for e in entries]
        self._index: dict[int, int] = {}
        for i, e in enumerate(entries):
            self._index.setdefault(e.epoch, i)
        self.order = order_findings(entries)
        # entries out of order give no ranges to judge batches by: the order problems stand alone
        self._from = entries[0].start_offset if entries and not self.order else None
        self.first: dict[int, int] = {}  # epoch -> base offset of its first batch seen
        self.early: dict[int, int] = {}  # entry index -> first batch of its epoch below its start
        self.late: dict[int, tuple[int, int]] = {}  # entry index -> (base, epoch) of an earlier epoch's batch
        self.unseen: dict[int, int] = {}  # epoch -> first batch of an epoch no entry names
        # the range of the last entry a batch agreed with, and its epoch: a caller may skip :meth:`batch` for a
        # batch with ``lo <= base < hi`` and that epoch (it agrees too), as the verify pass does per batch
        self.lo, self.hi, self.expected = 0, 0, NO_EPOCH

    @property
    def judged_from(self) -> int | None:
        """The offset from which batches are judged (:meth:`batch` ignores a batch ending below it, and one
        of a negative epoch), or None when none is (no entries, or entries out of order)."""
        return self._from

    def batch(self, base: int, last: int, epoch: int) -> None:
        """One batch: its base and last offset and its partition leader epoch (-1 for magic v0/v1)."""
        start = self._from
        if epoch < 0 or start is None or last < start:
            return
        if epoch not in self.first and len(self.first) < MAX_TRACKED:
            self.first[epoch] = base
        i = bisect_right(self._starts, max(base, start)) - 1
        if self.entries[i].epoch == epoch:
            starts = self._starts
            self.lo = max(starts[i], start)
            self.hi = starts[i + 1] if i + 1 < len(starts) else _PAST_ALL
            self.expected = epoch
            return
        j = self._index.get(epoch)
        if j is None:
            if len(self.unseen) < MAX_TRACKED:
                self.unseen.setdefault(epoch, base)
        elif j > i:  # a batch of epoch E below the offset its entry says E started at
            self.early.setdefault(j, base)
        else:  # a batch of an earlier epoch inside entry i's range: entry i starts too early
            self.late.setdefault(i, (base, epoch))

    def findings(self) -> list[str]:
        """What the batches fed so far say against the entries (each entry and epoch once), without the path."""
        found = []
        for i in sorted(set(self.early) | set(self.late)):
            e = self.entries[i]
            head = f"line {i + 3}: epoch {e.epoch} starts at offset {e.start_offset}, but "
            if i in self.early:
                found.append(head + f"the first batch of epoch {e.epoch} in the log is at offset {self.first[e.epoch]}")
            if i in self.late:
                base, epoch = self.late[i]
                own = self.first.get(e.epoch)
                found.append(
                    head + f"the log has a batch of the earlier epoch {epoch} at offset {base}, inside epoch "
                    f"{e.epoch}'s range"
                    + (f" (the first batch of epoch {e.epoch} is at offset {own})" if own is not None else "")
                )
        for epoch, base in sorted(self.unseen.items()):
            found.append(
                f"batches of leader epoch {epoch} (from offset {base}) in the log, an epoch the checkpoint "
                "never recorded"
            )
        return found

    def problems(self) -> list[str]:
        """The entries' order and :meth:`findings`, each as ``<checkpoint path>: <what>``."""
        return [f"{self.path}: {f}" for f in (*self.order, *self.findings())]
