"""A listing held compactly: one partition's segments as packed arrays, not one object per file.

A Spark driver plans from names and sizes alone (``export --spark``, the
``kseg`` data source), and the data source carries its listing in its
pickled state from ``load()`` to every query planned from it
(:mod:`kseg.spark.datasource`).  At fleet scale (10^5 partitions, 4 x 10^7
keys) a :class:`~kseg.storage.partition.Segment` per segment and a path
string per file are most of the driver's memory; here a partition is its
directory's path and three arrays -- base offsets (``array('q')``), ``.log``
sizes (``array('q')``) and which of the segment's files were listed (one
byte of flags) -- and a file's path is made again from the directory and
Kafka's name for it (``LocalLog``/``LogFileUtils``: the base offset in 20
digits and the suffix).  A file whose path is not that name (a
``LocalTieredStorage`` ``<offset>-<segment id>.log``) is kept whole, by
exception.  :attr:`Listed.segments` gives the ``Segment`` objects back, one
partition at a time.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

from kseg.storage import files, location
from kseg.storage.partition import Partition, Segment

#: The files of a segment a listing records, in flag-bit order (``Segment``'s attribute names).
SLOTS = (("log", files.LOG), ("index", files.INDEX), ("timeindex", files.TIME_INDEX), ("txnindex", files.TXN_INDEX))
#: The flag bit of a segment that is one of several tiered copies at its base offset (``Segment.copies``).
COPIES = 1 << len(SLOTS)


class Listed:
    """One partition of a listing: ``path`` (its directory; ``log_dir`` and ``name`` as
    :class:`~kseg.storage.partition.Partition`'s, made from it when asked), ``error`` when it could not
    be listed, and its segments packed: ``numbers`` (base offset, then the ``.log``'s bytes -- 0
    without one -- for each segment), ``flags`` (one byte a segment; bit k: file ``SLOTS[k]`` was
    listed; :data:`COPIES`: one of several tiered copies at its base offset) and ``odd`` (``{(k, slot):
    path}`` for segment k's file not named ``<base, 20 digits><suffix>`` in ``path``: a tiered copy's
    ``<base>-<segment id>`` name, an Aiven ``.indexes`` object's index) and ``head_left_out`` (the first
    segment is not the log's first: :attr:`Partition.head_left_out`).  About 300 bytes a partition
    and 17 a segment."""

    __slots__ = ("path", "error", "numbers", "flags", "odd", "head_left_out", "leader_epochs", "store")

    def __init__(self, part: Partition) -> None:
        self.path, self.error, self.head_left_out = part.path, part.error, part.head_left_out
        self.leader_epochs = part.leader_epochs  # Partition.leader_epochs: the listing's word on the checkpoint
        self.store = part.store  # where its files are, and the read context (carried to a Spark task)
        self.numbers = array("q")
        flags = bytearray()
        self.odd: dict[tuple[int, int], str] | None = None
        for n, seg in enumerate(part.segments):
            self.numbers.append(seg.base_offset)
            self.numbers.append(seg.log_size())  # a local .log is stat'ed here, once per listing
            bits = 0
            for k, (slot, sfx) in enumerate(SLOTS):
                path = getattr(seg, slot)
                if path is None:
                    continue
                bits |= 1 << k
                if path != location.join(self.path, f"{seg.base_offset:020d}{sfx}"):
                    self.odd = self.odd or {}
                    self.odd[(n, k)] = path
            flags.append(bits | (COPIES if seg.copies else 0))
        self.flags = bytes(flags)

    @property
    def log_dir(self) -> str:
        return Partition(self.path, store=self.store).log_dir

    @property
    def name(self) -> str:
        return Partition(self.path, store=self.store).name

    def __len__(self) -> int:
        return len(self.flags)

    def __getstate__(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __setstate__(self, state: tuple[object, ...]) -> None:
        for name, value in zip(self.__slots__, state, strict=True):
            setattr(self, name, value)

    def cut(self, lo: int, hi: int) -> Listed:
        """Segments ``lo`` to ``hi`` (exclusive) of this partition, packed the same way (a task's share of
        a partition whose segments are dealt to several tasks); its head left out when ``lo`` > 0."""
        part = Listed.__new__(Listed)
        odd = {(n - lo, k): path for (n, k), path in self.odd.items() if lo <= n < hi} if self.odd else None
        head_left_out = self.head_left_out or lo > 0
        part.__setstate__(
            (
                self.path,
                self.error,
                self.numbers[2 * lo : 2 * hi],
                self.flags[lo:hi],
                odd or None,
                head_left_out,
                self.leader_epochs,
                self.store,
            )
        )
        return part

    @property
    def sizes(self) -> array[int]:
        """Each segment's listed ``.log`` size (``Segment.log_size()``; 0 without a ``.log``), in order."""
        return self.numbers[1::2]

    @property
    def segments(self) -> list[Segment]:
        """The segments, in base-offset order, as the listing found them (``log_bytes`` set): made
        again at each call (a partition's worth at a time)."""
        return list(self._segments())

    def _segments(self) -> Iterator[Segment]:
        numbers = iter(self.numbers)
        for n, (base, size, bits) in enumerate(zip(numbers, numbers, self.flags, strict=True)):
            seg = Segment(base, log_bytes=size, copies=bool(bits & COPIES), store=self.store)
            for k, (slot, sfx) in enumerate(SLOTS):
                if bits >> k & 1:
                    path = self.odd.get((n, k)) if self.odd else None
                    setattr(seg, slot, path or location.join(self.path, f"{base:020d}{sfx}"))
            yield seg
