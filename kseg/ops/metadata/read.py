"""Where the replay starts and stops: the ``__cluster_metadata-0`` directory, its snapshots and segments.

A broker's ``MetadataLoader`` loads the newest snapshot (``<end offset>-<epoch>.checkpoint``, a log of
record batches Kafka's ``RecordsSnapshotWriter`` wrote: a ``SnapshotHeader`` control batch, the image's
records, a ``SnapshotFooter`` control batch; ``.checkpoint.part`` and ``.checkpoint.deleted`` files are
not snapshots, ``Snapshots.parse``) and then the log's batches from the snapshot's end offset on.
``--from-start`` replays the log from offset 0 instead, ``--snapshot-only`` stops after the snapshot, and
``--at-offset``/``--at-time`` start from the newest snapshot at or before the point and stop there.

Every file is read through its store, read-only and without the ``.lock``.  A batch that fails its CRC,
a partial batch, a batch that is not v2 or a record that is not a metadata record stops the replay there:
the image is then as of the last batch applied and the outcome says where reading stopped
(:class:`~kseg.storage.outcome.ReadOutcome`); it is never the current image.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from kseg.errors import CorruptRecordError, InputError, KsegError
from kseg.format import control
from kseg.format.java_numbers import parse_int, parse_long
from kseg.ops.metadata.history import History
from kseg.ops.metadata.image import Image, Provenance
from kseg.ops.metadata.loader import Loader
from kseg.storage import files
from kseg.storage.batch import FileBatch, V2Batch
from kseg.storage.outcome import CORRUPT, ReadOutcome, read_batches
from kseg.storage.partition import Partition
from kseg.storage.records import FileRecords
from kseg.storage.stores.find import discover

METADATA_PARTITION = "__cluster_metadata-0"
SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")  # Snapshots.filenameFromSnapshotId + SUFFIX

#: the record-reading rule (``kseg.decoders.metadata.read_record``: decoders are a layer above): a value ->
#: (record name, its values); raises KsegError for a value that is not a metadata record
ReadRecord = Callable[[bytes | None], tuple[str, dict]]


@dataclass(frozen=True)
class Snapshot:
    path: str
    offset: int  # the snapshot id's end offset: the image holds the records before it
    epoch: int

    @property
    def last_offset(self) -> int:
        return self.offset - 1


@dataclass(frozen=True)
class Target:
    """What was asked: where to start and where to stop."""

    from_start: bool = False
    snapshot_only: bool = False
    at_offset: int | None = None
    at_time: int | None = None


@dataclass(frozen=True)
class Halt:
    """A record that is not a metadata record: the replay applies nothing from it on (a broker's loader
    cannot go past it either); the files are still read to the point asked, for their damage."""

    offset: int
    path: str
    position: int
    reason: str

    def error(self) -> CorruptRecordError:
        return CorruptRecordError(self.reason, path=self.path, position=self.position)


@dataclass
class Replay:
    """The image, and what was read to build it."""

    directory: str
    loader: Loader
    snapshots: list[Snapshot] = field(default_factory=list)
    snapshot: Snapshot | None = None  # the one the replay started from
    reads: list[ReadOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    last_read: int | None = None  # the last offset of the last batch read (applied or not)
    log_records: int = 0  # metadata records replayed from the log
    halt: Halt | None = None

    @property
    def image(self) -> Image:
        return self.loader.image

    @property
    def partial(self) -> bool:
        """The image stops short of the point asked (damage, or a record that is not a metadata record)."""
        return self.halt is not None or self.damaged is not None

    @property
    def damaged(self) -> ReadOutcome | None:
        """The read that stopped the replay before the end asked for."""
        return next((r for r in self.reads if not r.complete), None)


def find(paths: list[str], notes: list[str]) -> Partition:
    """The one ``__cluster_metadata-0`` directory under ``paths`` (the directory itself, a log directory or
    ``metadata.log.dir`` holding it); a single partition directory of another name is read as one, noted."""
    found = discover(paths, notes)
    named = [p for p in found if p.name == METADATA_PARTITION]
    if len(named) == 1:
        return named[0]
    if not named and len(found) == 1:
        notes.append(f"{found[0].path}: not named {METADATA_PARTITION}, read as one as asked")
        return found[0]
    where = ", ".join(paths)
    if named:
        raise InputError(
            f"{len(named)} {METADATA_PARTITION} directories under {where}", hint="give one node's directory"
        )
    raise InputError(
        f"no {METADATA_PARTITION} directory under {where}",
        hint=f"give a {METADATA_PARTITION} directory or the log directory (metadata.log.dir) holding it",
    )


def snapshots(part: Partition, notes: list[str]) -> list[Snapshot]:
    """The snapshots of the directory, oldest first (``Snapshots.parse``)."""
    store = part.store
    found = []
    for entry in store.list(part.path):
        name = entry.path.rstrip("/").rsplit("/", 1)[-1]
        if name.endswith(".checkpoint.part"):
            notes.append(f"{entry.path}: a snapshot being written (.checkpoint.part), not read")
        m = SNAPSHOT.match(name)
        if m is None:
            continue
        offset, epoch = parse_long(m.group(1)), parse_int(m.group(2))
        if offset is not None and epoch is not None:
            found.append(Snapshot(entry.path, offset, epoch))
    return sorted(found, key=lambda s: (s.offset, s.epoch))


def replay(
    paths: list[str], read_record: ReadRecord, target: Target, limit: int, history: History | None = None
) -> Replay:
    """The image asked for, from the directory under ``paths``; raises :class:`InputError` when there is
    none or the image cannot start (the log's first records deleted and no snapshot before the point)."""
    notes: list[str] = []
    part = find(paths, notes)
    if part.error is not None:
        raise InputError(part.error)
    out = Replay(part.path, Loader(history=history), notes=notes)
    out.snapshots = snapshots(part, notes)
    out.snapshot = None if target.from_start else _starting_snapshot(part, out.snapshots, target, out)
    if out.snapshot is not None:
        if not _load_snapshot(part, out.snapshot, read_record, limit, out):
            return out
        start = out.snapshot.offset
    else:
        if target.snapshot_only:
            raise InputError(f"no snapshot in {part.path}" + (" at or before the point asked" if out.snapshots else ""))
        first = part.segments[0].base_offset if part.segments else 0
        if first > 0:
            raise InputError(
                f"the log of {part.path} starts at offset {first}: the records before it survive only in snapshots",
                hint="leave out --from-start" if target.from_start else "ask for a later point",
            )
        start = 0
    if not target.snapshot_only:
        _replay_log(part, start, read_record, target, limit, out)
    out.loader.finish()
    _note_target(target, out)
    return out


def _starting_snapshot(part: Partition, found: list[Snapshot], target: Target, out: Replay) -> Snapshot | None:
    """The newest snapshot at or before the point asked."""
    for snap in reversed(found):
        if target.at_offset is not None and snap.last_offset > target.at_offset:
            continue
        if target.at_time is not None:
            header = _header_time(part, snap)
            if header is None or header > target.at_time:
                continue
        return snap
    return None


def _header_time(part: Partition, snap: Snapshot) -> int | None:
    """The snapshot header's ``lastContainedLogTimestamp`` (None: no readable header)."""
    try:
        with FileRecords(snap.path, store=part.store) as records:
            batch = next(iter(records.batches()), None)
            if not (isinstance(batch, V2Batch) and batch.is_control):
                return None
            rec = next(iter(batch.records(64 * 1024)), None)
            if rec is None or control.parse_type_id(rec.key) != control.SNAPSHOT_HEADER:
                return None
            return control.snapshot_header_time(rec.value)
    except KsegError:
        return None


def _load_snapshot(part: Partition, snap: Snapshot, read_record: ReadRecord, limit: int, out: Replay) -> bool:
    """``MetadataLoader.loadSnapshot``: whether the snapshot was read whole (header to footer)."""
    read = ReadOutcome(files.display(snap.path, store=part.store))
    out.reads.append(read)
    header_time: int | None = None
    footer = False
    try:
        with FileRecords(snap.path, store=part.store) as records:
            header_time, footer = _snapshot_batches(records, read, read_record, limit, out)
    except KsegError as exc:
        read.stopped_at(exc.at(read.path))
    if read.complete and not footer:
        read.stop, read.position = CORRUPT, read.read
        read.reason = "no snapshot footer: the snapshot ends before Kafka's writer finished it"
    if not read.complete or out.halt is not None:
        return False
    out.loader.finish_snapshot(Provenance(snap.last_offset, snap.epoch, -1 if header_time is None else header_time))
    out.last_read = snap.last_offset
    return True


def _snapshot_batches(
    records: FileRecords, read: ReadOutcome, read_record: ReadRecord, limit: int, out: Replay
) -> tuple[int | None, bool]:
    """The snapshot's batches into the loader: its header's time, and whether its footer was read."""
    header_time: int | None = None
    footer = False
    for batch in _valid(read_batches(records, read), read):
        if footer:
            _stop(read, batch, "a batch after the snapshot footer")
            break
        if batch.is_control:
            for rec in batch.records(limit):
                kind = control.parse_type_id(rec.key)
                if kind == control.SNAPSHOT_HEADER and header_time is None:
                    header_time = control.snapshot_header_time(rec.value)
                elif kind == control.SNAPSHOT_FOOTER:
                    footer = True
                elif kind == control.KRAFT_VERSION:
                    out.loader.control(control.kraft_version(rec.value))
            continue
        if header_time is None:
            _stop(read, batch, "no snapshot header before the first metadata record")
            break
        for offset, name, values in _records(batch, read_record, limit, read, 0, None, out):
            out.loader.snapshot_record(offset, name, values)
    return header_time, footer


def _replay_log(part: Partition, start: int, read_record: ReadRecord, target: Target, limit: int, out: Replay) -> None:
    """The log's batches from ``start`` to the point asked, one at a time through the loader."""
    segments = [s for s in part.segments if s.log is not None]
    for i, seg in enumerate(segments):
        if i + 1 < len(segments) and segments[i + 1].base_offset <= start:
            continue  # wholly before the start
        assert seg.log is not None
        read = ReadOutcome(files.display(seg.log, store=seg.store), present=seg.log_size())
        out.reads.append(read)
        try:
            with FileRecords(seg.log, store=seg.store) as records:
                done = _replay_segment(records, read, start, read_record, target, limit, out)
        except KsegError as exc:
            read.stopped_at(exc.at(read.path))
            return
        if done or not read.complete:
            return


def _replay_segment(
    records: FileRecords,
    read: ReadOutcome,
    start: int,
    read_record: ReadRecord,
    target: Target,
    limit: int,
    out: Replay,
) -> bool:
    """One segment's batches; True when the point asked was reached."""
    loader = out.loader
    for batch in _valid(read_batches(records, read), read):
        if batch.last_offset < start:
            continue
        if target.at_time is not None and batch.max_timestamp > target.at_time:
            return True
        stop = target.at_offset
        if stop is not None and batch.base_offset > stop:
            return True
        last = batch.last_offset if stop is None else min(stop, batch.last_offset)
        expected = start if out.last_read is None else out.last_read + 1
        if out.halt is None and batch.base_offset > expected:  # the metadata log is never compacted
            gap = f"offsets {expected} to {batch.base_offset - 1} are in no batch: the log before offset "
            out.halt = Halt(expected, read.path, batch.position, gap + f"{batch.base_offset} is incomplete")
        applied: list[tuple[int, str, dict]] = []
        if batch.is_control:
            for rec in batch.records(limit):
                if control.parse_type_id(rec.key) == control.KRAFT_VERSION:
                    loader.control(control.kraft_version(rec.value))
        elif out.halt is None:
            applied = _records(batch, read_record, limit, read, start, stop, out)
        if out.halt is not None:  # nothing applied from the record that is not one on: the rest read only
            continue
        epoch = batch.header.partition_leader_epoch if isinstance(batch, V2Batch) else -1
        loader.load_batch(batch.base_offset, last, epoch, batch.max_timestamp, applied)
        loader.flush()
        out.last_read = last
        out.log_records += len(applied)
        if stop is not None and last >= stop:
            return True
    return False


def _valid(batches: Iterator[FileBatch], read: ReadOutcome) -> Iterator[V2Batch]:
    """The batches while they are v2 and pass their CRC; the first that does not stops the read there."""
    for batch in batches:
        if not isinstance(batch, V2Batch):
            _stop(read, batch, f"a magic {batch.magic} batch: the metadata log holds only v2 batches")
            return
        if not batch.is_valid():
            _stop(read, batch, batch.crc_mismatch())
            return
        yield batch


def _records(
    batch: V2Batch, read_record: ReadRecord, limit: int, read: ReadOutcome, start: int, stop: int | None, out: Replay
) -> list[tuple[int, str, dict]]:
    """The records of ``batch`` from ``start`` to ``stop``, read: ``(offset, name, values)``; at one that is
    not a metadata record, none (the replay halts there: ``out.halt``)."""
    taken = []
    for rec in batch.records(limit):
        if rec.offset < start or (stop is not None and rec.offset > stop):
            continue
        try:
            name, values = read_record(None if rec.value is None else bytes(rec.value))
        except KsegError as exc:
            reason = f"the record at offset {rec.offset} is not a metadata record: {exc.message}"
            out.halt = Halt(rec.offset, read.path, batch.position, reason)
            return []
        taken.append((rec.offset, name, values))
    return taken


def _stop(read: ReadOutcome, batch: FileBatch, reason: str) -> bool:
    read.stopped_at(CorruptRecordError(reason, position=batch.position))
    read.read = batch.position
    return False


def _note_target(target: Target, out: Replay) -> None:
    loader = out.loader
    if loader.begun_at is not None:
        out.notes.append(
            f"a metadata transaction begun at offset {loader.begun_at} has not ended by offset "
            f"{out.last_read}: its records are not in the image (Kafka publishes none of them until it ends)"
        )
    if not out.partial and target.at_offset is not None and out.last_read is not None:
        if out.last_read < target.at_offset:
            out.notes.append(f"offset {target.at_offset} is past the last offset read, {out.last_read}")
