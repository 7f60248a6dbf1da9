"""Reading a split: its records in range, each corrupt batch met, and what a ``read_committed`` consumer
would drop (:mod:`kseg.ops.export.export` plans the splits).

Corrupt batches (a CRC mismatch, undecodable records, a broken length, a last offset past 2^63-1) are
never silently dropped: each one is yielded as a :class:`Corruption`.  An I/O error (permission denied,
``EIO``, a segment that vanished or shrank) is not a corruption: it is raised
(:class:`~kseg.errors.InputError`), and the export fails without writing anything.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Generator, Iterator, NamedTuple

from kseg.errors import InputError, KsegError
from kseg.format import v2 as fmt_v2
from kseg.limits import INT64_MIN
from kseg.ops.export.columns import Columns, WindowReader, available
from kseg.storage import files
from kseg.storage.aborted import ReadCommitted, last_stable_offset
from kseg.storage.batch import V2Batch
from kseg.storage.ranges import BEFORE, EVERYTHING, LAST, PAST, Ranges, place
from kseg.storage.records import FileRecords

if TYPE_CHECKING:
    from kseg.storage.context import Store


class Split(NamedTuple):
    """One task's bytes: ``[start, end)`` of ``log`` (``end`` None: to the end of the file,
    reporting trailing bytes); ``bytes`` is the planned size, for balancing tasks."""

    log_dir: str
    partition: str
    segment: str
    log: str
    start: int
    end: int | None
    bytes: int
    store: Store  # the segment's (its unit's): the log, its directory and the .txnindex files read through it
    txn_indexes: tuple[str, ...] = ()  # the .txnindex files of this segment and the later ones (aborted)
    since: int = INT64_MIN  # export --since: the partition's first offset not exported before


class Corruption(NamedTuple):
    """A batch (or the rest of a segment) that could not be exported."""

    log: str
    position: int
    kind: str  # crc | corrupt-batch | trailing-bytes
    message: str


class RecordFacts(NamedTuple):
    """One record with the batch facts it carries; ``key``/``value`` bytes or None; headers raw."""

    offset: int
    timestamp: int
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: tuple  # ((key bytes, value bytes | None), ...)
    sequence: int
    position: int  # the batch's position in the .log
    base_offset: int
    last_offset: int
    magic: int
    codec: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    leader_epoch: int
    is_transactional: bool
    is_control: bool
    crc_valid: bool
    aborted: bool  # a read_committed consumer drops it (kseg.storage.aborted)


def read_split(
    split: Split,
    ranges: Ranges = EVERYTHING,
    limit: int = 1 << 26,
    keep_invalid: bool = False,
    committed: bool = False,
    columns: bool = False,
) -> Iterator[RecordFacts | Corruption | Columns]:
    """The records of ``split`` in ``ranges``, in file order, and each corrupt batch met.

    A batch with a CRC mismatch is a :class:`Corruption`; its records follow
    too when ``keep_invalid`` and they decode (``crc_valid`` false).  A
    broken length ends the split with a ``corrupt-batch``; bytes after the
    last whole batch of the file are ``trailing-bytes``; a v2 batch whose last
    offset passes 2^63-1 is a ``bad-last-offset`` (verify-index's problem).
    Each record says whether a ``read_committed`` consumer drops it as aborted
    (:class:`~kseg.storage.aborted.ReadCommitted`); with ``committed``, aborted
    and control records are left out, as that consumer leaves them.

    ``columns``: where the compiled engine runs, the plain batches' records come as
    :class:`~kseg.ops.export.columns.Columns`, a window's at a time (while no aborted transaction
    is pending), the other batches' by these rules, in the same order.
    """
    ranges = starting(ranges, split.since)
    store = split.store
    txns = ReadCommitted(split.txn_indexes, store)  # InputError: a .txnindex that cannot be read
    if committed:  # a read_committed fetch stops at the last stable offset
        lso = last_stable_offset(files.parent(split.log, store=store), store)
        if lso is not None:
            ranges = replace(ranges, to_offset=min(ranges.to_offset, lso - 1))
    for path, position, message in txns.problems:
        yield Corruption(path, position, "txnindex", f"{message}; its later entries are not used")
    records = FileRecords(
        split.log, store=store
    )  # InputError: an I/O error is the export's failure, never a corruption row
    with records:
        end = records.size if split.end is None else split.end
        stop = min(end, records.end)  # FileRecords.batches' end
        pos = split.start
        window = WindowReader(records, stop, ranges) if columns and available() else None
        try:
            while True:
                if window is not None and txns.quiet:
                    pos, full, got = window.read(pos)
                    if got is not None:
                        yield got
                    if full:
                        continue
                batch = records.frame_at(pos, stop)  # the batch the engine left, or every batch
                if batch is None:
                    break
                pos = batch.position + batch.size
                if (yield from _batch_items(batch, split.log, ranges, limit, keep_invalid, committed, txns)):
                    return
        except InputError as exc:
            raise exc.at(files.display(split.log, store=store)) from None
        except KsegError as exc:
            yield Corruption(split.log, exc.position if exc.position is not None else pos, "corrupt-batch", exc.message)
            return
        if split.end is None and pos < records.size:
            yield Corruption(
                split.log,
                pos,
                "trailing-bytes",
                f"{records.size - pos} bytes after the last whole batch (a partial batch, not read)",
            )


def _batch_items(
    batch, log: str, ranges: Ranges, limit: int, keep_invalid: bool, committed: bool, txns: ReadCommitted
) -> Generator[RecordFacts | Corruption, None, bool]:
    """The per-batch rules of :func:`read_split` for one batch: its items; returns whether the split ends
    with it."""
    if _wrapped(batch):
        if batch.base_offset <= ranges.to_offset:
            yield _wrapped_corruption(batch, log)
        return False
    where = place(batch, ranges)
    if where == PAST:
        return True
    aborted = txns.aborted(batch, limit)
    if where == BEFORE:
        return False
    drop = committed and (aborted or (isinstance(batch, V2Batch) and batch.is_control))
    yield from _batch_records(batch, log, ranges, limit, keep_invalid, aborted, drop)
    return where == LAST


def _wrapped(batch) -> bool:
    """A v2 batch whose baseOffset + lastOffsetDelta passes 2^63-1 (Kafka's long wraps it below the base)."""
    return batch.magic >= 2 and batch.last_offset < batch.base_offset and batch.h[fmt_v2.LAST_OFFSET_DELTA] >= 0


def _wrapped_corruption(batch, log: str) -> Corruption:
    last = batch.base_offset + batch.h[fmt_v2.LAST_OFFSET_DELTA]
    return Corruption(
        log,
        batch.position,
        "bad-last-offset",
        f"batch at offset {batch.base_offset}: last offset {last} past 2^63-1 (baseOffset + lastOffsetDelta "
        "overflows a 64-bit offset; Kafka's long arithmetic wraps it); its records are not exported",
    )


def _batch_records(
    batch, log: str, ranges: Ranges, limit: int, keep_invalid: bool, aborted: bool = False, drop: bool = False
):
    valid = batch.is_valid()
    if not valid:
        yield Corruption(
            log,
            batch.position,
            "crc",
            batch.crc_mismatch(),
        )
        if not keep_invalid:
            return
    if drop:  # read_committed: an aborted or control batch is not delivered
        return
    v2 = batch.magic >= 2
    if v2:
        h = batch.h
        producer = (
            h[fmt_v2.PRODUCER_ID],
            h[fmt_v2.PRODUCER_EPOCH],
            h[fmt_v2.BASE_SEQUENCE],
            h[fmt_v2.LEADER_EPOCH],
            batch.is_transactional,
            batch.is_control,
        )
    else:  # a v0/v1 entry: no producer, no leader epoch
        producer = (-1, -1, -1, -1, False, False)
    facts = (batch.position, batch.base_offset, batch.last_offset, batch.magic, batch.codec, *producer, valid, aborted)
    ttype = batch.timestamp_type
    holds = ranges.holds
    new = tuple.__new__  # a RecordFacts made as its tuple (NamedTuple's own __new__ is a Python call a record)
    try:
        for rec in batch.records(limit):
            offset, ts = rec[0], rec[1]
            if not holds(offset, ts):
                continue
            if v2:
                key, value, seq = rec[3], rec[4], rec[2]
                headers = tuple((bytes(k), None if v is None else bytes(v)) for k, v in rec[5]) if rec[5] else ()
            else:
                key, value, seq, headers = rec[2], rec[3], -1, ()
            yield new(
                RecordFacts,
                (
                    offset,
                    ts,
                    ttype,
                    None if key is None else bytes(key),
                    None if value is None else bytes(value),
                    headers,
                    seq,
                    *facts,
                ),
            )
    except InputError:
        raise
    except KsegError as exc:
        yield Corruption(
            log, exc.position if exc.position is not None else batch.position, "corrupt-batch", exc.message
        )


def starting(ranges: Ranges, start: int) -> Ranges:
    """``ranges`` starting no earlier than ``start`` (``--since``)."""
    return ranges if start <= ranges.from_offset else replace(ranges, from_offset=start)
