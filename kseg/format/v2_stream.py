"""The records of a compressed magic v2 batch decoded from the decompressor's pieces, never held whole.

Kafka reads a compressed batch's records from the codec's input stream
(``DefaultRecordBatch.compressedIterator``, ``DefaultRecord.readFrom(DataInput)``): one record at a time,
never the decompressed bytes whole.  Here :func:`kseg.format.compression.stream` hands out pieces of about
a MiB and :class:`RecordPieces` decodes the records in them with :func:`kseg.format.v2_records.decode_chunk`
(either engine); a record that straddles two pieces is carried over: what is held is at most one piece and
one partial record.

The rules of :mod:`kseg.format.v2_records` judge a record against the end of the decompressed bytes
(``end``: "premature end", "only N remain", "records still remaining after the last record").  So the
stream is first read to its end once to learn ``end`` (:func:`open_records`; every decompression error is
raised then, before any record is decoded, as when the batch was decompressed whole), then read again and
decoded: a record is decoded against ``end`` only when its bytes (and a margin past them, what the rule may
read of a corrupt record) are in the buffer, or when its length alone condemns it.  The records and errors
are exactly those of decoding the whole buffer at once; error positions are in the decompressed stream.
A stream of one piece (a batch of at most :data:`kseg.format.compression.PIECE` decompressed bytes, nearly
every batch) is read once and decoded as one buffer, as before.
"""

from __future__ import annotations

from typing import Callable, Iterator, Optional, Union

from kseg.errors import CorruptRecordError
from kseg.format import v2_records

#: What a piece of decompressed bytes is.
Piece = Union[bytes, bytearray, memoryview]
#: ``(buffer, records, consecutive)``: records as :func:`kseg.format.v2_records.decode_chunk` decodes them
#: from ``buffer`` (spans are positions in it); ``consecutive`` is None unless asked for.
Chunk = tuple[Piece, list[v2_records.RawRecord], Optional[bool]]
#: ``(base_offset, base_timestamp, base_sequence, log_append_time)``: what decoding needs of the batch header.
Args = tuple[int, int, int, Optional[int]]

#: Bytes past a record's declared end that the rule may read while judging a corrupt record (its fields'
#: varints, at most 10 + 4 x 5 bytes, past a body that ended early): a record is judged in a buffer that
#: holds this much more of the stream, so what it reads there is what it would read in the whole buffer.
MARGIN = 64


#: What :func:`_decode` returns: ``(records, pos, read, error, consecutive)``.
Decoded = tuple[list[v2_records.RawRecord], int, int, Optional[CorruptRecordError], Optional[bool]]


def _decode(
    buf: Piece, pos: int, end: int, count: int, read: int, n: int, args: Args, form: int, steps: bool
) -> Decoded:
    """``(records, pos, read, error, consecutive)`` of up to ``n`` records from ``buf[pos:end]``."""
    if steps:
        return v2_records.decode_chunk(buf, pos, end, count, read, n, *args, form)
    records, pos, read, error = v2_records.decode_records(buf, pos, end, count, read, n, *args, form)
    return records, pos, read, error, None


def _needs_more(buf: Piece, pos: int, end: int) -> int:
    """How many bytes from ``pos`` a buffer must hold to judge the record there against ``end`` (both relative
    to ``buf``), or 0 when ``buf`` already holds them or the record's length condemns it whatever follows
    (negative, past ``end``, or a varint over 5 bytes: the rule stops there)."""
    avail = len(buf)
    raw = shift = 0
    p = pos
    while True:
        if p >= avail:
            return p - pos + MARGIN  # the length itself is cut
        b = buf[p]
        p += 1
        raw |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 28:
            return 0  # "varint is too long"
    size = ((raw & 0xFFFFFFFF) >> 1) ^ -(raw & 1)
    if size < 0 or p + size > end:
        return 0
    need = min(p + size + MARGIN, end)
    return 0 if need <= avail else need - pos


class RecordPieces:
    """A compressed batch's records, decoded a chunk at a time from the pieces of its decompressed stream.

    ``first`` is the stream's first bytes (or empty), ``pieces`` the rest, ``end`` the stream's length.
    :meth:`take` raises the :class:`~kseg.errors.KsegError` the rule finds, its position in the stream.
    """

    __slots__ = ("buf", "base", "pos", "read", "pieces", "end", "count", "args", "form", "steps")

    def __init__(
        self, first: Piece, pieces: Iterator[Piece], end: int, count: int, args: Args, form: int, steps: bool
    ) -> None:
        self.buf = memoryview(first)
        self.base = 0  # where buf starts in the stream
        self.pos = 0  # where the next record starts in buf
        self.read = 0
        self.pieces = pieces
        self.end = end
        self.count = count
        self.args = args
        self.form = form
        self.steps = steps

    @property
    def done(self) -> bool:
        """Whether every record was decoded."""
        return self.read >= self.count

    def take(self, n: int) -> Chunk:
        """The next at most ``n`` (and at least one) records; raise the error that stops them."""
        while True:
            buf, pos, read = self.buf, self.pos, self.read
            end = self.end - self.base
            if len(buf) >= end:  # the stream's last bytes are in: the whole rule
                return self._judged(buf, pos, end, read, n)
            most = min(n, self.count - 1 - read)  # the last record is judged against the end, below
            if most > 0:
                records, pos2, read2, error, consecutive = _decode(
                    buf, pos, len(buf), self.count, read, most, self.args, self.form, self.steps
                )
                if error is None:
                    self.pos, self.read = pos2, read2
                    return buf, records, consecutive
                if records:  # whole records before one the buffer cuts (or a corrupt one): theirs is known
                    self.pos = self._after(buf, pos, len(records))
                    self.read = read + len(records)
                    return buf, records, consecutive
            want = _needs_more(buf, pos, end)
            if not want:
                try:
                    return self._judged(buf, pos, end, read, 1)
                except IndexError:  # pragma: no cover - _needs_more holds what the rule reads; never a traceback
                    want = end - pos
            self._pull(want)

    def _judged(self, buf: Piece, pos: int, end: int, read: int, n: int) -> Chunk:
        records, pos2, read2, error, consecutive = _decode(
            buf, pos, end, self.count, read, n, self.args, self.form, self.steps
        )
        if error is not None and not records:
            raise error.at(None, self.base)
        if error is not None:  # hand out the good records first; the error comes with the next call
            self.pos = self._after(buf, pos, len(records))
            self.read = read + len(records)
        else:
            self.pos, self.read = pos2, read2
        return buf, records, consecutive

    @staticmethod
    def _after(buf: Piece, pos: int, k: int) -> int:
        """Where the ``k`` records from ``pos`` end: they were decoded without error, so their length
        varints (zig-zag, at most 5 bytes) are walked, no record decoded again."""
        for _ in range(k):
            b = buf[pos]
            pos += 1
            raw, shift = b & 0x7F, 7
            while b & 0x80:
                b = buf[pos]
                pos += 1
                raw |= (b & 0x7F) << shift
                shift += 7
            raw &= 0xFFFFFFFF  # as read_varint: an int32
            pos += (raw >> 1) ^ -(raw & 1)
        return pos

    def _pull(self, want: int) -> None:
        """Carry the record at ``pos`` over and read pieces until ``want`` bytes from it are held."""
        parts = [memoryview(self.buf)[self.pos :]]
        have = len(parts[0])
        while have < want:
            piece = next(self.pieces, None)
            if piece is None:  # the stream is shorter than it was: end where it ends
                self.end = self.base + self.pos + have
                break
            parts.append(memoryview(piece))
            have += len(piece)
        self.base += self.pos
        self.pos = 0
        self.buf = memoryview(b"".join(parts))


def open_records(
    opener: Callable[[], Iterator[Piece]], count: int, args: Args, form: int, steps: bool
) -> tuple[RecordPieces, Callable[[int, bool], RecordPieces]]:
    """Read the stream ``opener`` opens to its end once (raising its decompression errors) and return its
    records, and a function that opens them again from the first (``form``, ``steps``): one stream of one
    piece keeps that piece and is not decompressed again."""
    pieces = opener()
    first = next(pieces, b"")
    second = next(pieces, None)
    if second is None:
        whole = first
        return RecordPieces(whole, iter(()), len(whole), count, args, form, steps), lambda f, s: RecordPieces(
            whole, iter(()), len(whole), count, args, f, s
        )
    end = len(first) + len(second)
    del first, second
    for piece in pieces:
        end += len(piece)

    def again(f: int, s: bool) -> RecordPieces:
        return RecordPieces(b"", opener(), end, count, args, f, s)

    return again(form, steps), again
