"""The ``.txnindex`` half of ``LogSegment.sanityCheck``: what a broker finds in it on every start.

For every segment that has its ``.index`` (without it, ``sanityCheck`` throws ``NoSuchFileException`` first and
the ``.txnindex`` is not read: :data:`kseg.ops.logdir.recover.NO_INDEX`), on every start, after a clean shutdown
too, ``TransactionIndex.sanityCheck`` reads every whole 34-byte entry of the segment's ``.txnindex`` in file order
(a trailing partial entry is not read; no file, no entry):

* an entry whose version is above 0 -- the iterator's ``KafkaException``, which ``LogLoader.loadSegmentFiles``
  does not catch: the partition's load fails, ``LogManager.loadLogs`` rethrows it and the broker does not start;
* an entry whose ``lastOffset`` is below the segment's base offset -- ``CorruptIndexException``:
  ``loadSegmentFiles`` recovers the segment ("Found a corrupted index file"), as for a missing ``.index``
  (:data:`kseg.ops.logdir.recover.CORRUPT_INDEX`): its indexes rebuilt, truncated at its first invalid
  batch, later segments kept.

The first fault decides (an entry's version is read before its ``lastOffset``): the rule is
:func:`kseg.format.indexes.txn_sanity_check`, read here as a stream through the bounded reader.
"""

from __future__ import annotations

from dataclasses import dataclass

from kseg.errors import CorruptIndexError, TxnVersionError
from kseg.format.indexes import TXN_ENTRY, txn_sanity_check
from kseg.storage import files
from kseg.storage.checkpoints import open_aux
from kseg.storage.partition import Segment
from kseg.storage.read import Kind

SEGMENT_MAX = (1 << 31) - 1  # a segment's bytes: LogConfig's segment.bytes is an int
#: A ``.txnindex`` has an entry per ABORT marker of its segment, each marker a batch of at least 61 bytes.
TXN_INDEX = Kind(
    ".txnindex",
    (SEGMENT_MAX // 61 + 1) * TXN_ENTRY.size,
    "an entry per ABORT marker of a segment of at most 2 GiB, each marker a batch of at least 61 bytes",
)
LOADER = "LogLoader.loadSegmentFiles"


@dataclass(frozen=True)
class TxnFault:
    """The first entry of a segment's ``.txnindex`` that ``TransactionIndex.sanityCheck`` refuses: at byte
    ``position``, ``message`` in Kafka's words; ``fatal``: a version above 0 (the load fails), else a
    ``lastOffset`` below the base offset (the segment is recovered)."""

    path: str  # as given
    position: int
    message: str
    fatal: bool

    @property
    def entry(self) -> int:
        return self.position // TXN_ENTRY.size

    def problem(self) -> str:
        """A version above 0: the problem (the broker does not start)."""
        return (
            f"load fails: entry {self.entry} at byte {self.position}: {self.message}: a broker reads every "
            f".txnindex entry on start (LogSegment.sanityCheck), and {LOADER} does not catch this KafkaException: "
            "the partition fails to load and the broker does not start (LogManager.loadLogs rethrows it); "
            "`kseg rebuild-index` writes the right file"
        )

    def cause(self) -> str:
        """Why the segment is recovered, for a truncation's problem (:class:`kseg.ops.logdir.recover.Truncation`)."""
        return f"its .txnindex is corrupt: entry {self.entry} at byte {self.position}: {self.message}"

    def note(self) -> str:
        """A ``lastOffset`` below the base offset over valid batches: what a broker does, nothing lost."""
        return (
            f"{self.path}: entry {self.entry} at byte {self.position}: {self.message}: a broker finds the index "
            f'corrupt on start and recovers the segment ({LOADER}: "Found a corrupted index file"): its batches '
            "are valid, so it rebuilds the segment's indexes and nothing is lost"
        )


def txn_fault(seg: Segment) -> TxnFault | None:
    """The first fault ``TransactionIndex.sanityCheck`` finds in ``seg``'s ``.txnindex`` (module docstring),
    None for none or no file; read as a stream.  Raises :class:`kseg.errors.InputError` (the OS's reason)
    for a file that cannot be read."""
    if seg.txnindex is None:
        return None
    path = files.display(seg.txnindex, store=seg.store)
    aux = open_aux(seg.txnindex, TXN_INDEX, seg.store)
    try:
        txn_sanity_check(aux.pieces(), seg.base_offset, path)
    except TxnVersionError as exc:
        return TxnFault(path, exc.position or 0, exc.message, True)
    except CorruptIndexError as exc:
        return TxnFault(path, exc.position or 0, exc.message, False)
    return None
