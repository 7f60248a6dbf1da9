"""One copy per topic-partition (``export --one-replica``, the data source's ``replicas=one``), by
``kseg diff``'s reading of the replicas.

The replicas of a partition are the directories of one name under different log directories (as
:func:`kseg.ops.diff.diff.replica_sets` groups them).  Each set is compared as ``kseg diff`` compares it
(:func:`~kseg.ops.diff.diff.compare`: every batch header of every replica, no record decoded) and one
replica kept:

1. an *undamaged* replica -- read to its end (not ``unreadable``) with every batch's CRC holding (not
   ``damaged``) -- is preferred to any other;
2. among those, when the set diverged and the replicas' leader epochs name a leader
   (``DiffResult.leader``: the one Kafka's followers would truncate to), that leader;
3. else the most complete: the highest log end offset (a ``lagging`` follower loses to the replica ahead
   of it), then the most records, then the first given;
4. when no replica is undamaged, the one with the fewest damaged batches, then read furthest.

The choice comes with its reason, one line, for the command's output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, TypeVar

from kseg.ops.diff.diff import DAMAGED, DIVERGENT, UNREADABLE, DiffResult, Replica, compare
from kseg.storage import files
from kseg.storage.partition import Partition, natural_key

if TYPE_CHECKING:
    from kseg.storage.context import Store

P = TypeVar("P")


def choose(result: DiffResult) -> tuple[int, str]:
    """The index of the replica to keep of a compared set, and why (module docstring)."""
    reps = result.replicas
    sound = [r for r in reps if r.read is None and not r.damaged_batches]
    if sound:
        leader = next((r for r in sound if r.index == result.leader), None)
        if leader is not None:
            return leader.index, (
                f"diverged at offset {result.first_divergent_offset}: the leader by leader epoch "
                f"(epoch {leader.cache[-1].epoch}), whose log the others would truncate to"
            ) + _others(leader, reps)
        best = max(sound, key=lambda r: (r.log_end, r.records, -r.index))
        why = "the most complete undamaged replica" if len(sound) < len(reps) or _ahead(best, sound) else None
        return best.index, (why or "the replicas are identical: the first") + _others(best, reps)
    best = min(reps, key=lambda r: (r.damaged_batches if r.read is None else 1 << 62, -r.log_end, r.index))
    return best.index, "no replica is undamaged: the least damaged" + _others(best, reps)


def _ahead(best: Replica, sound: list[Replica]) -> bool:
    return any(r.log_end < best.log_end or r.records < best.records for r in sound)


def _others(best: Replica, reps: list[Replica]) -> str:
    """The log end of the replica kept and how the others stand (diff's statuses)."""
    states = []
    for r in reps:
        if r is best:
            continue
        state = r.status
        if r.status == DIVERGENT:
            pass
        elif r.read is not None:
            state = f"{UNREADABLE} ({r.stopped})"
        elif r.damaged_batches:
            state = f"{DAMAGED} ({r.damaged_batches} batch{'es' * (r.damaged_batches != 1)} failing the CRC)"
        elif r.log_end < best.log_end:
            state = f"behind by {best.log_end - r.log_end} offsets"
        states.append(f"{files.display(r.path, store=r.partition.store)}: {state}")
    return f" (log end {best.log_end}; {'; '.join(states)})" if states else f" (log end {best.log_end})"


def one_replica(partitions: Sequence[P], chooser=None) -> tuple[list[P], list[str]]:
    """The ``partitions`` (:class:`Partition` or listed ones) with one replica per name kept
    (:func:`choose`), in their order, and a line for each set: which copy was kept and why.  A partition
    alone under its name is kept without reading it.  ``chooser`` maps the sets (lists of
    :class:`Partition`) to :func:`choose_set`'s answers (default: here, one set after another; on Spark,
    one task a set).  Raises :class:`~kseg.errors.InputError` for a replica that cannot be read (as
    ``kseg diff`` does)."""
    by_name: dict[str, list[int]] = {}
    for i, part in enumerate(partitions):
        by_name.setdefault(part.name, []).append(i)  # type: ignore[attr-defined]
    names = [name for name in sorted(by_name, key=natural_key) if len(by_name[name]) > 1]
    sets = [[_partition(partitions[i]) for i in by_name[name]] for name in names]
    answers = [choose_set(s) for s in sets] if chooser is None else chooser(sets)
    dropped: set[int] = set()
    lines = []
    for name, (kept, why) in zip(names, answers, strict=True):
        members = by_name[name]
        dropped.update(i for n, i in enumerate(members) if n != kept)
        chosen = partitions[members[kept]]
        lines.append(replica_line(name, chosen.path, chosen.store, len(members), why))
    return [p for i, p in enumerate(partitions) if i not in dropped], lines


def choose_set(replicas: list[Partition]) -> tuple[int, str]:
    """:func:`choose` of the replicas of one set (compared here: on an executor under ``--spark``)."""
    return choose(compare(replicas))


def replica_line(name: str, path: str, store: Store, count: int, why: str) -> str:
    return f"{name}: kept {files.display(path, store=store)} of {count} replicas: {why}"


def _partition(part) -> Partition:
    """A listed partition (:class:`~kseg.storage.listing.Listed`) as the :class:`Partition` diff compares."""
    return part if isinstance(part, Partition) else Partition(part.path, part.segments, store=part.store)
