"""The records of a magic v2 batch (``DefaultRecord``), decoded a chunk at a time.

Record (all varints zig-zag)::

    length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
    keyLength varint (-1 null), key, valueLength varint (-1 null), value,
    headerCount varint, headers: [keyLength varint, key utf8, valueLength varint (-1 null), value]

The batch around them (its 61-byte header, attributes, sequences): :mod:`kseg.format.v2`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple, Union

from kseg import engine
from kseg.errors import CorruptRecordError
from kseg.format import legacy, v2, varint
from kseg.format.v2 import NO_SEQUENCE, java_long
from kseg.format.varint import read_varint, read_varlong
from kseg.limits import INT32_MAX, INT64_MAX, INT64_MIN

if TYPE_CHECKING:
    from typing_extensions import Buffer

#: A record header as ``DefaultRecord.readHeaders`` reads it: its key's bytes and its value's (None: null).
Header = tuple[bytes, Union[bytes, None]]
#: A record's key or value as :func:`decode_records` hands it out: in the form asked for (:data:`SLICES`,
#: :data:`SIZES` or :data:`SPANS`), a slice of the buffer (``memoryview``), a size or a span (``int``), and
#: None for a null one.  ``Any``: the form is a run-time argument, so which of those a caller holds is
#: known to it, not to a type checker (the formatters take slices, sizes or spans by name).
Field = Any
#: A record as :func:`decode_records` hands it out, in :class:`Record`'s order: offset, timestamp,
#: sequence, key, value, headers.
RawRecord = tuple[int, int, int, Field, Field, tuple[Header, ...]]
#: :func:`decode_records`'s answer: the records, where decoding stopped, how many were read, the error.
Decoded = tuple[list[RawRecord], int, int, Union[CorruptRecordError, None]]
#: :func:`decode_chunk`'s answer: :data:`Decoded` and whether the offsets run in steps of one.
DecodedChunk = tuple[list[RawRecord], int, int, Union[CorruptRecordError, None], bool]


class Record(NamedTuple):
    """One v2 record (``DefaultRecord``) as :meth:`kseg.storage.batch.V2Batch.records` hands it out.

    ``key``/``value`` are slices of the batch's bytes or ``None`` (null);
    ``headers`` a tuple of ``(key bytes, value bytes or None)``.  The chunked
    hot path (:func:`decode_records`) hands out plain tuples in this order:
    naming each record there would cost ~70 ns, 5 % of a deep dump.
    """

    offset: int
    timestamp: int
    sequence: int
    key: bytes | memoryview | None  # a slice of the batch's bytes, or bytes of its own once detached
    value: bytes | memoryview | None
    headers: tuple[Header, ...]


# What decode_records hands out as a record's key and value (``form``): slices of the buffer (None for
# null, what decoders receive); their sizes (-1 for null, all --deep-iteration prints); or spans, the int
# ``position << 32 | size`` in the buffer (None for null), for a formatter that reads them from the buffer
# itself (--print-data-log with Kafka's string decoders: no slice object a key or value).
SLICES, SIZES, SPANS = 0, 1, 2

#: What a sink's ``window_lines`` writes per batch: the batch line alone (shallow), with the record lines of
#: key and value sizes (``--deep-iteration``), or of key and value printed by Kafka's string decoders
#: (``--print-data-log``).  The compiled engine's ``WINDOW_*`` (checked by ``kseg.render.window``;
#: here, not in the dump, so that a text sink loads no dump).
WINDOW_SHALLOW, WINDOW_SIZES, WINDOW_STRINGS = 0, 1, 2


def span_slice(mv: memoryview, span: int | None) -> memoryview | None:
    """The slice of ``mv`` a span (``position << 32 | size``) covers, None for null."""
    if span is None:
        return None
    at = span >> 32
    return mv[at : at + (span & 0xFFFFFFFF)]


CHUNK = 512  # records decoded per call by iter_records (bounds memory for huge uncompressed batches)


def iter_records(
    buf: Buffer,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
) -> Iterator[RawRecord]:
    """Yield the records of a v2 batch from ``buf[pos:end]``.

    Each record is a tuple ``(offset, timestamp, sequence, key, value,
    headers)`` where key/value are memoryview slices or ``None`` and headers
    a tuple of ``(key_bytes, value_bytes_or_None)``.  With LogAppendTime every
    record reports ``log_append_time`` (``DefaultRecordBatch.RecordIterator``).

    As Kafka's ``RecordIterator``, the check that nothing remains after the
    last record happens before that record is handed out; every record
    before a corrupt one is handed out first.
    """
    read = 0
    while True:
        records, pos, read, error = decode_records(
            buf, pos, end, count, read, CHUNK, base_offset, base_timestamp, base_sequence, log_append_time
        )
        yield from records
        if error is not None:
            raise error
        if read >= count:
            return


# The seam's signature, the C engine's ``decode_records``, is written four times on purpose: the entry
# point (decode_records), the chunk form (decode_chunk), and each of those in pure Python
# (decode_records_py, decode_chunk_py), which the Python engine takes without a wrapper.
def decode_records(
    buf: Buffer,
    pos: int,
    end: int,
    count: int,
    read: int,
    max_records: int,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
    form: int = SLICES,
) -> Decoded:
    """Decode up to ``max_records`` records of a v2 batch (``DefaultRecord.readFrom``).

    ``read`` records of ``count`` were decoded before ``pos``.  Returns
    ``(records, pos, read, error)``: the records decoded (tuples as
    :func:`iter_records` yields them; with ``form`` :data:`SIZES` key and
    value are their lengths, -1 for null, with :data:`SPANS` their spans in
    ``buf``, instead of slices), where decoding stopped, and the
    :class:`CorruptRecordError` that stopped it, if any -- the records before
    a corrupt one are returned with it so a caller can hand them out first.

    With the compiled engine (:mod:`kseg.engine`) well-formed records are
    decoded in C; at the first record it does not accept (any bound
    exceeded, a varint too long, an overflow) the rule below continues from
    that record's start, so errors and their positions are this rule's.
    """
    records, pos2, read2, error, _ = decode_chunk(
        buf, pos, end, count, read, max_records, base_offset, base_timestamp, base_sequence, log_append_time, form
    )
    return records, pos2, read2, error


def decode_chunk(  # the seam's signature again: see decode_records
    buf: Buffer,
    pos: int,
    end: int,
    count: int,
    read: int,
    max_records: int,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
    form: int = SLICES,
) -> DecodedChunk:
    """:func:`decode_records`, and whether the records' offsets run in steps of one (each the one
    before it plus one): ``(records, pos, read, error, consecutive)``.  What the dump's continuity rule
    ("Non-consecutive offsets") checks, for a whole chunk at once; the engine tells it as it decodes."""
    records, pos2, read2, complete, consecutive = _c_decode(
        buf, pos, end, count, read, max_records, base_offset, base_timestamp, base_sequence, log_append_time, form
    )
    if complete:
        return records, pos2, read2, None, consecutive
    more, pos2, read2, error = decode_records_py(
        buf,
        pos2,
        end,
        count,
        read2,
        max_records - (read2 - read),
        base_offset,
        base_timestamp,
        base_sequence,
        log_append_time,
        form,
    )
    if more:
        records += more
        consecutive = in_steps(records)
    return records, pos2, read2, error, consecutive


def in_steps(records: list[RawRecord]) -> bool:
    """Whether each record's offset is the one before it plus one (:func:`decode_chunk`'s rule)."""
    n = len(records)
    if n < 2:
        return True
    first = records[0][0]
    return records[-1][0] == first + n - 1 and [r[0] for r in records] == list(range(first, first + n))


def decode_chunk_py(  # the seam's signature again: see decode_records
    buf: Buffer,
    pos: int,
    end: int,
    count: int,
    read: int,
    max_records: int,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
    form: int = SLICES,
) -> DecodedChunk:
    """:func:`decode_chunk` in pure Python."""
    records, pos, read, error = decode_records_py(
        buf, pos, end, count, read, max_records, base_offset, base_timestamp, base_sequence, log_append_time, form
    )
    return records, pos, read, error, in_steps(records)


# The hot loop of deep iteration, one function on purpose (its complexity is the five varints read
# inline): a call per field would cost a fifth of it.
def decode_records_py(  # noqa: C901 - the seam's signature again: see decode_records
    buf: Buffer,
    pos: int,
    end: int,
    count: int,
    read: int,
    max_records: int,
    base_offset: int,
    base_timestamp: int,
    base_sequence: int,
    log_append_time: int | None,
    form: int = SLICES,
) -> Decoded:
    """:func:`decode_records` in pure Python: the rule itself.

    One call per chunk of records, varints of one to three bytes decoded
    inline.  A record's offset is baseOffset + offsetDelta in Java ``long``
    arithmetic (``DefaultRecord.readFrom``): within 2^31 of the int64 bounds
    the offsets are wrapped as Java wraps them.
    """
    records: list[RawRecord] = []
    if count < 0:
        return (
            records,
            pos,
            read,
            CorruptRecordError(
                f"found invalid record count {count} in magic v2 batch", position=v2.RECORDS_COUNT_OFFSET
            ),
        )
    mv = buf if isinstance(buf, memoryview) else memoryview(buf)
    last = len(mv) - 1  # a two-byte varint needs pos < last
    append = records.append
    sequenced = base_sequence >= 0
    log_append = log_append_time is not None
    append_time = log_append_time if log_append_time is not None else 0
    error: CorruptRecordError | None = None
    key: Field
    value: Field
    headers: tuple[Header, ...]
    first, stop = read + 1, min(count, read + max_records) + 1
    for read in range(first, stop):
        record_start = pos
        if pos >= end:
            error = CorruptRecordError(
                f"incorrect declared batch size, premature end of records (record {read} of {count})", position=pos
            )
            break
        # Each varint below is read inline (one to three bytes; read_varint past that): the same
        # ten lines five times on purpose, a function call per field would cost a fifth of deep iteration
        # (three bytes: an offset delta past 8191, a length, key or value of 8 KiB or more).
        # length varint
        b = mv[pos]
        if b < 0x80:
            size = (b >> 1) ^ -(b & 1)
            pos += 1
        elif pos < last and (c := mv[pos + 1]) < 0x80:
            b = (b & 0x7F) | (c << 7)
            size = (b >> 1) ^ -(b & 1)
            pos += 2
        elif pos + 1 < last and (d := mv[pos + 2]) < 0x80:
            b = (b & 0x7F) | ((c & 0x7F) << 7) | (d << 14)
            size = (b >> 1) ^ -(b & 1)
            pos += 3
        else:
            try:
                size, pos = read_varint(mv, pos)
            except CorruptRecordError as exc:
                error = exc
                break
        body_end = pos + size
        if size < 0 or body_end > end:
            error = CorruptRecordError(
                f"invalid record size: expected {size} bytes in record payload, but only {end - pos} remain",
                position=record_start,
            )
            break
        try:
            # attributes (unused), timestamp delta, offset delta
            pos += 1
            b = mv[pos]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos < last and (c := mv[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            elif pos + 1 < last and (d := mv[pos + 2]) < 0x80:
                b = (b & 0x7F) | ((c & 0x7F) << 7) | (d << 14)
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 3
            else:
                ts_delta, pos = read_varlong(mv, pos)
            b = mv[pos]
            if b < 0x80:
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos < last and (c := mv[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 2
            elif pos + 1 < last and (d := mv[pos + 2]) < 0x80:
                b = (b & 0x7F) | ((c & 0x7F) << 7) | (d << 14)
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 3
            else:
                offset_delta, pos = read_varint(mv, pos)
            b = mv[pos]
            if b < 0x80:
                key_size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos < last and (c := mv[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                key_size = (b >> 1) ^ -(b & 1)
                pos += 2
            elif pos + 1 < last and (d := mv[pos + 2]) < 0x80:
                b = (b & 0x7F) | ((c & 0x7F) << 7) | (d << 14)
                key_size = (b >> 1) ^ -(b & 1)
                pos += 3
            else:
                key_size, pos = read_varint(mv, pos)
            if key_size >= 0:
                if pos + key_size > body_end:
                    raise IndexError
                key = mv[pos : pos + key_size] if not form else key_size if form == SIZES else pos << 32 | key_size
                pos += key_size
            else:
                key = -1 if form == SIZES else None
            b = mv[pos]
            if b < 0x80:
                value_size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos < last and (c := mv[pos + 1]) < 0x80:
                b = (b & 0x7F) | (c << 7)
                value_size = (b >> 1) ^ -(b & 1)
                pos += 2
            elif pos + 1 < last and (d := mv[pos + 2]) < 0x80:
                b = (b & 0x7F) | ((c & 0x7F) << 7) | (d << 14)
                value_size = (b >> 1) ^ -(b & 1)
                pos += 3
            else:
                value_size, pos = read_varint(mv, pos)
            if value_size >= 0:
                if pos + value_size > body_end:
                    raise IndexError
                value = (
                    mv[pos : pos + value_size] if not form else value_size if form == SIZES else pos << 32 | value_size
                )
                pos += value_size
            else:
                value = -1 if form == SIZES else None
            b = mv[pos]
            if b == 0:
                headers = ()
                pos += 1
            else:
                if b < 0x80:
                    header_count = (b >> 1) ^ -(b & 1)
                    pos += 1
                else:
                    header_count, pos = read_varint(mv, pos)
                if header_count == 0:
                    headers = ()
                else:
                    headers, pos = _read_headers(mv, pos, body_end, header_count)
        except IndexError:
            error = CorruptRecordError("found invalid record structure", position=record_start)
            break
        except CorruptRecordError as exc:
            error = exc
            break
        if pos != body_end:
            error = CorruptRecordError(
                f"invalid record size: expected to read {size} bytes in record payload, "
                f"but read {pos - (body_end - size)}",
                position=record_start,
            )
            break
        if read == count and pos != end:
            error = CorruptRecordError(
                "incorrect declared batch size, records still remaining after the last record", position=pos
            )
            break
        if sequenced:
            # incrementSequence: past int32 max the sequence wraps to 0
            sequence = base_sequence + offset_delta
            if sequence > INT32_MAX:
                sequence -= 0x80000000
        else:
            sequence = NO_SEQUENCE
        append(
            (
                base_offset + offset_delta,
                append_time if log_append else base_timestamp + ts_delta,
                sequence,
                key,
                value,
                headers,
            )
        )
    if not INT64_MIN + 0x80000000 <= base_offset <= INT64_MAX - 0x80000000:
        records = [(java_long(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in records]
    return records, pos, read, error


#: What the compiled engine shares with these rules, by the names it exports them under: the ``FORM_*``
#: values, the batch layout (each field's offset and its index in the header tuple), the flags and
#: bounds its formatters and decoder apply, and the header tuple's format.  Compared once, before any
#: module takes the engine's functions: a mismatch runs the Python engine (``kseg --version`` says why).
ENGINE_SHARED: dict[str, object] = {
    "FORM_SLICES": SLICES,
    "FORM_SIZES": SIZES,
    "FORM_SPANS": SPANS,
    "LOG_OVERHEAD": legacy.LOG_OVERHEAD,
    "HEADER_SIZE_UP_TO_MAGIC": v2.HEADER_SIZE_UP_TO_MAGIC,
    "RECORD_OVERHEAD_V0": legacy.RECORD_OVERHEAD_V0,
    "BASE_OFFSET_OFFSET": v2.BASE_OFFSET_OFFSET,
    "LENGTH_OFFSET": v2.LENGTH_OFFSET,
    "PARTITION_LEADER_EPOCH_OFFSET": v2.PARTITION_LEADER_EPOCH_OFFSET,
    "MAGIC_OFFSET": v2.MAGIC_OFFSET,
    "CRC_OFFSET": v2.CRC_OFFSET,
    "ATTRIBUTES_OFFSET": v2.ATTRIBUTES_OFFSET,
    "LAST_OFFSET_DELTA_OFFSET": v2.LAST_OFFSET_DELTA_OFFSET,
    "BASE_TIMESTAMP_OFFSET": v2.BASE_TIMESTAMP_OFFSET,
    "MAX_TIMESTAMP_OFFSET": v2.MAX_TIMESTAMP_OFFSET,
    "PRODUCER_ID_OFFSET": v2.PRODUCER_ID_OFFSET,
    "PRODUCER_EPOCH_OFFSET": v2.PRODUCER_EPOCH_OFFSET,
    "BASE_SEQUENCE_OFFSET": v2.BASE_SEQUENCE_OFFSET,
    "RECORDS_COUNT_OFFSET": v2.RECORDS_COUNT_OFFSET,
    "RECORD_BATCH_OVERHEAD": v2.HEADER_SIZE,
    "H_BASE_OFFSET": v2.BASE_OFFSET,
    "H_LENGTH": v2.LENGTH,
    "H_LEADER_EPOCH": v2.LEADER_EPOCH,
    "H_MAGIC": v2.MAGIC,
    "H_CRC": v2.CRC,
    "H_ATTRIBUTES": v2.ATTRIBUTES,
    "H_LAST_OFFSET_DELTA": v2.LAST_OFFSET_DELTA,
    "H_BASE_TIMESTAMP": v2.BASE_TIMESTAMP,
    "H_MAX_TIMESTAMP": v2.MAX_TIMESTAMP,
    "H_PRODUCER_ID": v2.PRODUCER_ID,
    "H_PRODUCER_EPOCH": v2.PRODUCER_EPOCH,
    "H_BASE_SEQUENCE": v2.BASE_SEQUENCE,
    "H_COUNT": v2.COUNT,
    "DELETE_HORIZON_FLAG": v2.DELETE_HORIZON_FLAG,
    "CODEC_MASK": v2.CODEC_MASK,
    "TIMESTAMP_TYPE_FLAG": v2.TIMESTAMP_TYPE_FLAG,
    "CONTROL_FLAG": v2.CONTROL_FLAG,
    "NO_SEQUENCE": NO_SEQUENCE,
    "INT32_MAX": INT32_MAX,
    "VARINT_MAX_BYTES": varint.VARINT_MAX_BYTES,
    "VARLONG_MAX_BYTES": varint.VARLONG_MAX_BYTES,
    "HEADER_FORMAT": engine.build_format(v2.HEADER.format),
}
engine.check(ENGINE_SHARED)

_c_decode: Callable[..., tuple[list[RawRecord], int, int, bool, bool]]
if engine.C is None:
    decode_records = decode_records_py  # noqa: F811 - the pure-Python engine: no wrapper
    decode_chunk = decode_chunk_py  # noqa: F811
else:
    _c_decode = engine.C.decode_records


def _read_headers(mv: memoryview, pos: int, end: int, count: int) -> tuple[tuple[Header, ...], int]:
    """``DefaultRecord.readHeaders``: ``count`` (key, value) pairs."""
    if count < 0:
        raise CorruptRecordError(f"found invalid number of record headers {count}", position=pos)
    if count > end - pos:
        raise CorruptRecordError(
            f"found invalid number of record headers: {count} is larger than the remaining size of the record",
            position=pos,
        )
    headers: list[Header] = []
    for _ in range(count):
        key_size, pos = read_varint(mv, pos)
        if key_size < 0:
            raise CorruptRecordError(f"invalid negative header key size {key_size}", position=pos)
        if pos + key_size > end:
            raise IndexError
        key = bytes(mv[pos : pos + key_size])
        pos += key_size
        value_size, pos = read_varint(mv, pos)
        if value_size >= 0:
            if pos + value_size > end:
                raise IndexError
            value: bytes | None = bytes(mv[pos : pos + value_size])
            pos += value_size
        else:
            value = None
        headers.append((key, value))
    return tuple(headers), pos
