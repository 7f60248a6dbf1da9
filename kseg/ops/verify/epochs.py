"""``verify-index``'s leader-epoch check: the partition's ``leader-epoch-checkpoint`` against the batches'
partition leader epochs (the rule is :mod:`kseg.storage.leader_epochs`'s, shared with ``logdir``).

The checkpoint is read once per partition directory in each process (a worker verifies many segments of
one partition); each segment's batches are judged on their own (:class:`EpochCheck` needs no other
segment), so the findings land on the segment whose batches they are about.  What concerns the file
itself -- absent (a note: a copied partition, or a broker before 0.11, has none), unreadable (a note: not
checked, and why), malformed or its entries not increasing (problems) -- lands on the partition's first
segment.
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple, cast

from kseg.errors import InputError, KsegError
from kseg.ops.verify.result import SegmentResult
from kseg.storage import checkpoints as cp
from kseg.storage import files, leader_epochs, location
from kseg.storage.leader_epochs import EpochCheck, EpochEntry

if TYPE_CHECKING:
    from kseg.storage.context import Store

KIND = "leader-epoch"  # a batch's epoch against the checkpoint's entries
ORDER_KIND = "leader-epoch-order"  # entries not increasing
MALFORMED_KIND = "leader-epoch-checkpoint"  # the file does not parse


class Checkpoint(NamedTuple):
    """A partition directory's ``leader-epoch-checkpoint``: its entries, or why there are none."""

    path: str  # display path of the file
    entries: list[EpochEntry] | None
    note: str | None = None  # absent or unreadable: not checked, and why
    malformed: KsegError | None = None


def checkpoint(directory: str, listed: bool | None = None, *, store: Store) -> Checkpoint:
    """The checkpoint of the partition directory ``directory`` (read once per process and state of the file;
    ``listed``: whether the directory's listing held it, :attr:`~kseg.storage.partition.Partition.leader_epochs`,
    so an absent one costs no request; ``store``: the partition's)."""
    version = cp.file_version(directory, leader_epochs.FILE_NAME, store)
    return _checkpoint(directory, version, listed, cast("Hashable", store))  # (a store hashes as itself)


@lru_cache(maxsize=16)
def _checkpoint(directory: str, _version: object, listed: bool | None, key: Hashable) -> Checkpoint:
    store = cast("Store", key)
    path = files.display(location.join(directory, leader_epochs.FILE_NAME), store)
    try:
        entries = leader_epochs.read(directory, listed, store=store)
    except InputError as exc:
        return Checkpoint(path, None, f"{path}: could not be read ({exc.describe()}): leader epochs not checked")
    except KsegError as exc:
        return Checkpoint(path, None, malformed=exc)
    if entries is None:
        return Checkpoint(path, None, f"{path}: absent: the batches' leader epochs not checked")
    return Checkpoint(path, entries)


def epoch_check(directory: str, listed: bool | None = None, *, store: Store) -> EpochCheck | None:
    """A fresh check for one segment of the partition in ``directory``, or None without entries to check."""
    cp = checkpoint(directory, listed, store=store)
    return None if cp.entries is None else EpochCheck(cp.entries, cp.path)


def report(
    res: SegmentResult,
    directory: str,
    check: EpochCheck | None,
    first: bool,
    listed: bool | None = None,
    *,
    store: Store,
) -> None:
    """Into ``res``: the findings of ``check`` on this segment's batches and, on the partition's ``first``
    segment, what concerns the checkpoint file itself."""
    cp = checkpoint(directory, listed, store=store)
    if first:
        if cp.note is not None:
            res.notes.append(cp.note)
        if cp.malformed is not None:
            res.problem(MALFORMED_KIND, cp.path, cp.malformed.message, position=cp.malformed.position)
    if check is None:
        return
    if first:
        for finding in check.order:
            res.problem(ORDER_KIND, cp.path, finding)
    for finding in check.findings():
        res.problem(KIND, cp.path, finding)
