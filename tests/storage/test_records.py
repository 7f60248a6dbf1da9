"""``FileRecords.scan`` (shallow iteration without batch objects) against ``FileRecords.batches``.

Every corpus log, and generated segments whose batches straddle window
borders, are larger than the window, or end in a corrupt length field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from kseg.errors import CorruptRecordError
from kseg.storage.records import SCAN_LIST, FileRecords
from kseg.testing.v2 import RecordSpec, build_v2_batch
from kseg.testing.writer import write_bulk_segment
from tests.conftest import CORPUS_DATA
from tests.stores import local

CORPUS_LOGS = sorted(CORPUS_DATA.glob("*/*.log"))
WINDOW = 1 << 16  # the smallest window FileRecords allows


def _shallow(path, window, end, rows: Callable[[FileRecords], Iterator[tuple]]) -> list[tuple]:
    """``rows(records)`` of the file, then ``("error", description)`` where it met corruption."""
    kw = {} if window is None else {"window": window}
    out = []
    with FileRecords(str(path), end=end, **kw, store=local()) as records:
        try:
            for row in rows(records):
                out.append(row)
        except CorruptRecordError as exc:
            out.append(("error", exc.describe()))
    return out


def _batch_rows(records: FileRecords) -> Iterator[tuple]:
    for b in records.batches():
        yield (b.position, b.size, b.magic, b.base_offset, b.last_offset, b.checksum, b.is_valid())


def _scan_rows(records: FileRecords) -> Iterator[tuple]:
    for items in records.scan():
        assert 0 < len(items) <= SCAN_LIST
        for position, size, h, valid in items:
            if h is None:  # a batch object: use it before the iterator moves on
                b = valid
                assert (b.position, b.size) == (position, size)
                yield (position, size, b.magic, b.base_offset, b.last_offset, b.checksum, b.is_valid())
            else:
                yield (position, size, h[3], h[0], h[0] + h[6], h[4], valid)


def shallow_via_batches(path, window=None, end=None) -> list[tuple]:
    return _shallow(path, window, end, _batch_rows)


def shallow_via_scan(path, window=None, end=None) -> list[tuple]:
    return _shallow(path, window, end, _scan_rows)


@pytest.mark.parametrize("path", CORPUS_LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_scan_equals_batches_on_corpus(path):
    assert shallow_via_scan(path) == shallow_via_batches(path)


@pytest.mark.parametrize("path", CORPUS_LOGS[:8], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_scan_respects_max_bytes(path):
    size = path.stat().st_size
    for end in (0, 17, 18, size // 2, size - 1):
        assert shallow_via_scan(path, end=end) == shallow_via_batches(path, end=end)


def test_scan_across_window_borders(tmp_path):
    # ~1 MiB of ~16 KB batches through a 64 KiB window: many window moves, batches cut by borders
    r = write_bulk_segment(tmp_path, 1 << 20, records_per_batch=137, value_size=100)
    expected = shallow_via_batches(r.log_path, WINDOW)
    assert len(expected) == r.batches
    assert shallow_via_scan(r.log_path, WINDOW) == expected


def test_scan_lists_are_bounded(tmp_path):
    r = write_bulk_segment(tmp_path, 1 << 20, records_per_batch=1, value_size=10)
    with FileRecords(str(r.log_path), store=local()) as records:
        lengths = [len(items) for items in records.scan()]
    assert sum(lengths) == r.batches
    assert max(lengths) == SCAN_LIST


def test_scan_batch_larger_than_window(tmp_path):
    small = build_v2_batch([RecordSpec(b"k", b"v", 1)], base_offset=0)
    big = build_v2_batch([RecordSpec(b"k%d" % i, bytes(200), 2 + i) for i in range(500)], base_offset=1)
    assert len(big) > WINDOW
    corrupt_big = bytearray(big)
    corrupt_big[-1] ^= 0xFF  # CRC mismatch, streamed through the window
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(small + big + small + bytes(corrupt_big) + small + b"\0" * 10)
    got = shallow_via_scan(path, WINDOW)
    assert got == shallow_via_batches(path, WINDOW)
    assert [v for *_, v in got] == [True, True, True, False, True]


def test_scan_yields_batches_before_a_corrupt_length(tmp_path):
    good = build_v2_batch([RecordSpec(b"k", b"v", 1)], base_offset=0)
    bad = bytearray(good)
    bad[8:12] = (3).to_bytes(4, "big")  # length 3 < 14
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(good * 3 + bytes(bad) + good)
    seen = []
    with FileRecords(str(path), store=local()) as records:
        with pytest.raises(CorruptRecordError) as info:
            for items in records.scan():
                seen.extend(items)
    assert [p for p, *_ in seen] == [0, len(good), 2 * len(good)]
    assert info.value.position == 3 * len(good)
    assert "smaller than minimum record overhead" in info.value.message


@pytest.mark.parametrize("path", CORPUS_LOGS[:8], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_named_values_agree_with_the_batch_accessors(path):
    """``V2Batch.header`` and the named records read what the accessors and the hot paths read."""
    with FileRecords(str(path), store=local()) as records:
        try:
            for b in records.batches():
                recs = list(b.records(1 << 26))
                if b.magic >= 2:
                    h = b.header
                    assert (h.base_offset, h.base_offset + h.last_offset_delta, h.crc, h.max_timestamp) == (
                        b.base_offset,
                        b.last_offset,
                        b.checksum,
                        b.max_timestamp,
                    )
                    chunks = [r for chunk in b.record_chunks(1 << 26) for r in chunk]
                    assert [tuple(r) for r in recs] == [tuple(r) for r in chunks]
                    assert all(r.offset == r[0] and r.key is r[3] for r in recs)
                else:
                    assert all((r.key, r.value, r.crc, r.valid) == r[2:] for r in recs)
        except CorruptRecordError:
            pass
