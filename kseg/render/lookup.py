"""Output of ``kseg lookup-offset`` and ``kseg lookup-time``: the path taken, then the
batch and record in Kafka's dump format (``--print-data-log``).

Text goes to stdout: one ``Label: ...`` line per step, then the batch line
and the record line exactly as ``kafka-dump-log.sh --print-data-log``
prints them.  ``--format json`` is :mod:`kseg.render.lookup_json` (a lookup
printing text loads no JSON sink).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kseg.format.strings import decode_text
from kseg.ops.lookup.offset import AT_END, BELOW_START, EMPTY, PAST_END, UNREAD
from kseg.render.values import KRaftText, control_text, string_decoder
from kseg.storage.batch import FileBatch

if TYPE_CHECKING:
    from kseg.ops.lookup.offset import OffsetLookup
    from kseg.ops.lookup.time import TimeLookup
    from kseg.render.text import TextSink


def iso(ms: int) -> str:
    """Epoch milliseconds as ISO-8601 UTC (``2024-10-27T03:33:20.100Z``)."""
    import datetime as _dt  # (a time lookup's text only: ~5 M instructions a lookup of an offset need not pay)

    try:
        t = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=ms)
    except OverflowError:
        return "out of range"
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _name(path: str | None) -> str:
    return os.path.basename(path) if path else "-"


def record_texts(batch, rec, key_decoder, value_decoder, kraft_text: KRaftText | None = None) -> tuple:
    """(control text, key text, payload text) as ``--print-data-log`` prints them."""
    if batch.magic >= 2 and batch.is_control:  # control records never print a key or payload
        return control_text(batch, rec.key, rec.value, kraft_text), None, None
    key, value, headers = rec.key, rec.value, getattr(rec, "headers", ())
    return (
        None,
        None if key is None else decode_text(key_decoder, key, headers),
        None if value is None else decode_text(value_decoder, value, headers),
    )


def batch_and_record_text(
    sink: TextSink,
    batch,
    rec,
    key_decoder=string_decoder,
    value_decoder=string_decoder,
    kraft_text: KRaftText | None = None,
) -> None:
    sink.batch(batch, batch.position)
    extra, key_text, payload_text = record_texts(batch, rec, key_decoder, value_decoder, kraft_text)
    if batch.magic < 2:
        sink.legacy_record(batch, rec, key_text, payload_text)
    else:
        sink.record(batch, rec, extra, key_text, payload_text)


# -- offset lookups -------------------------------------------------------------------------------
def offset_reason(r: OffsetLookup) -> str | None:
    """The one-line reason when no record is returned."""
    if r.status == EMPTY:
        return "the partition has no segments"
    if r.status == BELOW_START:
        return (
            f"offset {r.target} is below the log start offset {r.log_start}{_start_source(r)}: "
            "Kafka's fetch answers OFFSET_OUT_OF_RANGE"
        )
    if r.status == AT_END:
        return f"offset {r.target} is the log end offset: no record there yet (the next offset to be written)"
    if r.status == UNREAD:
        return f"offset {r.target} is not known: {r.unread}"
    if r.status == PAST_END:
        if r.target >= r.log_end:
            return f"offset {r.target} is past the log end offset {r.log_end}"
        return f"no record at or after offset {r.target} (every batch after it ends below it)"
    return None


def offset_path_lines(r: OffsetLookup) -> list[str]:
    lines = []
    for n, step in enumerate(r.steps):
        seg = step.segment
        if n == 0:
            lines.append(
                f"Segment: {seg.stem}.log, the largest base offset <= {r.target}; "
                f"relative offset {r.target} - {seg.base_offset} = {r.target - seg.base_offset}"
            )
        else:
            lines.append(
                f"Segment: {seg.stem}.log, the next segment (Kafka's read moves on); "
                f"offset {r.target} is below its base offset"
            )
        lines.append("Index: " + index_text(step.index, r.target))
        scan = step.scan
        if scan is None:
            continue
        if step.outcome == "found":
            lines.append(
                f"Scan: from position {scan.start}, {scan.batches} batch{'es' if scan.batches != 1 else ''}, "
                f"{scan.bytes} bytes read ({scan.skipped_bytes} bytes before the batch)"
            )
        else:
            lines.append(
                f"Scan: from position {scan.start}, {scan.batches} batches, {scan.bytes} bytes read: "
                f"no batch holds an offset >= {r.target}"
            )
    return lines


def index_text(ix, target: int) -> str:
    """The ``.index`` step: the entry ``OffsetIndex.lookup(target)`` returned."""
    if ix.path is None:
        return (
            f"no usable {ix.base_offset:020d}.index; Kafka would start at the base offset {ix.base_offset}, position 0"
        )
    head = f"{_name(ix.path)} ({ix.entries} entr{'ies' if ix.entries != 1 else 'y'}): "
    if ix.slot < 0:
        return head + (
            f"no entry <= {target}; Kafka starts at the base offset {ix.base_offset} (relative offset 0), position 0"
        )
    return head + (
        f"entry #{ix.slot}, relative offset {ix.relative_offset} (offset {ix.offset}), "
        f"position {ix.position}: the largest entry <= {target}"
    )


def batch_desc(batch) -> str:
    """``batch 260-279``; a legacy entry is named by its offset (a wrapper's is its last inner offset)."""
    if batch.magic >= 2:
        return f"batch {batch.base_offset}-{batch.last_offset}"
    if batch.codec:
        return f"the v{batch.magic} wrapper message with offset {batch.last_offset}"
    return f"the v{batch.magic} message"


def found_line(target: int, record_offset: int, batch, seg_name: str) -> str:
    where = f"{batch_desc(batch)} at position {batch.position} of {seg_name}.log"
    if record_offset == target:
        return f"Found: offset {target} in {where}"
    return (
        f"Found: offset {target} is not in the log (compacted away or never written); "
        f"the next record is offset {record_offset}, in {where}"
    )


def _write_head(sink: TextSink, what: str, r: OffsetLookup | TimeLookup, path: list[str]) -> None:
    """A lookup's first line (what was looked up, where, the partition's offsets) and its path lines."""
    sink.write(
        f"Lookup of {what}: {r.segments} segment{'s' if r.segments != 1 else ''}, "
        f"log start offset {r.log_start}{_start_source(r)}, log end offset {r.log_end}\n"
    )
    for line in path:
        sink.write(line + "\n")


def _start_source(r: OffsetLookup | TimeLookup) -> str:
    """`` (from <log-start-offset-checkpoint>)`` when the log start offset came from that file, else nothing
    (the first segment's base offset; a note says why)."""
    return f" (from {r.log_start_file})" if r.log_start_file else ""


def write_offset_text(sink: TextSink, r: OffsetLookup, partition: str, decoders: tuple) -> None:
    _write_head(sink, f"offset {r.target} in {partition}", r, offset_path_lines(r))
    seg = r.segment
    if r.record is not None and seg is not None:  # a record found has its segment
        sink.write(found_line(r.target, r.record.offset, r.batch, seg.stem) + "\n")
        batch_and_record_text(sink, r.batch, r.record, *decoders)


# -- time lookups -----------------------------------------------------------------------------------
def source_text(largest) -> str:
    return "from its time index" if largest.source == "time index" else "by scanning its batches"


def time_reason(r: TimeLookup) -> str | None:
    if r.found:
        return None
    if r.status == "empty":
        return "the partition has no segments"
    if r.status == UNREAD and r.chosen is not None:
        return f"no answer for {r.target}: {r.unread}"
    if r.target == -3:
        return "no record holds the largest timestamp (magic 0 records have no timestamps)"
    if r.chosen is None:
        return f"no segment has a timestamp >= {r.target} ({iso(r.target)}): Kafka answers offset -1"
    return (
        f"no record of {r.chosen.segment.stem}.log at or after the indexed position has a timestamp >= "
        f"{r.target}"
        + (
            f" at or above the log start offset {r.log_start}{_start_source(r)}"
            if r.log_start > r.chosen.segment.base_offset
            else ""
        )
        + ": Kafka answers offset -1 (it searches only the first segment whose largest timestamp is >= the target)"
    )


def time_path_lines(r: TimeLookup) -> list[str]:
    lines = []
    if r.special in ("earliest", "latest"):
        what = "log start" if r.special == "earliest" else "log end"
        const = -2 if r.special == "earliest" else -1
        lines.append(
            f"Answer: {r.special} (ListOffsets timestamp {const}) is the {what} offset {r.offset}, with no timestamp"
        )
        if r.by_offset is not None:
            lines.extend(offset_path_lines(r.by_offset))
        elif r.special == "latest":
            lines.append("Record: none at the log end offset (the next offset to be written)")
        return lines
    if r.special == "max-timestamp":
        c = r.chosen
        if c is not None:
            lines.append(
                f"Segment: {c.segment.stem}.log, the first with the largest timestamp {c.timestamp} "
                f"({iso(c.timestamp)}, {source_text(c)}), at offset {c.offset}"
            )
    else:
        if r.skipped:
            by_index = sum(1 for s in r.skipped if s.source == "time index")
            last = r.skipped[-1]
            lines.append(
                f"Skipped: {len(r.skipped)} segment{'s' if len(r.skipped) != 1 else ''} whose largest "
                f"timestamp < {r.target} ({by_index} from the time index, {len(r.skipped) - by_index} by "
                f"scanning batches); the last, {last.segment.stem}.log, has {last.timestamp}"
            )
        c = r.chosen
        if c is None:
            return lines
        lines.append(
            f"Segment: {c.segment.stem}.log, the first whose largest timestamp {c.timestamp} "
            f"({source_text(c)}) >= {r.target}"
        )
        seg = c.segment
        if r.time_entry is not None:
            if r.time_slot >= 0:
                lines.append(
                    f"Time index: {seg.stem}.timeindex: entry #{r.time_slot}, timestamp {r.time_entry.timestamp}, "
                    f"offset {r.time_entry.offset}: the largest entry <= {r.target}"
                )
            else:
                lines.append(
                    f"Time index: {seg.stem}.timeindex: no entry <= {r.target}; Kafka uses the base "
                    f"offset {seg.base_offset}"
                )
    if r.index is not None:
        lines.append("Index: " + index_text(r.index, r.index.target))
    if r.scan is not None:
        rule = (
            "the batch whose max timestamp equals it"
            if r.special == "max-timestamp"
            else f"the first batch with max timestamp >= {r.target}"
        )
        s = r.scan
        lines.append(
            f"Scan: from position {s.start}, {s.batches} batch{'es' if s.batches != 1 else ''}, "
            f"{s.bytes} bytes read to {rule}"
        )
    return lines


def write_time_text(sink: TextSink, r: TimeLookup, partition: str, decoders: tuple) -> None:
    target = r.special or f"{r.target} ({iso(r.target)})"
    _write_head(sink, f"timestamp {target} in {partition}", r, time_path_lines(r))
    b = r.batch
    if r.record is not None and isinstance(b, FileBatch):  # a record found has its batch (a live view)
        where = f"{batch_desc(b)} at position {b.position}"
        by_offset = r.by_offset.segment if r.by_offset is not None else None
        if r.special in ("earliest",) and by_offset is not None and r.offset is not None:
            sink.write(found_line(r.offset, r.record.offset, b, by_offset.stem) + "\n")
        elif r.special == "max-timestamp":
            sink.write(
                f"Found: offset {r.offset}, timestamp {r.timestamp} ({iso(r.timestamp)}), the first record "
                f"holding it in {where}\n"
            )
        else:
            sink.write(
                f"Found: offset {r.offset}, timestamp {r.timestamp} ({iso(r.timestamp)}), the first record "
                f"with timestamp >= {r.target} in {where}\n"
            )
        batch_and_record_text(sink, b, r.record, *decoders)
