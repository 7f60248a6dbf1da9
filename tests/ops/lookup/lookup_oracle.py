"""Brute-force answers for the lookup proofs: every record of a partition, read once, in file order.

Kept apart from the code under test: it walks every batch and record with the
shared reader and applies Kafka's rules to the full list, with no index.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate

from kseg.errors import KsegError
from kseg.storage.partition import scan_partition
from kseg.storage.records import FileRecords
from tests.stores import local

LIMIT = 40 << 20


@dataclass
class Batch:
    segment: int  # base offset
    position: int
    base_offset: int
    last_offset: int
    max_timestamp: int
    records: list[tuple[int, int]] | None  # (offset, timestamp); None when they cannot be decoded


@dataclass
class Partition:
    segments: list[int] = field(default_factory=list)
    batches: list[Batch] = field(default_factory=list)
    _batch_maxima: list[int] | None = field(default=None, repr=False, compare=False)
    _record_maxima: dict[int, list[int]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def log_start(self) -> int:
        return self.segments[0]

    @property
    def log_end(self) -> int:
        """Next offset after the last segment's last batch, else its base offset."""
        last = self.segments[-1]
        ends = [b.last_offset + 1 for b in self.batches if b.segment == last]
        return ends[-1] if ends else last

    def records(self):
        for b in self.batches:
            for offset, ts in b.records or ():
                yield b, offset, ts

    # -- by offset: the first record with offset >= target, in file order -----------------
    def by_offset(self, target: int):
        """(batch, record offset) Kafka's read returns, 'error' if it needs an undecodable batch, None if none.

        The batches (and a batch's records) are walked in file order from the first whose last offset is
        >= target: found by bisecting the running maximum of the last offsets, which first reaches target
        exactly there (offsets that go back included), so each of a partition's targets is not a walk from
        its first batch."""
        for b in self.batches[bisect_left(self._most_last_offsets(), target) :]:
            if b.last_offset < target:
                continue
            if b.records is None:
                return "error"
            i = bisect_left(self._most_offsets(b), target)
            if i < len(b.records):
                return b, b.records[i][0]
        return None

    def _most_last_offsets(self) -> list[int]:
        """The running maximum of the batches' last offsets, in file order (computed once)."""
        if self._batch_maxima is None:
            self._batch_maxima = list(accumulate((b.last_offset for b in self.batches), max))
        return self._batch_maxima

    def _most_offsets(self, batch: Batch) -> list[int]:
        """The running maximum of ``batch``'s record offsets, in file order (computed once a batch)."""
        maxima = self._record_maxima.get(id(batch))
        if maxima is None:
            maxima = self._record_maxima[id(batch)] = list(accumulate((o for o, _ in batch.records or ()), max))
        return maxima

    # -- by time: Kafka's ListOffsets rule, with each segment's true largest timestamp -----
    def largest(self, segment: int) -> int:
        return max((b.max_timestamp for b in self.batches if b.segment == segment), default=-1)

    def by_time(self, target: int):
        """(batch, offset, timestamp), 'error' or None: the first segment whose largest batch
        max timestamp >= target; in it the first record in file order, in a batch whose max
        timestamp >= target, with timestamp >= target and offset >= the log start."""
        chosen = next((s for s in self.segments if self.largest(s) >= target), None)
        if chosen is None:
            return None
        for b in self.batches:
            if b.segment != chosen or b.max_timestamp < target:
                continue
            if b.records is None:
                return "error"
            for offset, ts in b.records:
                if ts >= target and offset >= self.log_start:
                    return b, offset, ts
        return None

    def timestamps(self, sample: int = 200) -> list[int]:
        """A spread of targets: every batch max timestamp and about ``sample`` record
        timestamps (all of them in small partitions), each with its neighbours; 0."""
        batch_ts = {b.max_timestamp for b in self.batches}
        record_ts = sorted({ts for b in self.batches for _, ts in b.records or ()})
        step = max(1, len(record_ts) // sample)
        spread = {0}
        for ts in batch_ts | set(record_ts[::step]) | set(record_ts[-1:]):
            spread.update((ts - 1, ts, ts + 1))
        return sorted(t for t in spread if t >= 0)


def read_partition(path) -> Partition:
    part = Partition()
    for seg in scan_partition(str(path), store=local()).segments:
        if seg.log is None:
            continue
        part.segments.append(seg.base_offset)
        with FileRecords(seg.log, store=local()) as records:
            try:
                for batch in records.batches():
                    try:
                        recs = [(r[0], r[1]) for r in batch.records(LIMIT)]
                    except KsegError:
                        recs = None
                    part.batches.append(
                        Batch(
                            seg.base_offset,
                            batch.position,
                            batch.base_offset,
                            batch.last_offset,
                            batch.max_timestamp,
                            recs,
                        )
                    )
            except KsegError:
                pass  # a corrupt length field ends the segment's batches, as in Kafka's iteration
    return part
