"""``kseg.format.v2_records.decode_records`` and ``V2Batch.record_chunks``: the chunked deep-iteration path.

Checked against the one-record-at-a-time reading of ``records()`` on every
corpus batch and on generated records whose varints cross the one-, two-
and three-byte boundaries, and on truncated and lying batches.
"""

from __future__ import annotations

import pytest

from kseg.errors import CorruptRecordError, KsegError
from kseg.format import v2, v2_records
from kseg.storage.records import FileRecords
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import CORPUS_DATA
from tests.stores import local

CORPUS_LOGS = sorted(CORPUS_DATA.glob("*/*.log"))
LIMIT = 1 << 24


def plain(rec):
    o, ts, seq, k, v, hs = rec
    return (o, ts, seq, None if k is None else bytes(k), None if v is None else bytes(v), hs)


def outcome(batch, chunk=None, sizes=False):
    """Records (as plain tuples) and the error text, via records() or record_chunks()."""
    got, error = [], None
    try:
        if chunk is None:
            for rec in batch.records(LIMIT):
                got.append(plain(rec))
        else:
            for recs in batch.record_chunks(LIMIT, sizes=sizes, chunk=chunk):
                assert 0 < len(recs) <= chunk or batch.codec
                got.extend(recs if sizes else [plain(r) for r in recs])
    except KsegError as exc:
        error = exc.describe()
    return got, error


def as_sizes(records):
    return [
        (o, ts, seq, -1 if k is None else len(k), -1 if v is None else len(v), hs) for o, ts, seq, k, v, hs in records
    ]


def every_batch(path):
    with FileRecords(str(path), store=local()) as records:
        try:
            for batch in records.batches():
                if batch.magic >= 2:
                    yield batch
        except KsegError:
            return


# Only the corpus logs that hold a v2 batch: on the v0/v1 logs the test would check nothing.
CORPUS_V2_LOGS = [p for p in CORPUS_LOGS if next(every_batch(p), None) is not None]


def test_corpus_has_v2_logs():
    assert len(CORPUS_V2_LOGS) >= 10, CORPUS_V2_LOGS


@pytest.mark.parametrize("path", CORPUS_V2_LOGS, ids=lambda p: p.parent.name)
def test_chunks_equal_records_on_corpus(path):
    checked = 0
    for batch in every_batch(path):
        want, want_error = outcome(batch)
        for chunk in (1, 3, 1024):
            assert outcome(batch, chunk) == (want, want_error)
        assert outcome(batch, 2, sizes=True) == (as_sizes(want), want_error)
        checked += 1
    assert checked > 0


def write(tmp_path, *batches: bytes):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(batches))
    return path


VARINT_EDGES = [0, 1, 63, 64, 65, 127, 128, 8191, 8192, 8193, 1 << 20]


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_varint_widths(tmp_path, codec):
    specs = []
    for i, n in enumerate(VARINT_EDGES):
        specs.append(
            RecordSpec(
                bytes(n % 300), bytes(n), 1_000_000 + n * (-1) ** i, headers=(("h", b"x"),) if i % 3 == 0 else ()
            )
        )
    specs.append(RecordSpec(None, None, 5))
    specs.append(RecordSpec(b"", b"", 5, headers=(("a", None), ("b", b""))))
    path = write(
        tmp_path,
        build_v2_batch(specs, base_offset=100, producer_id=7, producer_epoch=0, base_sequence=0x7FFFFFFA, codec=codec),
    )
    for batch in every_batch(path):  # one batch
        want, error = outcome(batch)
        assert error is None and len(want) == len(specs)
        sequences = [r[2] for r in want]
        assert sequences[5] == 0x7FFFFFFF and sequences[6] == 0  # incrementSequence wraps past int32 max
        for chunk in (1, 2, 5, 1024):
            assert outcome(batch, chunk) == (want, None)
        assert outcome(batch, 4, sizes=True) == (as_sizes(want), None)


def corrupt_variants():
    good = build_v2_batch([RecordSpec(b"k%d" % i, b"v" * (i * 40), i) for i in range(6)])
    yield "ok", good
    b = bytearray(good)
    b[57:61] = (7).to_bytes(4, "big")  # count says 7: premature end of records
    yield "count-too-high", bytes(b)
    b = bytearray(good)
    b[57:61] = (5).to_bytes(4, "big")  # count says 5: records still remaining
    yield "count-too-low", bytes(b)
    b = bytearray(good)
    b[57:61] = (-2).to_bytes(4, "big", signed=True)
    yield "count-negative", bytes(b)
    b = bytearray(good)
    b[61] += 2  # the first record claims one byte more than it has
    yield "garbled", bytes(b)
    b = bytearray(good)
    b[-3:] = b"\xff\xff\xff"  # a varint running off the end of the batch
    yield "runaway-varint", bytes(b)


@pytest.mark.parametrize("name,raw", list(corrupt_variants()), ids=[n for n, _ in corrupt_variants()])
def test_corrupt_batches_hand_out_the_same_records_then_the_same_error(tmp_path, name, raw):
    path = write(tmp_path, raw)
    seen = 0
    for batch in every_batch(path):
        seen += 1
        want, error = outcome(batch)
        assert (error is None) == (name == "ok")
        for chunk in (1, 2, 1024):
            assert outcome(batch, chunk) == (want, error)
        assert outcome(batch, 1, sizes=True) == (as_sizes(want), error)
    assert seen == 1


def test_decode_records_returns_the_error_with_the_records_before_it():
    raw = build_v2_batch([RecordSpec(b"k", b"v", i) for i in range(3)])
    cut = raw[:-4]  # the last record is cut short
    records, pos, read, error = v2_records.decode_records(memoryview(cut), 61, len(cut), 3, 0, 10, 0, 0, -1, None)
    assert len(records) == 2 and read == 3
    assert isinstance(error, CorruptRecordError)


def test_batch_header_names_match_the_index_constants():
    """Code that indexes headers (``h[v2.PRODUCER_ID]``, scan's plain tuples) and code that names
    fields read the same values."""
    raw = v2.HEADER.pack(1, 2, 3, 2, 5, 0x35, 7, 8, 9, 10, 11, 12, 13)
    named = v2.header_from(raw)
    plain = v2.HEADER.unpack(raw)
    assert tuple(named) == plain and v2.BatchHeader._make(plain) == named
    constant_field = {
        "BASE_OFFSET": "base_offset",
        "LENGTH": "batch_length",
        "LEADER_EPOCH": "partition_leader_epoch",
        "MAGIC": "magic",
        "CRC": "crc",
        "ATTRIBUTES": "attributes",
        "LAST_OFFSET_DELTA": "last_offset_delta",
        "BASE_TIMESTAMP": "base_timestamp",
        "MAX_TIMESTAMP": "max_timestamp",
        "PRODUCER_ID": "producer_id",
        "PRODUCER_EPOCH": "producer_epoch",
        "BASE_SEQUENCE": "base_sequence",
        "COUNT": "records_count",
    }
    assert sorted(constant_field.values()) == sorted(v2.BatchHeader._fields)  # every field named once
    for constant, field in constant_field.items():
        index = getattr(v2, constant)
        assert plain[index] == named[index] == getattr(named, field)
