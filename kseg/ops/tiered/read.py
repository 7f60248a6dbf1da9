"""The ``__remote_log_metadata`` partitions read and folded (:mod:`kseg.ops.tiered.state`).

The paths are a log root or ``__remote_log_metadata-<n>`` partition directories, local or URIs
(``kseg.storage.stores.find.discover``); partitions of other topics are skipped with a note.  Every batch of
every segment is read (``FileRecords``; control batches hold no metadata) and each record's value handed to
the record-reading rule the caller gives (``kseg.decoders.remote.read_record``: decoders are a layer above
this one), records in offset order within a metadata partition -- which holds every record of the
topic-partitions placed there (:mod:`kseg.ops.tiered.partitioner`), so the fold of each is Kafka's.
A batch whose CRC does not hold stops its segment's read there, as it stops Kafka's consumer of the topic
(``check.crcs``): its records are not folded.  A segment not read to its end is kept (``ReadOutcome``): the
topic-partitions of that metadata partition have no verdict.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kseg.errors import CorruptRecordError, InputError, KsegError
from kseg.format import v2_records
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT
from kseg.ops.tiered.fast import ReadRecord, ReadView, fold_records
from kseg.ops.tiered.partitioner import METADATA_TOPIC
from kseg.ops.tiered.state import Fold
from kseg.storage import checkpoints as cp
from kseg.storage import files
from kseg.storage.batch import FileBatch, V2Batch
from kseg.storage.outcome import ReadOutcome, read_batches
from kseg.storage.partition import Partition, nothing_in
from kseg.storage.records import DEFAULT_WINDOW, FileRecords
from kseg.storage.stores.discover import store_of
from kseg.storage.stores.find import discover

if TYPE_CHECKING:
    from kseg.storage.context import Store


@dataclass
class MetadataRead:
    """The fold, and what was read of each metadata partition (its segments' outcomes, or why not listed)."""

    fold: Fold = field(default_factory=Fold)
    partitions: list[str] = field(default_factory=list)  # the metadata partition directories read
    reads: list[ReadOutcome] = field(default_factory=list)
    incomplete: set[str] = field(default_factory=set)  # metadata partitions not read to their end
    errors: list[str] = field(default_factory=list)  # directories that could not be listed (exit 2)
    notes: list[str] = field(default_factory=list)


def metadata_partition_number(name: str) -> int | None:
    """``__remote_log_metadata-7`` -> 7; None for another topic's directory."""
    tp = cp.topic_partition(name)
    return tp[1] if tp is not None and tp[0] == METADATA_TOPIC else None


def _normal(path: str, store: Store) -> str:
    """A path as given or as listed (of ``store``), comparable: URIs without a trailing ``/``, local paths
    absolute."""
    return store.names.canonical(path)


def read_metadata(
    paths: list[str],
    read_record: ReadRecord,
    limit: int = DEFAULT_DECOMPRESSION_LIMIT,
    remember: Container[str] | None = None,
    view: ReadView | None = None,
) -> MetadataRead:
    """Read and fold every ``__remote_log_metadata`` partition under ``paths`` (batches decompressed to at most
    ``limit`` bytes), remembering the deletion of the segment ids in ``remember`` (None: of every one; see
    :class:`~kseg.ops.tiered.state.Fold`), the records ``view`` reads folded on the fast road
    (:mod:`kseg.ops.tiered.fast`); raises :class:`InputError` when a path is missing or holds none."""
    out = MetadataRead(Fold(remember=remember))
    found = discover(paths, out.notes)
    given = {_normal(p, store_of(p)) for p in paths}  # (each path given: its store chosen once)
    parts = [p for p in found if metadata_partition_number(p.name) is not None or _normal(p.path, p.store) in given]
    others = len(found) - len(parts)
    if others:
        what = "a partition" if others == 1 else f"{others} partitions"
        out.notes.append(f"{what} of other topics skipped (kseg tiered reads {METADATA_TOPIC})")
    for part in parts:
        if metadata_partition_number(part.name) is None:
            out.notes.append(f"{part.path}: not named {METADATA_TOPIC}-<n>, read as one as asked")
    if nothing_in(parts):
        raise InputError(
            f"no {METADATA_TOPIC} partition with segments under " + ", ".join(paths),
            hint=f"give a log root holding {METADATA_TOPIC}-<n> directories, or those directories",
        )
    for part in parts:
        _read_partition(part, read_record, out, limit, view)
    return out


def _read_partition(
    part: Partition, read_record: ReadRecord, out: MetadataRead, limit: int, view: ReadView | None
) -> None:
    out.partitions.append(part.name)
    if part.error is not None:
        out.errors.append(part.error)
        out.incomplete.add(part.name)
        return
    for seg in part.segments:
        if seg.log is None:
            continue
        path = files.display(seg.log, store=seg.store)
        read = ReadOutcome(path, present=seg.log_size())
        try:
            with FileRecords(seg.log, store=seg.store) as records:
                for batch in read_batches(records, read):
                    if not batch.is_valid():  # (a consumer's CRC check, check.crcs: the batch stops its read)
                        raise CorruptRecordError(batch.crc_mismatch(), position=batch.position)
                    if isinstance(batch, V2Batch) and batch.is_control:
                        continue
                    if isinstance(batch, V2Batch) and view is not None:
                        _fold_fast(batch, part.name, read_record, view, out.fold, limit)
                    else:
                        _fold_batch(batch, part.name, read_record, out.fold, limit)
        except KsegError as exc:
            read.stopped_at(exc.at(path))
        out.reads.append(read)
        if not read.complete:
            out.incomplete.add(part.name)


def _fold_batch(batch: FileBatch, name: str, read_record: ReadRecord, fold: Fold, limit: int) -> None:
    for record in batch.records(limit):
        where = f"{name}@{record.offset}"
        value = None if record.value is None else bytes(record.value)
        try:
            kind, message = read_record(value)
        except KsegError as exc:
            fold.undecodable(where, exc.message)
            continue
        fold.apply(kind, message, where)


def _fold_fast(batch: V2Batch, name: str, read_record: ReadRecord, view: ReadView, fold: Fold, limit: int) -> None:
    """:func:`_fold_batch` by :func:`~kseg.ops.tiered.fast.fold_records`: the records decoded in chunks, their
    values spans in the batch's bytes -- copied once when at most a window (bytes read faster than a view),
    read in place when larger (memory stays one batch)."""
    buffer: object = None
    data: bytes | memoryview = b""
    for chunk, records, _ in batch.form_chunks(limit, v2_records.SPANS):
        if chunk is not buffer:
            buffer, data = chunk, bytes(chunk) if len(chunk) <= DEFAULT_WINDOW else memoryview(chunk)
        fold_records(fold, name, data, records, view, read_record)
