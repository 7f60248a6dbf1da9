"""Batches as found in a file (``FileLogInputStream.FileChannelRecordBatch``).

A batch object is a light view: the file, the batch's position and size,
and where its bytes sit in the reader's window.  Header fields are unpacked
once with one precompiled ``struct``; the CRC is computed only when asked;
records are decoded (and decompressed) only when iterated.  A batch larger
than the window keeps no bytes: its CRC is streamed through the window and
its records are loaded on demand, bounded by the caller's ``limit``.
"""

from __future__ import annotations

import zlib
from functools import partial
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Callable, Iterator, TypeVar, Union

from kseg.errors import CorruptRecordError, KsegError, LimitExceededError
from kseg.format import compression, legacy, timestamp_type, v2, v2_records
from kseg.format.crc import crc32c_function
from kseg.limits import DECOMPRESSION_FACTOR, NO_TIMESTAMP
from kseg.valueclass import Protocol

if TYPE_CHECKING:  # (the stream decoder is loaded for a compressed batch only)
    from kseg.format.v2_stream import Chunk

_named = tuple.__new__  # NamedTuple(...) from a tuple in one C call
_v2_record = partial(tuple.__new__, v2_records.Record)  # names a decoded tuple in C: no Python frame a record
_second = itemgetter(1)
_legacy_record = partial(tuple.__new__, legacy.LegacyRecord)
_BatchHeader = v2.BatchHeader
_unpack_header = v2.HEADER.unpack_from

_timestamp_type_of = timestamp_type.of_attributes

_T = TypeVar("_T")
#: What decoding a v2 batch's records needs of its header: base offset, base timestamp, base sequence,
#: and the LogAppendTime every record reports (None: each record's own timestamp).
BatchArgs = tuple[int, int, int, Union[int, None]]
#: The most records of a compressed batch decoded and held before the first is handed out; a larger batch
#: is walked to its end once (to raise a corrupt record before any output, as Kafka does) and decoded again.
HOLD_RECORDS = 8192


class BatchSource(Protocol):
    """What a batch needs from the file it was read from (:class:`kseg.storage.records.FileRecords`).

    A protocol, so this module does not import the reader that imports it.
    """

    path: str
    size: int

    @property
    def window_size(self) -> int: ...  # pragma: no cover - protocol

    def window(self, position: int, n: int) -> tuple[memoryview, int]: ...  # pragma: no cover - protocol

    def read_at(self, position: int, n: int) -> bytes | bytearray: ...  # pragma: no cover - protocol


def short_v2_header(path: str, position: int, size: int) -> CorruptRecordError:
    """A v2 batch whose 61-byte header runs past the file's end: Kafka reads a full header
    (``DefaultFileChannelRecordBatch.loadBatchHeader``) even for a batch declared smaller."""
    return CorruptRecordError(
        f"batch of {size} bytes is too small for a magic v2 header ({v2.HEADER_SIZE} bytes) and the file ends "
        "before one",
        path=path,
        position=position,
    )


class FileBatch:
    """Common part of v2 and legacy batches."""

    __slots__ = ("file", "position", "size", "buf", "i")

    def __init__(self, file: BatchSource, position: int, size: int, buf: memoryview | None, i: int) -> None:
        self.file = file
        self.position = position
        self.size = size
        self.buf = buf
        self.i = i

    @property
    def magic(self) -> int:  # pragma: no cover - each kind defines it
        """The batch's magic: 2 for ``DefaultRecordBatch``, 0 or 1 for a legacy entry."""
        raise NotImplementedError

    def records(self, limit: int) -> Iterator[v2_records.Record | legacy.LegacyRecord]:  # pragma: no cover
        """The batch's records (each kind defines it)."""
        raise NotImplementedError

    def data(self, limit: int) -> memoryview:
        """The batch's bytes (a window slice, or read anew when larger than the window)."""
        if self.buf is not None:
            return self.buf[self.i : self.i + self.size]
        if self.size > limit:
            # position relative to the batch: callers anchor it in the file
            raise LimitExceededError(
                f"batch of {self.size} bytes exceeds the bound of {limit} bytes "
                f"({DECOMPRESSION_FACTOR} x --max-message-size)",
                position=0,
                hint="raise --max-message-size if this batch is genuine",
            )
        return memoryview(self.file.read_at(self.position, self.size))

    def max_record_timestamp(self, limit: int) -> int:
        """The largest timestamp of the batch's records (``NO_TIMESTAMP`` if none), as Kafka's
        ``DumpLogSegments.dumpTimeIndex`` computes it record by record; errors as :meth:`records`."""
        best = NO_TIMESTAMP
        for rec in self.records(limit):
            if rec.timestamp > best:
                best = rec.timestamp
        return best

    def _stream_crc(self, start: int, fn: Callable[[memoryview, int], int], init: int = 0) -> int:
        """CRC of bytes ``[position+start, position+size)`` read window by window."""
        pos = self.position + start
        end = self.position + self.size
        crc = init
        step = self.file.window_size
        while pos < end:
            n = min(step, end - pos)
            buf, i = self.file.window(pos, n)
            crc = fn(buf[i : i + n], crc)
            pos += n
        return crc

    def _anchor(self, exc: KsegError) -> KsegError:
        """``exc`` (positioned in the batch, or nowhere) anchored in the file."""
        return exc.at(self.file.path, self.position)

    def _anchored(self, it: Iterator[_T]) -> Iterator[_T]:
        try:
            yield from it
        except KsegError as exc:
            raise self._anchor(exc) from None

    # What both kinds answer (``RecordBatch``), for code that holds a batch of either kind.
    @property
    def base_offset(self) -> int:  # pragma: no cover - each kind defines it
        raise NotImplementedError

    @property
    def last_offset(self) -> int:  # pragma: no cover - each kind defines it
        raise NotImplementedError

    @property
    def max_timestamp(self) -> int:  # pragma: no cover - each kind defines it
        raise NotImplementedError

    @property
    def checksum(self) -> int:  # pragma: no cover - each kind defines it
        raise NotImplementedError

    def is_valid(self) -> bool:  # pragma: no cover - each kind defines it
        raise NotImplementedError

    def computed_crc(self) -> int:  # pragma: no cover - each kind defines it
        raise NotImplementedError

    def invalid(self) -> str | None:
        """Why ``RecordBatch.ensureValid`` refuses this batch, in Kafka's words -- a v2 batch below its
        61-byte header, then the CRC (CRC-32C of a v2 batch, CRC-32 of a v0/v1 message) -- or None.  What a
        broker's recovery (``LogSegment.recover``) logs where it truncates."""
        if self.magic >= 2 and self.size < v2.HEADER_SIZE:
            return (
                f"Record batch is corrupt (the size {self.size} is smaller than the minimum allowed overhead "
                f"{v2.HEADER_SIZE})"
            )
        if not self.is_valid():
            return f"Record is corrupt (stored crc = {self.checksum}, computed crc = {self.computed_crc()})"
        return None

    def ensure_valid(self) -> None:
        """``RecordBatch.ensureValid``: :class:`CorruptRecordError` at this batch with :meth:`invalid`'s text."""
        why = self.invalid()
        if why is not None:
            raise CorruptRecordError(why, path=self.file.path, position=self.position)

    def crc_mismatch(self) -> str:
        """What a batch failing :meth:`is_valid` is, in the words every command uses."""
        stored, computed = self.checksum, self.computed_crc()
        return f"batch at offset {self.base_offset}: CRC mismatch (stored {stored}, computed {computed})"


class V2Batch(FileBatch):
    """A magic >= 2 batch (``DefaultFileChannelRecordBatch`` / ``DefaultRecordBatch``)."""

    # ``h``: the header as ``struct`` unpacks it, a plain tuple in BatchHeader's order, read with the
    # ``v2`` index constants.  Naming it on every batch costs ~250 ns, a tenth of an index check
    # (measured); ``header`` names it for code that is not on a per-batch path.
    __slots__ = ("h",)

    h: tuple[int, ...]

    @property
    def header(self) -> v2.BatchHeader:
        """The batch's :class:`~kseg.format.v2.BatchHeader`, by name."""
        return _named(_BatchHeader, self.h)

    def __init__(self, file: BatchSource, position: int, size: int, buf: memoryview | None, i: int) -> None:
        self.file = file  # FileBatch.__init__, inlined: one batch object per index entry or batch
        self.position = position
        self.size = size
        self.buf = buf
        self.i = i
        if buf is not None and i + v2.HEADER_SIZE <= len(buf) and size >= v2.HEADER_SIZE:
            self.h = _unpack_header(buf, i)
        else:
            if position + v2.HEADER_SIZE > file.size:
                raise short_v2_header(file.path, position, size)
            self.h = v2.HEADER.unpack(file.read_at(position, v2.HEADER_SIZE))

    @property
    def magic(self) -> int:
        return self.h[v2.MAGIC]

    @property
    def base_offset(self) -> int:
        return self.h[v2.BASE_OFFSET]

    @property
    def last_offset(self) -> int:
        h = self.h
        return v2.last_offset(h[v2.BASE_OFFSET], h[v2.LAST_OFFSET_DELTA])

    @property
    def attributes(self) -> int:
        return self.h[v2.ATTRIBUTES] & 0xFF  # Kafka reads the low byte

    @property
    def codec(self) -> int:
        return self.h[v2.ATTRIBUTES] & v2.CODEC_MASK

    @property
    def timestamp_type(self) -> str:
        return _timestamp_type_of(self.h[v2.ATTRIBUTES])

    @property
    def max_timestamp(self) -> int:
        return self.h[v2.MAX_TIMESTAMP]

    @property
    def is_control(self) -> bool:
        return bool(self.h[v2.ATTRIBUTES] & v2.CONTROL_FLAG)

    @property
    def is_transactional(self) -> bool:
        return bool(self.h[v2.ATTRIBUTES] & v2.TRANSACTIONAL_FLAG)

    @property
    def delete_horizon_ms(self) -> int | None:
        h = self.h
        return h[v2.BASE_TIMESTAMP] if h[v2.ATTRIBUTES] & v2.DELETE_HORIZON_FLAG else None

    @property
    def checksum(self) -> int:
        return self.h[v2.CRC]

    def is_valid(self) -> bool:
        """``DefaultRecordBatch.isValid``: size >= 61 and CRC-32C over attributes..end."""
        if self.size < v2.HEADER_SIZE:
            return False
        return self.computed_crc() == self.h[v2.CRC]

    def computed_crc(self) -> int:
        """CRC-32C over attributes..end, as ``DefaultRecordBatch.computeChecksum``."""
        fn = crc32c_function()
        if self.buf is not None:
            i = self.i
            return fn(self.buf[i + v2.ATTRIBUTES_OFFSET : i + self.size])
        return self._stream_crc(v2.ATTRIBUTES_OFFSET, lambda b, c: fn(b, c))

    def records(self, limit: int) -> Iterator[v2_records.Record]:
        """The batch's records, each a :class:`kseg.format.v2_records.Record`.

        Uncompressed batches stream from the window; a compressed batch is
        decompressed (at most ``limit`` bytes) and every record checked before
        the first is returned, as Kafka's ``DefaultRecordBatch.iterator`` decodes
        them all first -- but handed out in chunks (:meth:`_compressed_chunks`),
        never as one list of millions of records.
        """
        h = self.h
        count = h[v2.COUNT]
        if count == 0:
            return iter(())
        if h[v2.ATTRIBUTES] & v2.CODEC_MASK == 0:
            data, args = self._prepare(limit)
            records = v2_records.iter_records(data, v2.HEADER_SIZE, self.size, count, *args)
            return map(_v2_record, self._anchored(records))
        chunks = self._compressed_chunks(limit, v2_records.SLICES, v2_records.CHUNK, False)
        return map(_v2_record, chain.from_iterable(map(_second, chunks)))

    def max_record_timestamp(self, limit: int) -> int:
        """:meth:`FileBatch.max_record_timestamp` over :meth:`record_chunks` (no object a record)."""
        best = NO_TIMESTAMP
        for records in self.record_chunks(limit, sizes=True):
            top = max([r[1] for r in records])
            if top > best:
                best = top
        return best

    def record_chunks(self, limit: int, sizes: bool = False, chunk: int = 1024) -> Iterator[list[v2_records.RawRecord]]:
        """The records of :meth:`records` in lists of at most ``chunk``,
        as plain tuples in :class:`~kseg.format.v2_records.Record` order: the hot path of deep iteration.

        With ``sizes`` key and value are their lengths (-1 for null) instead
        of slices: all that ``--deep-iteration`` prints.  Error semantics are
        those of :meth:`records`: an uncompressed batch hands out every
        record before a corrupt one (in the last list) and then raises; a
        compressed one raises before any list (:meth:`_compressed_chunks`).
        """
        return map(_second, self._chunks(limit, v2_records.SIZES if sizes else v2_records.SLICES, chunk, False))

    def decompressed_pieces(self, limit: int) -> Iterator[bytes | bytearray]:
        """The records' bytes of a compressed batch, decompressed (at most ``limit`` bytes in all) and handed
        out in pieces of about a MiB (:func:`kseg.format.compression.stream`), none of its records decoded:
        what a search for bytes needs (``kseg grep``).  Its errors are :meth:`records`'s decompression
        errors, anchored in the file."""
        data, _ = self._prepare(limit)
        h = self.h
        try:
            payload = bytes(data[v2.HEADER_SIZE :])  # the window under ``data`` is read into again
            yield from compression.stream(h[v2.ATTRIBUTES] & v2.CODEC_MASK, payload, h[v2.MAGIC], limit)
        except KsegError as exc:
            raise exc.at(self.file.path, self.position, default=v2.HEADER_SIZE) from None

    def form_chunks(self, limit: int, form: int, chunk: int = 1024) -> Iterator[Chunk]:
        """:meth:`record_chunks` as ``(buffer, records, consecutive)``: key and value in ``form``
        (:data:`kseg.format.v2_records.SLICES`, ``SIZES`` or ``SPANS``: spans are positions in ``buffer``), and
        whether the list's offsets run in steps of one (:func:`kseg.format.v2_records.decode_chunk`)."""
        return self._chunks(limit, form, chunk, True)

    def _chunks(self, limit: int, form: int, chunk: int, steps: bool) -> Iterator[Chunk]:
        """:meth:`form_chunks`; without ``steps`` ``consecutive`` is None (not worked out)."""
        h = self.h
        count = h[v2.COUNT]
        if count == 0:
            return
        if h[v2.ATTRIBUTES] & v2.CODEC_MASK:
            yield from self._compressed_chunks(limit, form, chunk, steps)
            return
        data, args = self._prepare(limit)
        pos, read, end = v2.HEADER_SIZE, 0, self.size
        decode = v2_records.decode_chunk
        consecutive: bool | None = None
        while True:
            if steps:
                records, pos, read, error, consecutive = decode(data, pos, end, count, read, chunk, *args, form)
            else:
                records, pos, read, error = v2_records.decode_records(data, pos, end, count, read, chunk, *args, form)
            if records:
                yield data, records, consecutive
            if error is not None:
                raise self._anchor(error) from None
            if read >= count:
                return

    def _prepare(self, limit: int) -> tuple[memoryview, BatchArgs]:
        """The batch's bytes and the header values record decoding needs."""
        if self.size < v2.HEADER_SIZE:
            raise self._anchor(
                CorruptRecordError(f"batch size {self.size} is smaller than the v2 header ({v2.HEADER_SIZE})")
            )
        h = self.h
        log_append = h[v2.MAX_TIMESTAMP] if h[v2.ATTRIBUTES] & v2.TIMESTAMP_TYPE_FLAG else None
        try:
            data = self.data(limit)
        except KsegError as exc:
            raise exc.at(self.file.path, self.position, default=v2.HEADER_SIZE) from None
        return data, (h[v2.BASE_OFFSET], h[v2.BASE_TIMESTAMP], h[v2.BASE_SEQUENCE], log_append)

    def _compressed_chunks(self, limit: int, form: int, chunk: int, steps: bool) -> Iterator[Chunk]:
        """Decompress (at most ``limit`` bytes) and decode the records in chunks of at most ``chunk``:
        ``(buffer, records, consecutive)`` as :meth:`_chunks` yields them.

        Kafka's ``DefaultRecordBatch.iterator`` decodes a compressed batch whole before the first
        record, so a corrupt record anywhere means no record of the batch is handed out.  Here the
        chunks are held while they total at most :data:`HOLD_RECORDS` records; a batch with more is
        first walked to its end (records decoded as sizes and dropped: an error raises before any
        chunk) and then decoded on.  The decompressed bytes stream through in pieces
        (:mod:`kseg.format.v2_stream`): memory is a piece, a partial record and the held chunks,
        whatever the record count and the decompressed size.
        """
        h = self.h
        count = h[v2.COUNT]
        data, args = self._prepare(limit)
        codec, magic = h[v2.ATTRIBUTES] & v2.CODEC_MASK, h[v2.MAGIC]
        try:
            if count > limit:
                raise LimitExceededError(
                    f"record count {count} exceeds the bound of {limit}", position=v2.RECORDS_COUNT_OFFSET
                )
            # Copied once (the codecs keep bytes as they are): the window under ``data`` is read into again
            # while records of this batch may still be decoded, and the stream is opened again for the walk.
            payload = bytes(data[v2.HEADER_SIZE :])
            opener = partial(compression.stream, codec, payload, magic, limit)
            from kseg.format.v2_stream import open_records  # (a compressed batch's: loaded for one)

            records, again = open_records(opener, count, args, form, steps)
            held: list[Chunk] = []
            total = 0
            while not records.done:
                step = chunk if total + chunk <= HOLD_RECORDS else HOLD_RECORDS - total
                if step <= 0:
                    walk = again(v2_records.SIZES, False)
                    while not walk.done:
                        walk.take(chunk)
                    break
                held.append(records.take(step))
                total += len(held[-1][1])
        except KsegError as exc:
            raise exc.at(self.file.path, self.position, default=v2.HEADER_SIZE) from None
        yield from held
        del held
        while not records.done:  # past HOLD_RECORDS: walked without error, so decoding on raises nothing
            try:
                yield records.take(chunk)
            except KsegError as exc:  # pragma: no cover - the walk raised it first
                raise exc.at(self.file.path, self.position, default=v2.HEADER_SIZE) from None


class LegacyBatch(FileBatch):
    """A magic 0 or 1 log entry (``LegacyFileChannelRecordBatch``)."""

    __slots__ = ("offset", "magic", "crc", "attrs")

    magic: int  # a slot, where V2Batch reads it from its header
    crc: int
    attrs: int

    def __init__(
        self, file: BatchSource, position: int, size: int, buf: memoryview | None, i: int, offset: int, magic: int
    ) -> None:
        super().__init__(file, position, size, buf, i)
        self.offset = offset
        self.magic = magic
        head = buf[i : i + legacy.ENTRY_SIZE] if buf is not None else file.read_at(position, legacy.ENTRY_SIZE)
        _, _, self.crc, _, self.attrs = legacy.ENTRY.unpack_from(head, 0)

    @property
    def base_offset(self) -> int:
        """The entry's offset, as Kafka prints a legacy entry's base offset."""
        return self.offset

    @property
    def last_offset(self) -> int:
        return self.offset

    @property
    def checksum(self) -> int:
        return self.crc

    is_control = False
    is_transactional = False
    delete_horizon_ms = None

    @property
    def attributes(self) -> int:
        return self.attrs & 0xFF

    @property
    def codec(self) -> int:
        return self.attrs & 0x07

    @property
    def timestamp_type(self) -> str:
        return legacy.timestamp_type(self.magic, self.attrs)

    @property
    def max_timestamp(self) -> int:
        if self.magic == 0:
            return NO_TIMESTAMP
        timestamp: int
        if self.buf is not None:
            (timestamp,) = legacy.TIMESTAMP.unpack_from(self.buf, self.i + 18)
        else:
            (timestamp,) = legacy.TIMESTAMP.unpack(self.file.read_at(self.position + 18, 8))
        return timestamp

    def is_valid(self) -> bool:
        """``LegacyRecord.isValid``: CRC-32 over magic..end of the message."""
        return self.computed_crc() == self.crc

    def computed_crc(self) -> int:
        """CRC-32 over magic..end, as ``LegacyRecord.computeChecksum``."""
        if self.buf is not None:
            i = self.i
            return zlib.crc32(self.buf[i + 16 : i + self.size])
        return self._stream_crc(16, lambda b, c: zlib.crc32(b, c))

    def records(self, limit: int) -> Iterator[legacy.LegacyRecord]:
        """The entry's records (itself, or a wrapper's inner messages), each a
        :class:`kseg.format.legacy.LegacyRecord`."""
        try:
            data = self.data(limit)
            if self.codec == 0:
                key, value = legacy.key_value(data, 12, self.size - 12, self.magic)
                ts = self.max_timestamp
                return iter((legacy.LegacyRecord(self.offset, ts, key, value, self.crc, self.is_valid()),))
            return map(
                _legacy_record,
                self._anchored(legacy.iter_inner(data, 12, self.size - 12, self.offset, self.magic, self.attrs, limit)),
            )
        except KsegError as exc:
            raise self._anchor(exc) from None
