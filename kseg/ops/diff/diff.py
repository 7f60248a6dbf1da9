"""Replica comparison (``kseg diff``): replicas of one partition aligned by offset, batch by batch.

Each replica is read shallowly across its segments in offset order
(``FileRecords.scan``: no record is decoded).  Batches are compared on what
identifies them in Kafka's replication protocol: base and last offset, the
partition leader epoch the leader stamped (``DefaultRecordBatch.partitionLeaderEpoch``),
the stored CRC, the record count, the magic and whether the CRC holds.

Alignment: batches below the highest first offset among the replicas are
skipped (retention deletes whole segments independently on each broker, and
a lower log start is not a divergence).  From there the replicas are walked
in offset order: at each step, the lowest offset where a replica still has a
batch; the replicas whose batch starts there are compared.

* every replica still reading has the same batch there: shared;
* batches differ, or a replica has no batch starting there (its batch
  boundaries differ, or it has a gap): a difference; the lowest such offset
  is the **first divergent offset** (the unclean leader election, or the
  disk incident, that started it).  Replicas that agree again later (a
  damaged batch on one disk, the rest intact) share those batches again;
* a replica that has run out of batches is a prefix of the others --
  *lagging* (a follower behind, ``ReplicaFetcherThread``), not divergent;
* a batch whose CRC does not hold (``DefaultRecordBatch.isValid``: the CRC covers the batch from its
  attributes on) is **damage** in that copy, named with its segment and byte range, never a divergence:
  the replicas whose batches there hold their CRC are compared among themselves, and the damaged copy is
  ``damaged`` (the others ``identical`` or ``lagging``).  Divergence is batches that hold their CRCs and
  differ.

A batch is *only in* a replica when no other replica holds the same batch at
the same offset; consecutive ones are merged into ranges with their record
counts.  After an unclean election these ranges are what each side has that
the other lost (``UnifiedLog.truncateTo`` on the follower that rejoins).

Leader epochs come from the batches at and before the first divergent offset
and from each replica's ``leader-epoch-checkpoint``
(:mod:`kseg.storage.leader_epochs`), which names the epoch each offset range
was led in.  Memory is constant per replica.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generator, NamedTuple

from kseg.errors import CorruptRecordError, InputError, KsegError
from kseg.format.v2 import last_offset
from kseg.storage import files, leader_epochs, location
from kseg.storage.checkpoints import topic_partition
from kseg.storage.outcome import TRUNCATED, ReadOutcome, exit_code
from kseg.storage.partition import Partition, natural_key
from kseg.storage.records import FileRecords
from kseg.storage.stores.discover import store_of
from kseg.storage.stores.find import discover
from kseg.storage.tiered_names import is_tiered_dir

IDENTICAL, LAGGING, DIVERGENT, DAMAGED = "identical", "lagging", "divergent", "damaged"
MAX_DAMAGED = 10  # damaged batches listed per replica; the rest counted
UNREADABLE = "unreadable"  # a replica whose reading stopped at a corrupt or partial batch: never "lagging"
INCOMPLETE = "incomplete"  # a set with such a replica and no divergence in what was read
AGREES_WHERE_READ = "agrees-where-read"  # a readable replica of an incomplete set: never "identical"
COMPARED = ("baseOffset", "lastOffset", "partitionLeaderEpoch", "crc", "count", "magic", "isValid")


class BatchKey(NamedTuple):
    """What one batch is compared on (``COMPARED``), and where it is."""

    base_offset: int
    last_offset: int
    leader_epoch: int
    crc: int
    record_count: int | None  # recordsCount (a v2 batch's; None for a v0/v1 entry)
    magic: int
    valid: bool
    segment: str
    position: int
    size: int = 0  # the batch's bytes in its segment (from ``position``)

    @property
    def ident(self) -> tuple:
        return self[:7]

    @property
    def records(self) -> int:
        """recordsCount of a v2 batch; a v0/v1 entry counts as one."""
        return self.record_count if self.record_count is not None else 1


class Range:
    """Consecutive batches only one replica (or one group) has."""

    __slots__ = ("first_offset", "last_offset", "records", "batches")

    def __init__(self, key: BatchKey) -> None:
        self.first_offset, self.last_offset = key.base_offset, key.last_offset
        self.records, self.batches = key.records, 1


@dataclass
class Replica:
    """One replica's side of the comparison."""

    index: int
    partition: Partition
    log_start: int = 0
    log_end: int = 0
    batches: int = 0
    records: int = 0
    epochs: list | None = None  # leader-epoch-checkpoint entries, None when absent
    epochs_error: str | None = None
    status: str = IDENTICAL
    lag: int = 0
    only_here: list[Range] = field(default_factory=list)
    before_divergence: BatchKey | None = None
    at_divergence: BatchKey | None = None
    stopped: str | None = None  # why reading stopped before the end of the log
    read: ReadOutcome | None = None  # the segment where reading stopped, when it did
    skipped_below: int = 0  # batches below the common start
    batch_epochs: list = field(default_factory=list)  # EpochEntry from the batches (LeaderEpochFileCache.assign)
    truncate_to: int | None = None  # where this replica would truncate following the presumed leader
    lost_records: int | None = None  # records at or after truncate_to
    damaged: list[BatchKey] = field(default_factory=list)  # batches whose CRC does not hold (the first ones)
    damaged_batches: int = 0  # every one
    _last: tuple | None = None  # the last batch walked, a _batches tuple
    _contiguous: bool = False

    @property
    def path(self) -> str:
        return self.partition.path

    @property
    def cache(self) -> list:
        """The leader-epoch cache: the checkpoint when it has entries, else the batches' epochs."""
        return self.epochs if self.epochs else self.batch_epochs

    def add_damaged(self, key: tuple) -> None:
        """A batch of this copy whose CRC does not hold: listed (the first :data:`MAX_DAMAGED`), counted."""
        self.damaged_batches += 1
        if len(self.damaged) < MAX_DAMAGED:
            self.damaged.append(BatchKey._make(key))

    def add_only_here(self, key: BatchKey) -> None:
        if self.only_here and self._contiguous and self.only_here[-1].last_offset < key.base_offset:
            r = self.only_here[-1]
            r.last_offset, r.records, r.batches = key.last_offset, r.records + key.records, r.batches + 1
        else:
            self.only_here.append(Range(key))
        self._contiguous = True


@dataclass
class DiffResult:
    """The comparison of one replica set."""

    name: str
    replicas: list[Replica]
    status: str = IDENTICAL
    first_divergent_offset: int | None = None
    leader: int | None = None  # the replica presumed leader after the divergence (highest leader epoch, when
    # the replicas' latest epochs differ)
    differences: list[str] = field(default_factory=list)  # COMPARED fields that differ there
    common_start: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        damaged = any(r.damaged_batches for r in self.replicas)
        return exit_code((r.read for r in self.replicas), problems=self.status == DIVERGENT or damaged)


def _batches(rep: Replica) -> Generator[tuple, None, None]:
    """Every batch of the replica's segments in offset order, as plain tuples in
    :class:`BatchKey` field order (made a BatchKey only where kept); a corrupt length or a
    partial batch ends the stream (``rep.stopped`` and ``rep.read`` say where: the replica is
    read no further).  I/O errors propagate as :class:`InputError`."""
    for seg in rep.partition.segments:
        if seg.log is None:
            continue
        name = seg.name
        read = ReadOutcome(files.display(seg.log, store=seg.store))
        with FileRecords(seg.log, store=seg.store) as records:
            read.present = records.end
            try:
                for items in records.scan():
                    for position, size, h, item in items:
                        if h is not None:
                            yield (h[0], last_offset(h[0], h[6]), h[2], h[4], h[12], h[3], item, name, position, size)
                        elif item.magic >= 2:
                            b = item.h
                            yield (
                                b[0],
                                last_offset(b[0], b[6]),
                                b[2],
                                b[4],
                                b[12],
                                b[3],
                                item.is_valid(),
                                name,
                                position,
                                size,
                            )
                        else:
                            yield (
                                item.base_offset,
                                item.last_offset,
                                -1,
                                item.checksum,
                                None,
                                item.magic,
                                item.is_valid(),
                                name,
                                position,
                                size,
                            )
                        read.read = position + size
            except CorruptRecordError as exc:
                rep.read = read.stopped_at(exc.at(read.path))
            else:
                if read.read < read.present:
                    read.stop, read.position = TRUNCATED, read.read
                    read.reason = f"a partial batch: {read.present - read.read} bytes after the last whole batch"
                    rep.read = read
        if rep.read is not None:
            rep.stopped = rep.read.describe()
            return


def _first_offset(rep: Replica) -> int | None:
    """The first batch's base offset of a replica (None when it has no batch)."""
    batches = _batches(rep)
    try:
        key = next(batches, None)
    finally:
        batches.close()
    stopped, rep.stopped, rep.read = rep.read, None, None
    if key is None and stopped is not None:
        return rep.log_start  # nothing readable: no start of its own to align the others on
    return None if key is None else key[0]


def compare(partitions: list[Partition]) -> DiffResult:
    """Compare the replicas (module docstring).  Raises :class:`InputError` for a replica with
    no ``.log`` or an unreadable file, :class:`CorruptIndexError` for a malformed checkpoint."""
    reps = [Replica(i, p) for i, p in enumerate(partitions)]
    names = sorted({p.name for p in partitions}, key=natural_key)
    result = DiffResult(partitions[0].name, reps)
    if len(names) > 1:
        result.notes.append(f"the replicas' directory names differ ({', '.join(names)}): compared as one partition")
    result.common_start = max(_start(rep) for rep in reps)
    _walk(result, reps)
    for rep in reps:  # an empty last segment still ends the log at its base offset (names are offsets)
        if rep.read is None:
            rep.log_end = max(rep.log_end, [s for s in rep.partition.segments if s.log is not None][-1].base_offset)
    _statuses(result, reps)
    return result


def _start(rep: Replica) -> int:
    """Where the replica's log starts (its first batch's base offset; the last segment's base offset when
    it has no batch), its leader-epoch checkpoint read."""
    logs = [s for s in rep.partition.segments if s.log is not None]
    if not logs:
        raise InputError("no .log segment in this partition directory", path=rep.path)
    rep.log_start = rep.log_end = logs[0].base_offset
    first = _first_offset(rep)
    try:
        rep.epochs = leader_epochs.read_partition(
            rep.path, [s.log for s in logs if s.log is not None], store=rep.partition.store
        )
    except KsegError as exc:
        if isinstance(exc, InputError):
            raise
        rep.epochs_error = exc.describe()
    return first if first is not None else logs[-1].base_offset


def _statuses(result: DiffResult, reps: list[Replica]) -> None:
    """Each replica's status and lag, and the set's (module docstring)."""
    ends = max(r.log_end for r in reps)
    for rep in reps:
        rep.lag = ends - rep.log_end
        if rep.read is not None:  # the end of what was read, not of the log: not a replica behind
            rep.status, rep.lag = UNREADABLE, 0
        elif rep.status != DIVERGENT:
            rep.status = DAMAGED if rep.damaged_batches else LAGGING if rep.lag > 0 else IDENTICAL
        if rep.skipped_below:
            result.notes.append(
                f"replica {rep.index}: {rep.skipped_below} batches below offset {result.common_start}, "
                "where another replica's log starts, not compared (retention)"
            )
    if result.first_divergent_offset is not None:
        result.status = DIVERGENT
        _truncation(result, reps)
    elif any(r.read is not None for r in reps):
        result.status = INCOMPLETE
        for rep in reps:
            if rep.status in (IDENTICAL, LAGGING):
                rep.status = AGREES_WHERE_READ
    elif any(r.status == DAMAGED for r in reps):
        result.status = DAMAGED
    elif any(r.status == LAGGING for r in reps):
        result.status = LAGGING


def _walk(result: DiffResult, reps: list[Replica]) -> None:
    """The walk in offset order (module docstring): at each step the lowest offset where a
    live replica has a batch; the replicas whose batch starts there are compared."""
    its = [_batches(r) for r in reps]
    cur: list[tuple | None] = []
    for rep, it in zip(reps, its, strict=True):
        key = next(it, None)
        while key is not None and key[0] < result.common_start:
            rep.skipped_below += 1
            _count(rep, key)
            key = next(it, None)
        cur.append(key)
    while True:
        # fast path: every replica has the same batch next (the common case, shared history)
        first = cur[0]
        if first is not None and first[6]:  # a batch whose CRC does not hold takes the slow path: damage
            ident = first[:7]
            same = [c for c in cur if c is not None and c[:7] == ident]
            if len(same) == len(cur):
                for r, key in enumerate(same):
                    rep = reps[r]
                    rep._contiguous = False
                    _count(rep, key)
                    rep._last = key
                    cur[r] = next(its[r], None)
                continue
        live = {r: key for r, key in enumerate(cur) if key is not None}  # replica -> its next batch
        if not live:
            return
        offset = min(key[0] for key in live.values())
        front = [r for r, key in live.items() if key[0] == offset]
        buckets: dict[tuple, list[int]] = {}
        damaged = [r for r in front if not live[r][6]]  # its CRC does not hold: damage in that copy
        for r in front:
            if live[r][6]:
                buckets.setdefault(live[r][:7], []).append(r)
        diverged = len(buckets) > 1 or len(front) < len(live)
        if diverged:
            _diverged(result, reps, list(live), cur, offset)
        # a batch a damaged copy holds too is in both; damaged copies of one batch, none whole, are in each
        alone = diverged or not damaged or (not buckets and len(damaged) == 1)
        for members in [*buckets.values(), *([r] for r in damaged)]:
            for r in members:
                rep, key = reps[r], live[r]
                if not key[6]:
                    rep.add_damaged(key)
                if len(members) == 1 and len(reps) > 1 and alone:
                    rep.add_only_here(BatchKey._make(key))
                else:
                    rep._contiguous = False
                _count(rep, key)
                rep._last = key
                cur[r] = next(its[r], None)


def _count(rep: Replica, key: tuple) -> None:
    """Count one batch (a :func:`_batches` tuple) and follow its leader epoch (``LeaderEpochFileCache.assign``)."""
    base, last, epoch, _, count = key[:5]
    if epoch >= 0 and (not rep.batch_epochs or epoch > rep.batch_epochs[-1].epoch):
        rep.batch_epochs.append(leader_epochs.EpochEntry(epoch, base))
    rep.batches += 1
    rep.records += 1 if count is None else count
    if last >= rep.log_end:
        rep.log_end = last + 1


def _diverged(result: DiffResult, reps: list[Replica], live: list[int], cur: list, offset: int) -> None:
    """The live replicas differ at ``offset``: a batch that is not the same everywhere, or a
    replica with no batch starting there (other batch boundaries, or a gap)."""
    for r in live:
        reps[r].status = DIVERGENT
    if result.first_divergent_offset is not None and result.first_divergent_offset <= offset:
        return
    result.first_divergent_offset = offset
    for r in live:
        last = reps[r]._last
        reps[r].at_divergence = BatchKey._make(cur[r])
        reps[r].before_divergence = None if last is None else BatchKey._make(last)
    keys = [cur[r][:7] for r in live]
    result.differences = [name for i, name in enumerate(COMPARED) if len({k[i] for k in keys}) > 1]


def end_offset_for(cache: list, requested: int, log_end: int) -> int | None:
    """``LeaderEpochFileCache.endOffsetFor`` on the leader: the end offset of ``requested`` epoch
    (the log end for the latest epoch, else the start of the next higher epoch; None if undefined)."""
    if requested < 0 or not cache:
        return None
    if cache[-1].epoch == requested:
        return log_end
    higher = next((e for e in cache if e.epoch > requested), None)
    return None if higher is None else higher.start_offset


def _truncation(result: DiffResult, reps: list[Replica]) -> None:
    """What Kafka does when the others follow the replica with the highest leader epoch: each
    follower asks for the end offset of its latest epoch (``OffsetsForLeaderEpoch``,
    ``AbstractFetcherThread.truncateToEpochEndOffsets``) and truncates to min(that, its log end)
    -- the records at and after that offset are what the unclean election lost on that replica."""
    ranked = [r for r in reps if r.cache]
    if not ranked:
        return
    leader = max(ranked, key=lambda r: (r.cache[-1].epoch, r.log_end))
    if all(r.cache[-1].epoch == leader.cache[-1].epoch for r in ranked):
        return  # no replica is behind in leader epochs: no election between them
    result.leader = leader.index
    for rep in reps:
        if rep is leader or not rep.cache or rep.cache[-1].epoch == leader.cache[-1].epoch:
            continue  # same latest epoch: no election between them, nothing to truncate
        end = end_offset_for(leader.cache, rep.cache[-1].epoch, leader.log_end)
        if end is None:
            continue
        rep.truncate_to = min(end, rep.log_end)
        lost = 0
        for key in _batches(rep):
            if key[0] >= rep.truncate_to:
                lost += 1 if key[4] is None else key[4]
        rep.lost_records = lost


def topic_partition_of(part: Partition) -> tuple[str, int] | None:
    """The topic-partition a replica's directory names: a broker's ``<topic>-<partition>``
    (``UnifiedLog.parseTopicPartitionName``), ``LocalTieredStorage``'s ``<topic>-<partition>-<topicId>``,
    Aiven's ``<topic>-<topicId>/<partition>``; None for a name none of them gives (a backup's own name)."""
    name = part.name
    if is_tiered_dir(name):  # <topic>-<partition>-<topicId>: the Uuid is 22 characters after a '-'
        return topic_partition(name[:-23])
    parent = location.basename(part.log_dir.rstrip("/"))
    if name.isascii() and name.isdigit() and is_tiered_dir(parent):
        return parent[:-23], int(name)
    return topic_partition(name)


def different_partitions(partitions: list[Partition]) -> str | None:
    """Why these replicas are not one partition's (their directories name different topic-partitions), or
    None: one line, the first of the output."""
    named: dict[tuple[str, int], str] = {}
    for part in partitions:
        tp = topic_partition_of(part)
        if tp is not None:
            named.setdefault(tp, files.display(part.path, store=part.store))
    if len(named) < 2:
        return None
    which = ", ".join(f"{topic}-{number} ({path})" for (topic, number), path in named.items())
    return f"the replicas are of different topic-partitions: {which}; give --any-names to compare them anyway"


def replica_sets(roots: list[str], notes: list[str]) -> list[list[Partition]]:
    """Partitions found under more than one log root, grouped by directory name, in name order."""
    by_name: dict[str, list[Partition]] = {}
    for root in roots:
        if not files.isdir(root, store=store_of(root)):
            raise InputError("not a directory (--roots takes log directories)", path=root)
        for part in discover([root], notes):
            by_name.setdefault(part.name, []).append(part)
    sets = []
    for name in sorted(by_name, key=natural_key):
        parts = by_name[name]
        if len(parts) > 1:
            sets.append(parts)
        else:
            notes.append(
                f"{files.display(parts[0].path, store=parts[0].store)}: under one root only: nothing to compare"
            )
    return sets
