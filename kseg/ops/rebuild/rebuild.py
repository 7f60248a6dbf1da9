"""Index rebuild exactly as Kafka's recovery does it (``LogSegment.recover``): each segment's log read as
recovery reads it (``FileRecords.scan``) and fed to the recovery rule (:mod:`kseg.ops.rebuild.recovery`,
whose docstring lists the steps).

Producer state is carried across the segments of a partition directory from
an empty state at its first segment, as recovery does when the log start is
the first segment's base offset.  For one segment given alone, the earlier
segments of its directory are replayed first (``UnifiedLog.rebuildProducerState``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

from kseg.errors import CorruptRecordError, InputError, KsegError, RecoveryFailure
from kseg.format import v2
from kseg.format.v2 import ATTRIBUTES, BASE_OFFSET, CONTROL_FLAG, PRODUCER_ID, TRANSACTIONAL_FLAG
from kseg.limits import DEFAULT_DECOMPRESSION_LIMIT, INT64_MAX, INT64_MIN
from kseg.ops.rebuild.recovered import Recovered
from kseg.ops.rebuild.recovery import DEFAULT_INDEX_INTERVAL, DEFAULT_MAX_INDEX_SIZE, Recovery
from kseg.storage import files, location
from kseg.storage.partition import Partition, Segment, scan_partition
from kseg.storage.producer_state import ProducerState
from kseg.storage.records import FileRecords, SecondReader
from kseg.storage.stores.discover import store_of
from kseg.storage.stores.find import discover

if TYPE_CHECKING:
    from kseg.storage.context import Store


def recover_segment(
    seg: Segment,
    state: ProducerState,
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
    max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
    limit: int = DEFAULT_DECOMPRESSION_LIMIT,
    progress: Callable[[int], None] | None = None,
) -> Recovered:
    """``LogSegment.recover`` on ``seg``; the log is only read.

    Batches come from ``FileRecords.scan`` (header tuples and CRC verdicts, no
    object per batch), a window's at a time; control batches of producers are
    read through a second reader for their marker.
    """
    log = _log_of(seg)
    path = files.display(log, store=seg.store)
    aux = SecondReader(log, seg.store)
    recovery = Recovery(
        seg,
        state,
        aux.batch,
        path=path,
        index_interval_bytes=index_interval_bytes,
        max_index_size=max_index_size,
        limit=limit,
    )
    rec = recovery.rec
    try:
        with FileRecords(log, store=seg.store) as records:
            rec.log_size = records.size
            try:
                for items in records.scan():
                    recovery.feed(items)
                    if progress is not None:
                        progress(rec.valid_bytes)
                recovery.end()
            except RecoveryFailure as exc:
                rec.failure = exc.at(path)
            except CorruptRecordError as exc:  # recovery's catch: stop here, the rest is truncated
                rec.stop = exc.at(path)
                try:
                    recovery.end()
                except RecoveryFailure as failure:
                    rec.failure = failure.at(path)
    finally:
        aux.close()
    return rec


def _log_of(seg: Segment) -> str:
    """The segment's ``.log``, which recovery reads (a segment listed without one is never recovered)."""
    if seg.log is None:
        raise InputError("no .log file: recovery reads the log", path=seg.index or seg.name)
    return seg.log


def replay(log: str, state: ProducerState, limit: int, store: Store) -> None:
    """Producer state of an earlier segment's ``log`` (``loadProducersFromRecords``): no checks, no indexes."""
    aux = SecondReader(log, store)
    try:
        with FileRecords(log, store=store) as records:
            for items in records.scan():
                for position, _, h, batch in items:
                    if h is None:
                        if batch.magic >= 2 and batch.h[v2.PRODUCER_ID] >= 0:
                            state.apply(batch, limit)
                    elif h[PRODUCER_ID] >= 0:
                        if h[ATTRIBUTES] & CONTROL_FLAG:
                            state.apply(aux.batch(position), limit)
                        else:
                            state.apply_data(
                                h[PRODUCER_ID],
                                h[BASE_OFFSET],
                                bool(h[ATTRIBUTES] & TRANSACTIONAL_FLAG),
                                log,
                                position,
                            )
    except KsegError:
        pass  # the segment's own recovery reports its damage; its state stops there
    finally:
        aux.close()


@dataclass
class Target:
    """One partition to rebuild: its segments (all, or those named), and where outputs go."""

    partition: Partition
    selected: set[int] | None  # base offsets given as files; None: every segment
    output_subdir: str  # "" or the partition's name (a log root written to --output-dir)


def resolve(paths: list[str], notes: list[str]) -> list[Target]:
    """Command-line paths (``.log`` files, partition directories, log roots) to targets."""
    targets: list[Target] = []
    by_dir: dict[str, set[int]] = {}  # a partition directory -> the base offsets of its .log files given
    for path in paths:
        store = store_of(path)  # the path given: its store, chosen once
        if not files.exists(path, store=store):
            raise InputError("no such file or directory", path=path)
        if files.isdir(path, store=store):
            parts = discover([path], notes)
            root = len(parts) > 1 or (parts and _same_dir(parts[0].path, parts[0].store) != _same_dir(path, store))
            targets.extend(Target(p, None, p.name if root else "") for p in parts)
            continue
        if files.suffix(path) != files.LOG:
            raise InputError("not a .log file: rebuild-index takes segment .log files and directories", path=path)
        base = files.base_offset_from_name(path)
        if base is None:
            raise InputError("not a segment file: the name carries no base offset", path=path)
        directory = files.parent(path, store=store)
        selected = by_dir.get(directory)
        if selected is None:
            local = not store.remote
            part = scan_partition(
                os.path.dirname(location.local_path(path)) or "." if local else directory, notes, store=store
            )
            selected = by_dir[directory] = set()
            targets.append(Target(part, selected, ""))
        selected.add(base)
    for target in targets:
        for seg in target.partition.segments:
            if seg.log is None and (target.selected is None or seg.base_offset in target.selected):
                names = ", ".join(location.basename(p) for p in (seg.index, seg.timeindex, seg.txnindex) if p)
                notes.append(
                    f"{target.partition.path}: {names} without {seg.stem}.log: ignored "
                    "(Kafka deletes such orphaned index files when it loads the log)"
                )
    return targets


def _same_dir(path: str, store: Store) -> str:
    return store.names.canonical(path)


def recover_partition(
    target: Target,
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL,
    max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
    limit: int = DEFAULT_DECOMPRESSION_LIMIT,
    progress=None,
) -> Iterator[Recovered]:
    """Recover every selected segment of ``target`` in offset order, producer state carried."""
    state = ProducerState()
    selected = target.selected
    last_selected = max(selected, default=INT64_MIN) if selected is not None else INT64_MAX
    truncated_at: Segment | None = None
    for seg in target.partition.segments:
        if seg.log is None:
            continue
        if selected is not None and seg.base_offset not in selected:
            if seg.base_offset < last_selected:
                replay(seg.log, state, limit, seg.store)
            continue
        if progress is not None:
            progress.start(f"{target.partition.name}/{seg.stem}.log", seg.log_size())
        rec = recover_segment(
            seg,
            state,
            index_interval_bytes=index_interval_bytes,
            max_index_size=max_index_size,
            limit=limit,
            progress=None if progress is None else progress.advance_to,
        )
        rec.log_dir, rec.partition = target.partition.log_dir, target.partition.name
        if truncated_at is not None:
            rec.notes.append(
                f"Kafka's recovery would delete this segment (when above the recovery point): "
                f"segment {truncated_at.name} before it was truncated"
            )
        elif rec.truncated > 0 or (rec.failure is not None and rec.failure.truncates_segment):
            truncated_at = seg
        yield rec
