"""A partition's segments read past their damage (:mod:`kseg.ops.salvage.found`), each valid batch kept or
dropped by the rules below, the kept ones copied in offset order to the new partition directory
(:mod:`kseg.ops.salvage.output`), and every loss named.

A valid batch (framed, its CRC holding) is kept unless, in this order:

1. its last offset is below ``--from-offset`` (left out, not lost);
2. its offsets do not fit its segment (below the segment's base offset, past what a relative offset of
   the index holds -- ``LogSegmentOffsetOverflowException`` -- or at or past the next segment's base
   offset): ``out-of-place``;
3. its base offset is not above the last offset kept: the batch kept just before it found again (the same
   offsets, CRC and size) is a ``duplicate`` (nothing lost); any other is an ``overlap``: the batch found
   first in the log is kept, as Kafka's reads (the index leads to the earlier position) would serve it;
4. it is compressed and its records do not decode (a codec error, a record that does not parse):
   ``undecodable`` -- Kafka's recovery keeps it (``ensureValid`` checks only the CRC) and every consumer
   fetching it fails.

A batch is held until the next valid one is seen: when that one overlaps it, and the held batch does not
follow the batch kept before it while its offsets, put right after that batch, end just before the new
one, the held batch's base offset (outside the CRC) is the damaged field; when its partition leader epoch
(outside the CRC too) is above the new one's, which is not below the batch kept before it, its epoch is:
either way it is dropped (``out-of-place``) and the new one goes on.  Damage commits the batch held.
"""

from __future__ import annotations

from kseg.errors import KsegError
from kseg.limits import INT32_MAX
from kseg.ops.salvage.found import Damage, Found, read_segment
from kseg.ops.salvage.model import (
    DAMAGED,
    DUPLICATE,
    MAX_ROWS,
    OUT_OF_PLACE,
    OVERLAP,
    UNDECODABLE,
    Loss,
    Salvage,
    SegmentOutcome,
    TxnCut,
)
from kseg.ops.salvage.output import Output, SegmentWriter
from kseg.storage import files
from kseg.storage.batch import LegacyBatch, V2Batch
from kseg.storage.partition import Partition, Segment
from kseg.storage.records import FileRecords, SecondReader


class _Partition:
    """The state carried across a partition's segments: the last offset kept, the losses whose offsets
    wait for the next batch kept, open transactions, and how far Kafka's recovery would get."""

    def __init__(self, result: Salvage, from_offset: int | None, limit: int) -> None:
        self.result = result
        self.from_offset = from_offset
        self.limit = limit
        self.last: int | None = None  # the last offset kept
        self.last_found: Found | None = None  # the batch kept last
        self.pending: list[Loss] = []  # damaged ranges since the last batch kept: the next one bounds them
        self.open: dict[int, list] = {}  # producer id -> [first offset, damage met since, reported]
        self.kafka_cut = False  # Kafka's recovery stopped (at the first damage)

    # -- losses ------------------------------------------------------------------------------------------
    def damage(self, seg: SegmentOutcome, d: Damage) -> None:
        loss = Loss(DAMAGED, seg.log, d.start, d.end, d.why)
        loss.first = seg.base if self.last is None else self.last + 1
        if self.from_offset is not None:
            loss.first = max(loss.first, self.from_offset)
        if len(self.pending) < MAX_ROWS:
            self.pending.append(loss)
        self.result.add(loss)
        if seg.first_damage is None:
            seg.first_damage = d.start
        if not self.kafka_cut:
            self.kafka_cut = True
            self.result.kafka_stop = f"{seg.log} at byte {d.start}"

    def drop(self, seg: SegmentOutcome, f: Found, cause: str, why: str) -> None:
        self.result.add(Loss(cause, seg.log, f.position, f.position + f.size, why, f.base, f.last))
        if cause != DUPLICATE:
            self._touch_transactions()

    def _touch_transactions(self) -> None:
        for state in self.open.values():
            state[1] = True

    # -- batches -----------------------------------------------------------------------------------------
    def _bound(self, first: int) -> None:
        """The damaged ranges since the last batch kept, bounded by the next one kept at ``first``: the
        offsets missing between the two (none: the damage held no batch) go to the first range."""
        missing = False
        for k, loss in enumerate(self.pending):
            if k == 0 and loss.first is not None and first > loss.first:
                loss.last = first - 1
                missing = True
            else:
                loss.first = None
            self.result.settled(loss)
        self.pending = []
        if missing:
            self._touch_transactions()

    def keep(self, seg: SegmentOutcome, f: Found, records: int, first: int) -> None:
        self._bound(first)
        self.last, self.last_found = f.last, f
        seg.batches += 1
        seg.records += records
        seg.bytes += f.size
        seg.first_offset = first if seg.first_offset is None else seg.first_offset
        seg.last_offset = f.last
        if self.kafka_cut:
            self.result.beyond_kafka += 1
        else:
            self.result.kafka_batches += 1
            self.result.kafka_last_offset = f.last
        if f.producer_id >= 0 and (f.transactional or f.control):
            self._transaction(f)

    def keep_run(self, seg: SegmentOutcome, fs: list[Found], i: int, j: int) -> None:
        """:meth:`keep` of ``fs[i:j]``, uncompressed batches that follow each other in the file, at once."""
        first, last = fs[i], fs[j - 1]
        self._bound(first.base)
        self.last, self.last_found = last.last, last
        n = j - i
        seg.batches += n
        seg.records += sum(f.records for f in fs[i:j])
        seg.bytes += last.position + last.size - first.position
        seg.first_offset = first.base if seg.first_offset is None else seg.first_offset
        seg.last_offset = last.last
        if self.kafka_cut:
            self.result.beyond_kafka += n
        else:
            self.result.kafka_batches += n
            self.result.kafka_last_offset = last.last
        for f in fs[i:j]:
            if f.producer_id >= 0 and (f.transactional or f.control):
                self._transaction(f)

    def _transaction(self, f: Found) -> None:
        state = self.open.get(f.producer_id)
        if f.control:
            if state is not None and state[1] and not state[2]:  # (a lost marker is said once)
                self.result.txn_cuts.append(
                    TxnCut(
                        f.producer_id,
                        state[0],
                        "damage lies inside it: some of its data batches may be lost; its marker was kept",
                        False,
                    )
                )
            self.open.pop(f.producer_id, None)
        elif state is None:
            self.open[f.producer_id] = [f.base, False, False]
        elif state[1] and not state[2]:
            state[2] = True
            self.result.txn_cuts.append(
                TxnCut(
                    f.producer_id,
                    state[0],
                    f"its batches go on at offset {f.base} after damage: a marker lost there makes two "
                    "transactions one, ended by the later marker's outcome",
                    True,
                )
            )

    def finish(self) -> None:
        for k, loss in enumerate(self.pending):  # damage after the last batch kept: its offsets are unbounded
            if k:
                loss.first = None
            self.result.settled(loss)
        if self.pending:
            self._touch_transactions()
        self.pending = []
        for pid, (first, touched, reported) in self.open.items():
            if touched and not reported:
                self.result.txn_cuts.append(
                    TxnCut(pid, first, "open at the end of what was kept, with damage after its start", True)
                )
        if self.open:
            self.result.lso = min(state[0] for state in self.open.values())


def salvage_partition(
    part: Partition,
    selected: set[int] | None,
    output: Output | None,
    *,
    from_offset: int | None = None,
    limit: int,
) -> Salvage:
    """Read every selected segment of ``part`` past its damage; write what is kept through ``output``
    (None: ``--dry-run``).  Raises :class:`InputError` for a segment that cannot be read (I/O)."""
    result = Salvage(
        files.display(part.path, store=part.store),
        None if output is None else output.shown,
        snapshots=len(part.snapshots),
    )
    state = _Partition(result, from_offset, limit)
    segments = [s for s in part.segments if s.log is not None]
    for k, seg in enumerate(segments):
        if selected is not None and seg.base_offset not in selected:
            continue
        upper = segments[k + 1].base_offset if k + 1 < len(segments) else None
        cut_before = state.kafka_cut
        result.segments.append(_segment(state, seg, upper, output))
        if cut_before:  # LogLoader.recoverLog deletes the segments after the one it truncated
            result.kafka_deleted_segments += 1
    state.finish()
    return result


def _segment(state: _Partition, seg: Segment, upper: int | None, output: Output | None) -> SegmentOutcome:
    assert seg.log is not None
    run = _SegmentRun(state, seg, output)
    try:
        with FileRecords(seg.log, store=seg.store) as records:
            run.outcome.size = records.size
            for event in read_segment(records):
                if isinstance(event, Damage):
                    run.commit()
                    state.damage(run.outcome, event)
                else:
                    run.run(event, upper)
            run.commit()
            run.finish()
    finally:
        run.close()
    return run.outcome


class _SegmentRun:
    """One segment's valid batches decided: each is held until the next one is seen (its base offset, outside
    the CRC, is judged against both neighbours), then kept -- copied to the output -- or dropped."""

    def __init__(self, state: _Partition, seg: Segment, output: Output | None) -> None:
        assert seg.log is not None
        self.state, self.seg, self.output = state, seg, output
        self.outcome = SegmentOutcome(files.display(seg.log, store=seg.store), seg.name, seg.base_offset)
        self.copier = FileRecords(seg.log, window=1 << 20, store=seg.store)
        self.reader = SecondReader(seg.log, store=seg.store)  # opened for a kept end marker or v0/v1 message
        self.decoder = SecondReader(seg.log, window=1 << 20, store=seg.store)  # a compressed batch's records
        self.writer: SegmentWriter | None = None
        self.held: tuple[Found, int, int] | None = None  # (batch, records, first offset)

    def run(self, fs: list[Found], upper: int | None) -> None:
        """Batches that follow each other in the file, decided: each by :meth:`found`, except the stretches
        that need no decision -- uncompressed, each above the batch before it, in its segment, its epoch not
        below the one before -- kept at once (as :meth:`found` would keep them)."""
        i, n = 0, len(fs)
        while i < n:
            self.found(fs[i], upper)
            i += 1
            j = self._plain(fs, i, upper)
            if j > i + 1:
                self.commit()
                if self.output is not None:
                    self._writer().keep(fs[i : j - 1])
                self.state.keep_run(self.outcome, fs, i, j - 1)
                last = fs[j - 1]
                self.held = (last, last.records, last.base)
                i = j

    def _plain(self, fs: list[Found], i: int, upper: int | None) -> int:
        """The end of the stretch of ``fs`` from ``i`` that :meth:`found` would keep as it comes, the batch
        before ``i`` held: each batch uncompressed, past ``--from-offset``, within its segment, above the
        batch before it and its leader epoch not below that one's (the rules of :meth:`found`)."""
        held = self.held
        if held is None or held[0] is not fs[i - 1] or self.state.from_offset is not None:
            return i
        base = self.seg.base_offset
        top = (base + INT32_MAX) if upper is None else min(base + INT32_MAX, upper - 1)
        prev = fs[i - 1]
        n = len(fs)
        while i < n:
            f = fs[i]
            if f.codec or f.base <= prev.last or f.last > top or f.base < base or f.epoch < prev.epoch:
                break
            prev = f
            i += 1
        return i

    def found(self, f: Found, upper: int | None) -> None:
        state, outcome = self.state, self.outcome
        if not _placed(state, outcome, self.seg, upper, f):
            return
        held = self.held
        if held is not None and (
            (f.base <= held[0].last and _offset_damaged(state, outcome, held[0], f))
            or _epoch_damaged(state, outcome, held[0], f)
        ):
            self.held = None
        self.commit()
        if not _ordered(state, outcome, f):
            return
        if f.codec == 0:
            self.held = (f, f.records, f.base)
            return
        try:
            self.held = (f, *_decoded(self.decoder, f, state.limit))
        except KsegError as exc:
            state.drop(outcome, f, UNDECODABLE, f"its CRC holds but its records do not decode: {exc.message}")

    def commit(self) -> None:
        """Keep the batch held: copied to the output, counted."""
        if self.held is None:
            return
        f, records, first = self.held
        self.held = None
        if self.output is not None:
            self._writer().keep((f,))
        self.state.keep(self.outcome, f, records, first)

    def _writer(self) -> SegmentWriter:
        if self.writer is None:
            assert self.output is not None
            self.writer = self.output.segment(self.seg.base_offset, self.copier, self.reader)
            self.outcome.written = self.writer.shown
        return self.writer

    def finish(self) -> None:
        """The segment's salvaged log written whole and synced (an empty one as it was: the segment a broker
        rolled last, whose base offset is the log end offset)."""
        if self.writer is None and self.output is not None and self.outcome.size == 0:
            self._writer()
        if self.writer is not None:
            writer, self.writer = self.writer, None
            writer.close()

    def close(self) -> None:
        if self.writer is not None:  # not finished: a failure, the directory is discarded
            self.writer.abandon()
        self.copier.close()
        self.reader.close()
        self.decoder.close()


def _placed(state: _Partition, seg: SegmentOutcome, segment: Segment, upper: int | None, f: Found) -> bool:
    """Rules 1 and 2: at or past ``--from-offset``, and its offsets within its segment (else dropped, said)."""
    if state.from_offset is not None and f.last < state.from_offset:
        state.result.skipped_before += 1
        return False
    base = segment.base_offset
    if f.base < base or f.last - base > INT32_MAX or (upper is not None and f.last >= upper):
        bound = f"the segment holds offsets {base} to {min(base + INT32_MAX, (upper or base + INT32_MAX + 1) - 1)}"
        state.drop(seg, f, OUT_OF_PLACE, f"offsets {f.base} to {f.last} outside it ({bound})")
        return False
    return True


def _offset_damaged(state: _Partition, seg: SegmentOutcome, held: Found, f: Found) -> bool:
    """Whether ``held``'s base offset is the damaged one, ``f`` overlapping it: ``held`` does not follow the
    batch kept before it, but its offsets, put right after that batch, end just before ``f`` -- a base offset
    changed on disk (v2's is outside the CRC).  Then ``held`` is dropped (said) and ``f`` goes on."""
    expected = seg.base if state.last is None else state.last + 1
    span = held.last - held.base
    if held.base == expected or expected + span + 1 != f.base:
        return False
    state.drop(
        seg,
        held,
        OUT_OF_PLACE,
        f"its base offset does not follow its neighbours: its offsets fit {expected} to {expected + span}, "
        "between the batches on either side (a base offset is outside the CRC)",
    )
    return True


def _epoch_damaged(state: _Partition, seg: SegmentOutcome, held: Found, f: Found) -> bool:
    """Whether ``held``'s partition leader epoch (outside the CRC) is the damaged field: above the epoch of the
    batch after it, which is not below the batch kept before it.  Epochs never fall along a log, and
    recovery would put this one in the leader epoch cache (``LeaderEpochFileCache.assign``).  Then ``held``
    is dropped (said)."""
    before = -1 if state.last_found is None else state.last_found.epoch
    if held.magic < 2 or f.magic < 2 or not held.epoch > f.epoch >= before:
        return False
    state.drop(
        seg,
        held,
        OUT_OF_PLACE,
        f"its partition leader epoch {held.epoch} is above the next batch's ({f.epoch}): epochs never fall "
        "along a log (a leader epoch is outside the CRC)",
    )
    return True


def _ordered(state: _Partition, seg: SegmentOutcome, f: Found) -> bool:
    """Rule 3: its base offset above the last offset kept (else a duplicate or an overlap, dropped, said)."""
    last = state.last_found
    if state.last is None or f.base > state.last:
        return True
    if last is not None and (last.base, last.last, last.crc, last.size) == (f.base, f.last, f.crc, f.size):
        state.drop(seg, f, DUPLICATE, f"the batch at byte {last.position} again (same offsets and CRC)")
    else:
        state.drop(seg, f, OVERLAP, f"offsets {f.base} to {f.last}, not above {state.last} kept before it")
    return False


def _decoded(decoder: SecondReader, f: Found, limit: int) -> tuple[int, int]:
    """Every record of a compressed batch decoded (as a consumer would): ``(records, first offset)``."""
    batch = decoder.batch(f.position)
    if isinstance(batch, V2Batch):
        n = sum(map(len, batch.record_chunks(limit, sizes=True)))
        return n, f.base
    assert isinstance(batch, LegacyBatch)
    n, first = 0, f.base
    for rec in batch.records(limit):
        if n == 0:
            first = rec.offset
        n += 1
    return n, first
