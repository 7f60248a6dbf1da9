"""The ``.txnindex`` audit of ``kseg txn``: each segment's file against the markers in its log.

A ``.txnindex`` (``TransactionIndex``) holds one 34-byte ``AbortedTxn`` per
aborted transaction whose ABORT marker lies in the segment
(``LogSegment.updateTxnIndex``): version int16 (0), producerId int64,
firstOffset int64, lastOffset int64 (the marker's offset), lastStableOffset
int64, in marker order.  A missing entry makes ``read_committed`` consumers
deliver aborted records as committed (KAFKA-13727); a missing file is an
empty index (Kafka creates it lazily).  Entries are matched by lastOffset:

* ``txnindex_missing``: an aborted transaction the log has and the file lacks;
* ``txnindex_wrong``: an entry for the right marker with another producer id,
  first offset or last stable offset;
* ``txnindex_extra``: an entry no ABORT marker of this segment accounts for;
* ``txnindex_corrupt``: a size that is not a multiple of 34, or a version
  other than 0 (``TransactionIndex.sanityCheck`` / ``AbortedTxn.version``).
"""

from __future__ import annotations

from typing import NamedTuple

from kseg.errors import CorruptIndexError
from kseg.format.indexes import TXN_ENTRY, iter_aborted_txns
from kseg.storage import files
from kseg.storage.partition import Segment


class TxnProblem(NamedTuple):
    """One finding of ``kseg txn``: ``kind`` (see the module docstring and :mod:`kseg.ops.txn.txn`),
    the file, the segment name (or None), a message, and where known the byte position, the index
    entry number, the expected and found values, and a command that resolves it."""

    kind: str
    file: str
    segment: str | None
    message: str
    position: int | None = None
    entry: int | None = None
    expected: str | None = None
    found: str | None = None
    command: str | None = None


def _show(entry: tuple[int, int, int, int]) -> str:
    pid, first, last, lso = entry
    return f"producerId {pid} firstOffset {first} lastOffset {last} lastStableOffset {lso}"


def audit_txnindex(seg: Segment, expected: list[tuple[int, int, int, int]]) -> list[TxnProblem]:
    """Compare ``seg``'s ``.txnindex`` with ``expected`` (producerId, firstOffset, lastOffset,
    lastStableOffset) entries from its ABORT markers.  Raises :class:`kseg.errors.InputError`
    when the file exists but cannot be read."""
    path = seg.txnindex or files.sibling(seg.log or seg.name, files.TXN_INDEX, store=seg.store)
    shown = files.display(path, store=seg.store)
    problems: list[TxnProblem] = []
    found: list[tuple[int, int, int, int]] = []
    if seg.txnindex is not None:
        data = files.read_small_file(seg.txnindex, store=seg.store)
        if len(data) % TXN_ENTRY.size:
            problems.append(
                TxnProblem(
                    "txnindex_corrupt",
                    shown,
                    seg.name,
                    f"size {len(data)} is not a multiple of {TXN_ENTRY.size} "
                    "(TransactionIndex.sanityCheck fails); rebuild-index writes the right file",
                    position=len(data) - len(data) % TXN_ENTRY.size,
                )
            )
        try:
            found = [(pid, first, last, lso) for _, pid, first, last, lso in iter_aborted_txns(data)]
        except CorruptIndexError as exc:
            problems.append(TxnProblem("txnindex_corrupt", shown, seg.name, exc.message, position=exc.position))
            return problems
    by_last = {e[2]: (n, e) for n, e in enumerate(found)}
    for want in expected:
        hit = by_last.pop(want[2], None)
        if hit is None:
            problems.append(
                TxnProblem(
                    "txnindex_missing",
                    shown,
                    seg.name,
                    f"aborted transaction of producer {want[0]} (offsets {want[1]}..{want[2]}) is not in the index: "
                    "read_committed consumers would see its records as committed; rebuild-index writes the right file",
                    expected=_show(want),
                    found=None if seg.txnindex else "no .txnindex file",
                )
            )
        elif hit[1] != want:
            n, entry = hit
            problems.append(
                TxnProblem(
                    "txnindex_wrong",
                    shown,
                    seg.name,
                    f"entry {n} for the ABORT marker at offset {want[2]} differs from the log; "
                    "rebuild-index writes the right file",
                    position=n * TXN_ENTRY.size,
                    entry=n,
                    expected=_show(want),
                    found=_show(entry),
                )
            )
    for n, entry in sorted(by_last.values()):
        problems.append(
            TxnProblem(
                "txnindex_extra",
                shown,
                seg.name,
                f"entry {n} names no ABORT marker of this segment (none at offset {entry[2]} completing a transaction)",
                position=n * TXN_ENTRY.size,
                entry=n,
                expected=None,
                found=_show(entry),
            )
        )
    return problems
