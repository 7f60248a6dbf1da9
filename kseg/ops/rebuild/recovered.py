"""What Kafka's recovery (``LogSegment.recover``) makes of one segment: the rebuilt ``.index``,
``.timeindex`` and ``.txnindex`` entries (8 bytes a value, no object an entry), how far the log is
valid, and why recovery stopped or failed; the entries packed in their files' layouts
(``OffsetIndex``, ``TimeIndex``, ``TransactionIndex``)."""

from __future__ import annotations

import struct
from array import array
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import Iterable

from kseg.errors import KsegError, RecoveryFailure
from kseg.format.indexes import OFFSET_ENTRY, TIME_ENTRY, TXN_ENTRY
from kseg.storage.partition import Segment


@dataclass
class Recovered:
    """What ``LogSegment.recover`` makes of one segment."""

    segment: Segment
    log_dir: str = ""  # the log directory holding the segment's partition (``Partition.log_dir``)
    partition: str = ""  # the partition directory's name (``Partition.name``)
    log: str = ""  # the segment's .log (``segment.log``, which recovery needs)
    log_size: int = 0
    valid_bytes: int = 0
    batches: int = 0
    last_position: int = -1  # the last valid batch's position (an index made no entry up to it: interval >= it)
    # the rebuilt indexes, 8 bytes a value (a 10 MiB index's 1.3 M entries: ~21 MB, no object an entry)
    index_offsets: array = field(default_factory=lambda: array("q"))  # .index: absolute offsets
    index_positions: array = field(default_factory=lambda: array("q"))  # .index: .log positions
    time_timestamps: array = field(default_factory=lambda: array("q"))  # .timeindex: timestamps
    time_offsets: array = field(default_factory=lambda: array("q"))  # .timeindex: absolute offsets
    txn_entries: list = field(default_factory=list)  # (producerId, first, last, lastStableOffset)
    stop: KsegError | None = None  # why recovery stopped before the end of the log
    failure: RecoveryFailure | None = None  # an exception recovery does not survive
    notes: list[str] = field(default_factory=list)

    @property
    def truncated(self) -> int:
        """Bytes Kafka's recovery would cut from the end of the log."""
        return self.log_size - self.valid_bytes

    @property
    def damaged(self) -> bool:
        """Invalid data in the log: bytes recovery would truncate, or an exception it would not survive."""
        return self.truncated > 0 or self.failure is not None

    @property
    def offset_entries(self) -> list[tuple[int, int]]:
        """The ``.index`` entries: (absolute offset, position)."""
        return list(zip(self.index_offsets, self.index_positions, strict=True))

    @property
    def time_entries(self) -> list[tuple[int, int]]:
        """The ``.timeindex`` entries: (timestamp, absolute offset)."""
        return list(zip(self.time_timestamps, self.time_offsets, strict=True))

    def drop_entries(self) -> None:
        """Forget the entries (written already; a report needs only the counts and notes)."""
        for values in (self.index_offsets, self.index_positions, self.time_timestamps, self.time_offsets):
            del values[:]
        self.txn_entries = []

    def index_bytes(self) -> bytes:
        base = self.segment.base_offset
        return _packed(OFFSET_ENTRY, map(base.__rsub__, self.index_offsets), self.index_positions)

    def time_index_bytes(self) -> bytes:
        base = self.segment.base_offset
        return _packed(TIME_ENTRY, self.time_timestamps, map(base.__rsub__, self.time_offsets))

    def txn_index_bytes(self) -> bytes:
        return b"".join(TXN_ENTRY.pack(0, *e) for e in self.txn_entries)


def _packed(entry: struct.Struct, first: Iterable[int], second: Iterable[int]) -> bytes:
    """Two-field entries in ``entry``'s layout, 4,096 to a ``pack`` call."""
    pairs = iter(zip(first, second, strict=True))
    out = []
    while chunk := list(islice(pairs, 4096)):
        out.append(struct.pack(">" + entry.format.lstrip("><!=@") * len(chunk), *chain.from_iterable(chunk)))
    return b"".join(out)
