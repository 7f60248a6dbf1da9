"""One segment read past its damage: every whole batch whose CRC holds, and the byte ranges between them.

The log is read as Kafka's recovery reads it (``FileRecords.scan``: ``FileLogInputStream.nextBatch``'s
framing, ``RecordBatch.ensureValid``'s CRC -- CRC-32C of a v2 batch, CRC-32 of a v0/v1 message) until a
batch does not frame or its CRC fails.  From there the bytes are searched for the next position where a
batch is plausible -- its framing and header in range (:func:`_header_fits`), framed by the same rule
(``FileRecords.frame_at``) and its CRC holding (``is_valid``) -- and read on from it.  The batch right
after a batch whose CRC fails (by its own length) is tried first: a flipped byte in a payload costs that
batch and nothing else.

Candidates are found a window at a time: after a v2 batch only positions whose magic byte is 2 (the log's
format never goes back, ``memchr`` over the window); while no batch has been seen, or after v0/v1 ones,
positions whose magic is 0, 1 or 2, runs of zero bytes skipped (a length field of 0 frames nothing).
"""

from __future__ import annotations

import re
import struct
from typing import Iterator, NamedTuple

from kseg import engine
from kseg.errors import CorruptRecordError, KsegError
from kseg.format import legacy, v2
from kseg.format.v2 import (
    ATTRIBUTES,
    BASE_OFFSET,
    CODEC_MASK,
    CONTROL_FLAG,
    COUNT,
    LAST_OFFSET_DELTA,
    LEADER_EPOCH,
    MAGIC,
    PRODUCER_ID,
    TRANSACTIONAL_FLAG,
)
from kseg.format.v2 import CRC as CRC_FIELD
from kseg.limits import INT64_MAX, INT64_MIN
from kseg.storage.batch import FileBatch, LegacyBatch, V2Batch
from kseg.storage.records import LOG_OVERHEAD, MIN_RECORD_SIZE, FileRecords

HEAD = v2.HEADER_SIZE_UP_TO_MAGIC  # 17: offset, length, epoch or crc, magic
_FRAME = struct.Struct(">qiib")
_NONZERO = re.compile(rb"[^\x00]")
_LEGACY_MAGIC = re.compile(rb"[\x00-\x02]")
MAX_CODEC = 4  # zstd: CompressionType's largest id
LEGACY_MIN = (legacy.RECORD_OVERHEAD_V0, legacy.RECORD_OVERHEAD_V0 + 8)  # by magic: v1 adds its timestamp


class Found(NamedTuple):
    """A whole batch whose CRC holds, at ``position`` (``size`` bytes with its log overhead)."""

    position: int
    size: int
    magic: int
    base: int  # baseOffset (a v0/v1 entry's offset: a wrapper's is its last inner offset)
    last: int  # lastOffset
    records: int  # v2: recordsCount; v0/v1: 1 (a compressed wrapper's are counted when decoded)
    codec: int
    control: bool
    producer_id: int  # -1: none (v0/v1, or a v2 batch without a producer)
    transactional: bool
    crc: int
    epoch: int  # partitionLeaderEpoch (v0/v1: -1)
    h: tuple | None = None  # a v2 batch's header (``v2.HEADER``'s fields), which recovery's rule reads


class Damage(NamedTuple):
    """Bytes ``[start, end)`` holding no whole valid batch; ``why``: what was found at ``start``."""

    start: int
    end: int
    why: str


def found_v2(position: int, size: int, h: tuple) -> Found:
    """A :class:`Found` from a v2 header tuple (``FileRecords.scan``'s): one a batch of an intact log, so
    built without ``Found``'s Python-level constructor."""
    attrs, base = h[ATTRIBUTES], h[BASE_OFFSET]
    last = base + h[LAST_OFFSET_DELTA]
    if not INT64_MIN <= last <= INT64_MAX:
        last = v2.last_offset(base, h[LAST_OFFSET_DELTA])
    return _new_tuple(
        Found,
        (
            position,
            size,
            h[MAGIC],
            base,
            last,
            h[COUNT],
            attrs & CODEC_MASK,
            bool(attrs & CONTROL_FLAG),
            h[PRODUCER_ID],
            bool(attrs & TRANSACTIONAL_FLAG),
            h[CRC_FIELD],
            h[LEADER_EPOCH],
            h,
        ),
    )


_new_tuple = tuple.__new__


def found_of(batch: FileBatch) -> Found:
    """A :class:`Found` from a batch object (its CRC already checked)."""
    if isinstance(batch, V2Batch):
        return found_v2(batch.position, batch.size, batch.h)
    assert isinstance(batch, LegacyBatch)
    return Found(
        batch.position,
        batch.size,
        batch.magic,
        batch.offset,
        batch.offset,
        1,
        batch.codec,
        False,
        -1,
        False,
        batch.crc,
        -1,
    )


def read_segment(records: FileRecords) -> Iterator[list[Found] | Damage]:
    """Every valid batch of ``records`` and every damaged range between them, in file order: the batches in
    runs, each a list of batches that follow each other in the file (one window's, at most).  An I/O error
    (:class:`~kseg.errors.InputError`) passes through: a verdict only for what was read."""
    pos, end = 0, records.end
    found_items = None if engine.C is None else engine.C.found_items
    legacy_seen: bool | None = None  # None: no batch yet
    while pos < end:
        stop: Damage | None = None
        after: int | None = None  # the position right after an invalid batch, by its own length
        scan = records.scan(pos)
        try:
            for items in scan:
                run: list[Found] = []
                k = 0 if found_items is None else found_items(items, 0, Found, run)  # the engine's found_v2
                if k:
                    pos = items[k - 1][0] + items[k - 1][1]
                for position, size, h, item in items[k:] if k else items:
                    if h is not None:
                        if not item:
                            stop, after = Damage(position, end, _crc_why(h[CRC_FIELD])), position + size
                            break
                        run.append(found_v2(position, size, h))
                    else:
                        if not _valid(item):
                            stop, after = Damage(position, end, _invalid_why(item)), position + size
                            break
                        run.append(found_of(item))
                    pos = position + size
                if run:
                    legacy_seen = run[-1].magic < 2
                    yield run
                if stop is not None:
                    break
        except CorruptRecordError as exc:
            stop = Damage(exc.position if exc.position is not None else pos, end, exc.message)
        finally:
            getattr(scan, "close", lambda: None)()  # the generator's window stays with the reader
        if stop is None:
            if pos >= end:
                return
            stop = Damage(pos, end, _why_not_framed(records, pos, end))
        nxt = _next_batch(records, stop.start, after, legacy_seen)
        if nxt is None:
            yield stop
            return
        yield stop._replace(end=nxt.position)
        legacy_seen = nxt.magic < 2
        yield [nxt]
        pos = nxt.position + nxt.size


def _valid(batch: FileBatch) -> bool:
    return not (batch.magic >= 2 and batch.size < v2.HEADER_SIZE) and batch.is_valid()


def _crc_why(stored: int) -> str:
    return f"a batch whose CRC does not hold (stored {stored})"


def _invalid_why(batch: FileBatch) -> str:
    if batch.magic >= 2 and batch.size < v2.HEADER_SIZE:
        return f"a batch of {batch.size} bytes, smaller than a v2 header ({v2.HEADER_SIZE})"
    return _crc_why(batch.checksum) if isinstance(batch, (V2Batch, LegacyBatch)) else "an invalid batch"


def _why_not_framed(records: FileRecords, pos: int, end: int) -> str:
    """Why iteration stopped at ``pos`` short of the end (``nextBatch`` returned null)."""
    if end - pos <= HEAD:
        return f"{end - pos} bytes, too few for a batch header ({HEAD + 1})"
    buf, i = records.window(pos, HEAD)
    _, length, _, _ = _FRAME.unpack_from(buf, i)
    return (
        f"a partial batch: its length of {length} runs past the end of the file ({end - pos - LOG_OVERHEAD} bytes left)"
    )


def _next_batch(records: FileRecords, start: int, after: int | None, legacy_seen: bool | None) -> Found | None:
    """The first valid batch past ``start``: at ``after`` if one is there, else the first plausible position."""
    if after is not None and after < records.end:
        found = _try(records, after)
        if found is not None:
            return found
    return _search(records, start + 1, legacy_seen)


def _search(records: FileRecords, start: int, legacy_seen: bool | None) -> Found | None:
    """Scan forward from ``start`` a window at a time for a position holding a valid batch."""
    end = records.end
    w = start
    step = records.window_size
    while w <= end - HEAD - 1:
        n = min(step, end - w)
        buf, i = records.window(w, n)
        chunk = bytes(buf[i : i + n])  # a copy: candidates are checked through the reader, which may move
        for q in _candidates(chunk, w, legacy_seen is not False):
            if q < start:
                continue
            if q + HEAD > w + n:
                break
            if not _header_fits(chunk, q - w, q, end):
                continue
            found = _try(records, q)
            if found is not None:
                return found
        if w + n >= end:
            return None
        w += n - v2.HEADER_SIZE  # overlap: a header cut by the window's end is seen whole in the next
    return None


def _candidates(chunk: bytes, base: int, any_magic: bool) -> Iterator[int]:
    """File positions (``base`` + index) whose magic byte (at +16) may start a batch, in order."""
    magic_at = HEAD - 1
    if not any_magic:
        j = chunk.find(b"\x02", magic_at)
        while j >= 0:
            yield base + j - magic_at
            j = chunk.find(b"\x02", j + 1)
        return
    j = magic_at
    size = len(chunk)
    while j < size:
        m = _LEGACY_MAGIC.search(chunk, j)
        if m is None:
            return
        j = m.start()
        q = j - magic_at
        if chunk[q + LOG_OVERHEAD - 4 : q + LOG_OVERHEAD] == b"\x00\x00\x00\x00":  # a length of 0: skip zeros
            z = _NONZERO.search(chunk, q + 8)
            if z is None:
                return
            j = max(j + 1, z.start() - 11 + magic_at)  # a length field must reach a non-zero byte
            continue
        yield base + q
        j += 1


def _header_fits(chunk: bytes, i: int, position: int, end: int) -> bool:
    """The framing fields at ``chunk[i:]`` in range (offset, length, magic; a v2 header's counts and codec):
    cheap checks before the CRC is computed."""
    offset, length, _, magic = _FRAME.unpack_from(chunk, i)
    if offset < 0 or length < MIN_RECORD_SIZE or position + LOG_OVERHEAD + length > end or not 0 <= magic <= 2:
        return False
    if magic < 2:
        if length < LEGACY_MIN[magic] or i + legacy.ENTRY_SIZE > len(chunk):
            return length >= LEGACY_MIN[magic]
        return chunk[i + legacy.ENTRY_SIZE - 1] & CODEC_MASK <= MAX_CODEC
    if length < v2.HEADER_SIZE - LOG_OVERHEAD:
        return False
    if i + v2.HEADER_SIZE > len(chunk):
        return True  # checked whole by the reader
    h = v2.HEADER.unpack_from(chunk, i)
    return h[LAST_OFFSET_DELTA] >= 0 and h[COUNT] >= 0 and h[ATTRIBUTES] & CODEC_MASK <= MAX_CODEC


def _try(records: FileRecords, position: int) -> Found | None:
    """The batch at ``position`` if it frames (``frame_at``), fits and its CRC holds, else None."""
    end = records.end
    if position > end - HEAD - 1:
        return None
    n = min(v2.HEADER_SIZE, end - position)
    buf, i = records.window(position, n)
    if not _header_fits(bytes(buf[i : i + n]), 0, position, end):
        return None
    try:
        batch = records.frame_at(position, end)
    except KsegError:
        return None
    if batch is None or not _valid(batch):
        return None
    return found_of(batch)
