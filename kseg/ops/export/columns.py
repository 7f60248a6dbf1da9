"""A split's records as columns, a window per call: the compiled engine's side of :func:`read_split`.

With the compiled engine (:mod:`kseg.engine`), ``export`` and the Spark data source without a key or
value decoder read a split's plain batches in one engine call per window (``export_window``): framing,
CRC, :mod:`kseg.storage.ranges`' selection and record decoding in C, the records' columns written
straight into Arrow's buffers (little-endian values, int32 offsets, validity bitmaps), so no Python
object is made per record or per batch.  :mod:`kseg.render.export` wraps the buffers as Arrow arrays.

The engine takes every whole v2 batch of the window that is an uncompressed data batch with a valid CRC;
it hands the first one it does not take to :func:`~kseg.ops.export.read.read_split`'s per-batch rules
(the reference, and what the Python engine runs for every batch), which then give the window back:
a compressed, control, legacy or CRC-invalid batch, a batch past the range, a record the rules judge,
a header key that is not UTF-8, a batch crossing the window's end, a framing error, the end.
"""

from __future__ import annotations

from typing import NamedTuple

from kseg import engine
from kseg.errors import KsegError
from kseg.format import timestamp_type
from kseg.limits import TIMESTAMP_RANGE
from kseg.storage.ranges import Ranges
from kseg.storage.records import FileRecords

# The buffers ``export_window`` returns, by position (the engine's ``C_*``, compared at import).
OFFSET = 0  # int64
TIMESTAMP = 1  # int64: epoch ms, -1 none
TIMESTAMP_VALID = 2  # bits: the timestamp column holds it (not -1, years 1-9999: TIMESTAMP_RANGE)
TIMESTAMP_TYPE_OFFSETS = 3  # int32 offsets and UTF-8: the batch's TimestampType name
TIMESTAMP_TYPE = 4
KEY_OFFSETS = 5  # int32 offsets, bytes, validity
KEY = 6
KEY_VALID = 7
VALUE_OFFSETS = 8
VALUE = 9
VALUE_VALID = 10
HEADERS_OFFSETS = 11  # int32: each row's first header
HEADER_KEY_OFFSETS = 12  # int32 offsets and UTF-8: header keys, one a header
HEADER_KEY = 13
HEADER_VALUE_OFFSETS = 14  # int32 offsets, bytes, validity: header values
HEADER_VALUE = 15
HEADER_VALUE_VALID = 16
SEQUENCE = 17  # int32
POSITION = 18  # int64: the batch's position in the .log
BASE_OFFSET = 19  # int64
LAST_OFFSET = 20  # int64
PRODUCER_ID = 21  # int64
PRODUCER_EPOCH = 22  # int32
BASE_SEQUENCE = 23  # int32
LEADER_EPOCH = 24  # int32
TRANSACTIONAL = 25  # bits
BUFFERS = 26

#: The rows an engine call gathers at most, and the key, value and header bytes after which it returns:
#: one Arrow batch of :data:`kseg.render.export.ROWS_PER_BATCH` rows at most, memory bounded whatever the
#: records' size (plus one batch, at most one window).
MAX_ROWS = 4096
MAX_BYTES = 4 << 20

engine.check(
    {
        "C_OFFSET": OFFSET,
        "C_TIMESTAMP": TIMESTAMP,
        "C_TS_VALID": TIMESTAMP_VALID,
        "C_TS_TYPE_OFF": TIMESTAMP_TYPE_OFFSETS,
        "C_TS_TYPE": TIMESTAMP_TYPE,
        "C_KEY_OFF": KEY_OFFSETS,
        "C_KEY": KEY,
        "C_KEY_VALID": KEY_VALID,
        "C_VALUE_OFF": VALUE_OFFSETS,
        "C_VALUE": VALUE,
        "C_VALUE_VALID": VALUE_VALID,
        "C_HEADERS_OFF": HEADERS_OFFSETS,
        "C_HKEY_OFF": HEADER_KEY_OFFSETS,
        "C_HKEY": HEADER_KEY,
        "C_HVALUE_OFF": HEADER_VALUE_OFFSETS,
        "C_HVALUE": HEADER_VALUE,
        "C_HVALUE_VALID": HEADER_VALUE_VALID,
        "C_SEQUENCE": SEQUENCE,
        "C_POSITION": POSITION,
        "C_BASE_OFFSET": BASE_OFFSET,
        "C_LAST_OFFSET": LAST_OFFSET,
        "C_PRODUCER_ID": PRODUCER_ID,
        "C_PRODUCER_EPOCH": PRODUCER_EPOCH,
        "C_BASE_SEQUENCE": BASE_SEQUENCE,
        "C_LEADER_EPOCH": LEADER_EPOCH,
        "C_TRANSACTIONAL": TRANSACTIONAL,
        "C_BUFFERS": BUFFERS,
    }
)
_c_window = None if engine.C is None else engine.C.export_window


class Columns(NamedTuple):
    """Rows of a split as Arrow buffers (by the positions above), read by the engine; every batch they
    come from is an uncompressed v2 data batch with a valid CRC, read by no ``read_committed`` walk."""

    rows: int
    headers: int  # the header entries of the rows, all told
    buffers: tuple[bytes, ...]
    last_offset: int  # the largest last offset of a batch that gave a row


def available() -> bool:
    """Whether the compiled engine reads columns (else every batch takes the per-batch rules)."""
    return _c_window is not None


class WindowReader:
    """The engine's loop over one split's file: :meth:`read` from a position, a window at a time."""

    def __init__(self, records: FileRecords, end: int, ranges: Ranges) -> None:
        self.records, self.end = records, end
        self.ranges = (ranges.from_offset, ranges.to_offset, ranges.from_time, ranges.to_time)
        self.broken = _c_window is None

    def read(self, pos: int) -> tuple[int, bool, Columns | None]:
        """``(pos, full, columns)``: where the engine stopped, whether it stopped only because its rows
        are many enough (call again from ``pos``), and the rows it made (None: none).  Not full: the
        batch at ``pos`` takes the per-batch rules (or the split ends there)."""
        records = self.records
        if self.broken or pos >= self.end:
            return pos, False, None
        try:
            view, i, n = records.window_from(pos)
        except KsegError:
            # a read that fails past pos (a file that shrank): the per-batch rules read as far as they
            # can and raise where the batches reach it
            self.broken = True
            return pos, False, None
        assert _c_window is not None
        pos, full, rows, headers, last, buffers = _c_window(
            view,
            pos - i,
            i + n,
            pos,
            self.end,
            self.ranges,
            TIMESTAMP_RANGE,
            timestamp_type.BY_FLAG,
            MAX_ROWS,
            MAX_BYTES,
        )
        return pos, full, None if buffers is None else Columns(rows, headers, buffers, last)
