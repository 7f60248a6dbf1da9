"""Verification of one segment: its log, offset index, time index and transaction index.

One streaming pass over the ``.log`` checks CRCs, framing and offset order
and records the batches the indexes ask about (:class:`LogScan`: memory
follows the index entries, not the batches).  The indexes are then checked
against those without reading the log again (a log whose offsets do not
increase is read a second time, recording every batch).

The index checks are in :mod:`kseg.ops.verify.index` (the lookup rule
by default, Kafka's ``--verify-index-only`` rule with ``strict``, and the
healthy files each Kafka version wrote that only the first accepts; see
``docs/verify-index.md``).  Here: Kafka's ``--index-sanity-check``
(``OffsetIndex``/``TimeIndex.sanityCheck``) through the index loader, the
log's own checks, the transaction index and segment overlap.
"""

from __future__ import annotations

import os

from kseg.errors import CorruptIndexError, InputError
from kseg.format.indexes import TXN_ENTRY, iter_aborted_txns
from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE
from kseg.ops.verify.index import read_indexes
from kseg.ops.verify.keys import index_keys
from kseg.ops.verify.log import scan_log
from kseg.ops.verify.offset_index import check_offset_index
from kseg.ops.verify.result import SegmentResult
from kseg.ops.verify.time_index import check_time_index
from kseg.storage import files, records
from kseg.storage.leader_epochs import EpochCheck
from kseg.storage.partition import OpenSegment, Segment


def verify_segment(
    partition: str,
    seg: Segment,
    *,
    strict: bool = False,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    epochs: EpochCheck | None = None,
) -> SegmentResult:
    """Verify one segment; never raises for bad data (problems are collected).  ``epochs``: the
    partition's leader-epoch check, fed this segment's batches (:mod:`kseg.ops.verify.epochs`)."""
    path = seg.log or seg.index or seg.timeindex or seg.txnindex or ""
    res = SegmentResult(partition, seg.name, seg.base_offset, path, names=seg.store.names)
    if seg.log is None:
        for idx in (seg.index, seg.timeindex, seg.txnindex):
            if idx:
                res.problem(
                    "missing-log",
                    idx,
                    "index file without its .log segment",
                    expected=files.stem(idx) + files.LOG,
                    found="nothing",
                )
        return res
    opened = seg.open(records.open_for_read)  # its indexes, its .log and the .log's identity: one call to its store
    try:  # a large index is read in windows while it is checked: its file stays open until then
        return _verify_opened(res, seg, opened, strict, max_message_size, epochs)
    finally:
        opened.close()


def _verify_opened(
    res: SegmentResult,
    seg: Segment,
    opened: OpenSegment,
    strict: bool,
    max_message_size: int,
    epochs: EpochCheck | None,
) -> SegmentResult:
    assert seg.log is not None  # verify_segment returned early for a segment without its .log
    indexes = read_indexes(seg, opened)
    # taken before the read: a write while it is read changes it; a .log that cannot be read says why below
    res.identity = opened.identity if isinstance(opened.identity, str) else None
    try:
        scan = scan_log(res, seg.log, index_keys(indexes), max_message_size, epochs, store=seg.store, opened=opened.log)
    except InputError as exc:  # an I/O error: a failed segment (exit 2), no index problem derived from it
        res.failed = exc.describe()
        return res
    _check_missing_indexes(res, seg, strict)
    if seg.index:
        check_offset_index(res, seg, scan, strict, indexes.offsets)
    if seg.timeindex:
        check_time_index(res, seg, scan, strict, indexes.times)
    if seg.txnindex:
        _check_txn_index(res, seg, seg.txnindex)
    return res


def older_writer_rules(partition: str, seg: Segment) -> dict[str, list[str] | None]:
    """For the ``.index`` and ``.timeindex`` of ``seg``: the older writer rules it follows (note texts),
    or None when the lookup rule finds a problem in it (``rebuild-index --check``).
    Raises :class:`InputError` when the log cannot be read."""
    out: dict[str, list[str] | None] = {}
    if not seg.log:
        return out
    res = SegmentResult(partition, seg.name, seg.base_offset, seg.log, names=seg.store.names)
    indexes = read_indexes(seg)
    scan = scan_log(res, seg.log, index_keys(indexes), store=seg.store)
    if seg.index:
        out[seg.index] = _unless_problems(res, seg.index, check_offset_index(res, seg, scan, False, indexes.offsets))
    if seg.timeindex:
        out[seg.timeindex] = _unless_problems(
            res, seg.timeindex, check_time_index(res, seg, scan, False, indexes.times)
        )
        if (
            seg.index and out[seg.index] and out[seg.timeindex] == []
        ):  # clean, entries chosen per append as the .index's
            out[seg.timeindex] = [
                f"{seg.timeindex}: entries chosen once per append, as brokers before KAFKA-806 "
                "chose them (see the .index); lookups work"
            ]
    return out


def _unless_problems(res: SegmentResult, path: str, rules: list[str]) -> list[str] | None:
    """``rules``, or None when ``res`` holds a problem of the file at ``path``."""
    return None if any(p.file == path for p in res.problems) else rules


#: A ``.log`` without an index of its own: what Kafka's ``LogLoader`` does with it on start.
MISSING_INDEXES = (
    ("index", files.INDEX, "Kafka rebuilds it on start (LogLoader recovers the segment)"),
    ("timeindex", files.TIME_INDEX, "Kafka creates it empty on start (LogSegment.sanityCheck)"),
)


def _check_missing_indexes(res: SegmentResult, seg: Segment, strict: bool) -> None:
    """A ``.log`` without its ``.index`` or ``.timeindex``: a note (the log reads; a copy or backup
    without them is incomplete), a ``missing-index`` problem with ``strict``."""
    for attr, suffix, kafka in MISSING_INDEXES:
        if getattr(seg, attr):
            continue
        expected = files.stem(seg.log or "") + suffix
        what = f"no {suffix} beside the .log ({kafka}); a copy without it is incomplete"
        if strict:
            res.problem("missing-index", expected, what, expected=expected, found="nothing")
        else:
            res.notes.append(f"{expected}: {what}")


def _check_txn_index(res: SegmentResult, seg: Segment, path: str) -> None:
    try:
        data = files.read_small_file(path, store=seg.store)
    except InputError as exc:
        res.fail(exc.describe())
        return
    if len(data) % TXN_ENTRY.size:
        res.problem(
            "index-length",
            path,
            "file length is not a multiple of the entry size",
            expected=f"a multiple of {TXN_ENTRY.size}",
            found=str(len(data)),
        )
    try:
        for i, (_, _, first, last, _) in enumerate(iter_aborted_txns(data)):
            if first > last:
                res.entry_problem(
                    "txnindex-range", path, "first offset after last offset", i, TXN_ENTRY.size, f"<= {last}", first
                )
            if res.last_offset is not None and not seg.base_offset <= last <= res.last_offset:
                res.entry_problem(
                    "txnindex-range",
                    path,
                    "aborted transaction's last offset (its marker) is outside the segment",
                    i,
                    TXN_ENTRY.size,
                    f"{seg.base_offset}..{res.last_offset}",
                    last,
                )
    except CorruptIndexError as exc:
        res.problem("txnindex-version", path, exc.message, position=exc.position)


def check_overlap(prev: SegmentResult, cur: SegmentResult) -> None:
    """Consecutive segments must not overlap: the next base offset is after this one's last offset."""
    if prev.last_offset is not None and cur.base_offset <= prev.last_offset:
        cur.problem(
            "segment-overlap",
            cur.path,
            "segment overlaps the previous one",
            expected=f"base offset > {prev.last_offset} (last offset of {os.path.basename(prev.path)})",
            found=str(cur.base_offset),
        )
