"""``V2Batch``'s compressed records in chunks (issue 19): bounded lists, Kafka's all-or-nothing errors.

Kafka's ``DefaultRecordBatch.iterator`` decodes a compressed batch whole before
the first record, so a corrupt record anywhere hands out none.  kseg keeps
that, but past ``HOLD_RECORDS`` records walks the batch first instead of
holding every record: these cases sit on both sides of that bound.
"""

from __future__ import annotations

import pytest

from kseg.errors import CorruptRecordError
from kseg.format import v2_records
from kseg.storage import batch as batch_mod
from kseg.storage.records import FileRecords
from kseg.testing.bombs import TIMESTAMP, null_records
from kseg.testing.codecs import compress
from kseg.testing.segment import write_segment
from kseg.testing.v2 import MAGIC_V2, attributes_v2, finish_batch

LIMIT = 40 << 20
HOLD = batch_mod.HOLD_RECORDS


def batch_of(body: bytes, count: int, codec: str) -> bytes:
    payload = body if codec == "none" else compress(codec, body, MAGIC_V2)
    attrs = attributes_v2(codec, "CreateTime", False, False, False)
    return finish_batch(0, 0, attrs, count - 1, TIMESTAMP, TIMESTAMP, -1, -1, -1, count, payload)


def corrupt_at(count: int, index: int) -> bytes:
    """``null_records(count)`` with record ``index``'s header count set to 1 (no header follows)."""
    body = bytearray(null_records(count))
    pos = 0
    for _ in range(index):
        pos += 1 + body[pos] // 2  # every length fits one varint byte
    end = pos + 1 + body[pos] // 2
    body[end - 1] = 0x02  # headerCount varint 1
    return bytes(body)


def one_batch(tmp_path, raw: bytes):
    write_segment(tmp_path, [[raw]])
    records = FileRecords(str(tmp_path / "00000000000000000000.log"))
    return records, next(records.batches())


@pytest.mark.parametrize("count", [HOLD - 1, HOLD, HOLD + 1, 3 * HOLD + 5])
@pytest.mark.parametrize("codec", ["zstd", "gzip"])
def test_compressed_records_come_in_bounded_chunks(tmp_path, count, codec):
    records, b = one_batch(tmp_path, batch_of(null_records(count), count, codec))
    with records:
        chunks = [list(c) for c in b.record_chunks(LIMIT, chunk=1000)]
        assert max(map(len, chunks)) <= 1000
        flat = [r for c in chunks for r in c]
        assert [r[0] for r in flat] == list(range(count))
        assert all(r[3] is None and r[4] is None and r[5] == () and r[1] == TIMESTAMP for r in flat)
        named = list(b.records(LIMIT))
        assert [tuple(r) for r in named] == flat
        steps = list(b.form_chunks(LIMIT, v2_records.SIZES, chunk=1000))
        assert all(consecutive for _, _, consecutive in steps)
        assert sum(len(c) for _, c, _ in steps) == count


@pytest.mark.parametrize("index", [0, HOLD - 1, HOLD, HOLD + 1, 3 * HOLD])
def test_a_corrupt_record_anywhere_hands_out_none(tmp_path, index):
    count = 3 * HOLD + 1
    records, b = one_batch(tmp_path, batch_of(corrupt_at(count, index), count, "zstd"))
    with records:
        seen = []
        with pytest.raises(CorruptRecordError) as info:
            for chunk in b.record_chunks(LIMIT):
                seen.extend(chunk)
        assert seen == []
        with pytest.raises(CorruptRecordError) as named:
            next(iter(b.records(LIMIT)))
    assert named.value.describe() == info.value.describe()
    assert info.value.path.endswith("00000000000000000000.log")


@pytest.mark.parametrize("index", [5, HOLD + 7])
def test_the_same_corruption_uncompressed_hands_out_the_records_before_it(tmp_path, index):
    """The contrast: an uncompressed batch streams (Kafka's ``uncompressedIterator``)."""
    count = 2 * HOLD
    records, b = one_batch(tmp_path, batch_of(corrupt_at(count, index), count, "none"))
    with records:
        seen = []
        with pytest.raises(CorruptRecordError):
            for chunk in b.record_chunks(LIMIT):
                seen.extend(chunk)
    assert [r[0] for r in seen] == list(range(index))
