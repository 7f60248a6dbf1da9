"""``V2Batch``'s compressed records in chunks (issue 19): bounded lists, Kafka's all-or-nothing errors.

Kafka's ``DefaultRecordBatch.iterator`` decodes a compressed batch whole before
the first record, so a corrupt record anywhere hands out none.  kseg keeps
that, but past ``HOLD_RECORDS`` records walks the batch first instead of
holding every record: these cases sit on both sides of that bound.
"""

from __future__ import annotations

import pytest

from kseg.errors import CorruptRecordError, LimitExceededError
from kseg.format import compression, v2_records
from kseg.storage import batch as batch_mod
from kseg.storage.records import FileRecords
from kseg.testing.bombs import TIMESTAMP, null_records
from kseg.testing.codecs import compress
from kseg.testing.segment import write_segment
from kseg.testing.v2 import MAGIC_V2, attributes_v2, encode_record, finish_batch
from tests.conftest import ENGINES
from tests.stores import local

LIMIT = 40 << 20
#: The hold these cases sit around: a quarter of kseg's (``HOLD_RECORDS``, 8192), the same rule at a size
#: where each case decodes a quarter of the records, still several chunks of each size asked before it.
HOLD = batch_mod.HOLD_RECORDS // 4


@pytest.fixture(autouse=True)
def _hold(monkeypatch) -> None:
    monkeypatch.setattr(batch_mod, "HOLD_RECORDS", HOLD)


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
    records = FileRecords(str(tmp_path / "00000000000000000000.log"), store=local())
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


# Streamed: a batch whose decompressed bytes come in many pieces (compression.PIECE made small) hands out
# the same records and raises the same errors as one decompressed whole, on both engines.


@pytest.fixture(params=ENGINES)
def engine_name(request, monkeypatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(v2_records, "decode_records", v2_records.decode_records_py)
        monkeypatch.setattr(v2_records, "decode_chunk", v2_records.decode_chunk_py)
    return request.param


def everything(b, monkeypatch, piece: int) -> list:
    """Every form's records of ``b`` (keys and values as bytes) or the error, with pieces of ``piece`` bytes."""
    monkeypatch.setattr(compression, "PIECE", piece)
    out: list = []
    for form in (v2_records.SLICES, v2_records.SIZES, v2_records.SPANS):
        try:
            for buf, recs, _ in b.form_chunks(LIMIT, form, chunk=300):
                if form == v2_records.SPANS:
                    recs = [(*r[:3], *(v2_records.span_slice(memoryview(buf), x) for x in r[3:5]), r[5]) for r in recs]
                out.append(
                    [(*r[:3], *(bytes(x) if isinstance(x, memoryview) else x for x in r[3:5]), r[5]) for r in recs]
                )
        except CorruptRecordError as exc:
            out.append(exc.describe())
    return [r for c in out for r in (c if isinstance(c, list) else [c])]


def straddling_body(count: int) -> bytes:
    return b"".join(
        encode_record(i, i, b"key-%d" % i, bytes([i % 251]) * (700 + i % 13), [("h", b"v")]) for i in range(count)
    )


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_records_straddling_pieces_come_out_as_from_the_whole(tmp_path, monkeypatch, engine_name, codec):
    count = HOLD + 40  # past the hold: walked, then decoded on
    records, b = one_batch(tmp_path, batch_of(straddling_body(count), count, codec))
    with records:
        whole = everything(b, monkeypatch, 1 << 30)
        assert len(whole) == 3 * count
        assert whole[-1][4] == bytes([(count - 1) % 251]) * (700 + (count - 1) % 13)
        assert everything(b, monkeypatch, 1000) == whole  # nearly every record cut by a piece boundary


@pytest.mark.parametrize("index", [0, 3, HOLD + 1, 3 * HOLD])
@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_a_corrupt_record_in_a_streamed_batch_is_the_same_error(tmp_path, monkeypatch, engine_name, codec, index):
    count = 3 * HOLD + 1
    records, b = one_batch(tmp_path, batch_of(corrupt_at(count, index), count, codec))
    with records:
        whole = everything(b, monkeypatch, 1 << 30)
        assert len(whole) == 3 and all(isinstance(e, str) for e in whole)  # no record, an error per form
        assert everything(b, monkeypatch, 4096) == whole


@pytest.mark.parametrize("extra", [-1, 1])
def test_a_wrong_record_count_in_a_streamed_batch_is_the_same_error(tmp_path, monkeypatch, engine_name, extra):
    count = 3 * HOLD
    records, b = one_batch(tmp_path, batch_of(null_records(count), count + extra, "zstd"))
    with records:
        whole = everything(b, monkeypatch, 1 << 30)
        assert len(whole) == 3 and ("remaining" in whole[0] if extra < 0 else "premature" in whole[0])
        assert everything(b, monkeypatch, 4096) == whole


def test_a_streamed_batch_past_the_bound_is_the_same_error(tmp_path, monkeypatch, engine_name):
    count = 3 * HOLD
    records, b = one_batch(tmp_path, batch_of(null_records(count), count, "zstd"))
    limit = len(null_records(count)) - 1
    with records:
        errors = []
        for piece in (1 << 30, 4096):
            monkeypatch.setattr(compression, "PIECE", piece)
            with pytest.raises(LimitExceededError) as info:
                list(b.record_chunks(limit))
            errors.append(info.value.describe())
    assert errors[0] == errors[1] and f"bound of {limit} bytes" in errors[0]
