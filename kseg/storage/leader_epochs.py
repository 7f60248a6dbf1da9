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
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kseg.errors import CorruptIndexError
from kseg.storage import files, location

FILE_NAME = "leader-epoch-checkpoint"
VERSION = 0
_WS = re.compile(r"\s+")


class EpochEntry(NamedTuple):
    """``EpochEntry``: a leader epoch and the first offset written in it."""

    epoch: int
    start_offset: int


def _int(text: str, path: str, line_no: int, bits: int) -> int:
    try:
        value = int(text.strip()) if re.fullmatch(r"\s*[+-]?[0-9]+\s*", text) else None
    except ValueError:
        value = None
    if value is None or not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise CorruptIndexError(f"malformed line {line_no} in leader-epoch-checkpoint: {text!r}", path=path)
    return value


def parse(text: str, path: str = FILE_NAME) -> list[EpochEntry]:
    """The entries of a checkpoint file's text (``CheckpointFile.CheckpointReadBuffer.read``)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return []
    version = _int(lines[0], path, 1, 32)
    if version != VERSION:
        raise CorruptIndexError(
            f"unrecognised version {version} in leader-epoch-checkpoint, expected {VERSION}", path=path
        )
    if len(lines) < 2:
        return []
    expected = _int(lines[1], path, 2, 32)
    entries = []
    for n, line in enumerate(lines[2:], start=3):
        parts = _WS.split(line)
        if len(parts) != 2:
            raise CorruptIndexError(f"malformed line {n} in leader-epoch-checkpoint: {line!r}", path=path)
        entries.append(EpochEntry(_int(parts[0], path, n, 32), _int(parts[1], path, n, 64)))
    if len(entries) != expected:
        raise CorruptIndexError(
            f"expected {expected} entries in leader-epoch-checkpoint, found {len(entries)}", path=path
        )
    return entries


def read(directory: str) -> list[EpochEntry] | None:
    """The checkpoint of a partition directory, or None when it has none.  A malformed file
    raises :class:`CorruptIndexError`; an unreadable one :class:`kseg.errors.InputError`."""
    path = location.join(directory, FILE_NAME)
    return _read_file(path) if files.exists(path) else None


def _read_file(path: str) -> list[EpochEntry]:
    data = files.read_small_file(path, limit=1 << 24)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptIndexError("leader-epoch-checkpoint is not UTF-8 text", path=path, position=exc.start) from None
    return parse(text, files.display(path))


#: A tiered segment's own checkpoint, by layout: Aiven's ``.leader-epoch-checkpoint`` (in ``.indexes``, or
#: its own object before October 2023), ``LocalTieredStorage``'s ``.leader_epoch_checkpoint``.
TIERED_SUFFIXES = (".leader-epoch-checkpoint", files.LEADER_EPOCH_CHECKPOINT)


def read_partition(directory: str, logs: list[str]) -> list[EpochEntry] | None:
    """The partition's checkpoint (:func:`read`); without one, in a tiered partition (``logs`` its
    segments' ``.log`` paths, by base offset), the checkpoint the last segment carries: the epochs up to that
    segment's end, which ``RemoteLogManager.copyLogSegment`` uploads with it (``getLeaderEpochEntries(log, -1,
    nextSegmentBaseOffset)``); None when neither exists."""
    entries = read(directory)
    if entries is not None or not logs or files.tiered_segment_id(logs[-1]) is None:
        return entries
    stem = logs[-1][: -len(files.LOG)]
    for suffix in TIERED_SUFFIXES:
        if files.exists(stem + suffix):
            return _read_file(stem + suffix)
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
