"""The compiled engine's record decoder against the pure-Python rule (issue 12).

``v2_records.decode_records`` (the C engine, handing back to the rule at the first
record it does not accept) and ``v2_records.decode_records_py`` (the rule) must
return the same records, stop at the same place and raise the same error at
the same byte position: on generated batches (hypothesis round trips, varints
of every length, headers, null keys and values, LogAppendTime, sequences
that wrap) and on every corpus batch damaged in many ways (bit flips,
truncation, lying lengths and counts, over-long varints).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kseg import engine
from kseg.format import v2, v2_records
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import CORPUS_DATA

pytestmark = pytest.mark.skipif(
    engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)"
)

CHUNKS = (1, 3, 1024)


def plain(records: list) -> list:
    return [
        (
            o,
            t,
            s,
            k if k is None or isinstance(k, int) else bytes(k),
            v if v is None or isinstance(v, int) else bytes(v),
            h,
        )
        for o, t, s, k, v, h in records
    ]


def run(fn, buf, count: int, args: tuple, form: int, chunk: int) -> list:
    """Every call of a chunked ``decode_chunk`` over ``buf`` (records, stop position, read, error as text,
    whether the chunk's offsets run in steps of one); each chunk's flag checked against its offsets.  The
    records are kept as decoded: a key or value slice is a memoryview, which compares by its bytes."""
    pos, read, out = v2.HEADER_SIZE, 0, []
    end, view = len(buf), memoryview(buf)
    for _ in range(count // chunk + 2):
        records, pos, read, error, consecutive = fn(view, pos, end, count, read, chunk, *args, form)
        if len(records) > 1:
            first = records[0][0]
            steps = [r[0] for r in records] == list(range(first, first + len(records)))
        else:
            steps = True  # no record or one: nothing out of step
        assert consecutive == steps, [r[0] for r in records]
        shown = None if error is None else (type(error).__name__, error.message, error.position)
        out.append((records, pos, read, shown, consecutive))
        if error is not None or read >= count:
            break
    return out


def same(batch: bytes) -> None:
    """Both decoders agree on ``batch`` (a v2 batch's bytes, possibly damaged), for every chunking and form
    (slices, sizes, spans), and spans cover what slices do."""
    if len(batch) < v2.HEADER_SIZE:
        return
    h = v2.header_from(batch)
    attrs = h.attributes
    args = (
        h.base_offset,
        h.base_timestamp,
        h.base_sequence,
        h.max_timestamp if attrs & v2.TIMESTAMP_TYPE_FLAG else None,
    )
    count = min(h.records_count, 5000)
    slices = {}
    for form in (v2_records.SLICES, v2_records.SIZES, v2_records.SPANS):
        for chunk in CHUNKS:
            got = run(v2_records.decode_chunk, batch, count, args, form, chunk)
            assert got == run(v2_records.decode_chunk_py, batch, count, args, form, chunk), (form, chunk)
            if chunk == CHUNKS[0]:  # decode_records: decode_chunk without the flag, on both engines
                first = (memoryview(batch), v2.HEADER_SIZE, len(batch), count, 0, chunk, *args, form)
                for records in (v2_records.decode_records, v2_records.decode_records_py):
                    r, pos, read, error = records(*first)
                    shown = None if error is None else (type(error).__name__, error.message, error.position)
                    assert (r, pos, read, shown) == got[0][:4]
            if form == v2_records.SLICES:
                slices[chunk] = got
            elif form == v2_records.SPANS:
                mv = memoryview(batch)
                assert [
                    (
                        plain(
                            [
                                (o, t, s, v2_records.span_slice(mv, k), v2_records.span_slice(mv, v), h)
                                for o, t, s, k, v, h in recs
                            ]
                        ),
                        *rest,
                    )
                    for recs, *rest in got
                ] == slices[chunk]


def corpus_batches() -> list[bytes]:
    """Every uncompressed v2 batch of the corpus, each distinct one once (copies of a segment repeat them)."""
    out = []
    for log in sorted(CORPUS_DATA.glob("*/*.log")):
        data = log.read_bytes()
        pos = 0
        while pos + 17 <= len(data):
            length = int.from_bytes(data[pos + 8 : pos + 12], "big", signed=True)
            if length < 14 or pos + 12 + length > len(data):
                break
            if data[pos + 16] == 2 and data[pos + 21] & 0x07 == 0:  # uncompressed v2: records in place
                out.append(data[pos : pos + 12 + length])
            pos += 12 + length
    return list(dict.fromkeys(out))


BATCHES = corpus_batches()


def test_corpus_batches_decode_the_same() -> None:
    assert len(BATCHES) > 20
    for batch in BATCHES:
        same(batch)


def mutations(batch: bytes, rng: random.Random):
    b = bytearray(batch)
    n = len(b)
    yield bytes(b[: rng.randrange(v2.HEADER_SIZE, n)]) if n > v2.HEADER_SIZE else bytes(b)  # truncated
    for _ in range(6):  # bit flips in the records
        c = bytearray(b)
        if n > v2.HEADER_SIZE:
            i = rng.randrange(v2.HEADER_SIZE, n)
            c[i] ^= 1 << rng.randrange(8)
        yield bytes(c)
    for _ in range(3):  # random bytes over a run
        c = bytearray(b)
        if n > v2.HEADER_SIZE + 4:
            i = rng.randrange(v2.HEADER_SIZE, n - 4)
            c[i : i + 4] = bytes(rng.randrange(256) for _ in range(4))
        yield bytes(c)
    for count in (0, 1, -1, 2**31 - 1, rng.randrange(0, 300)):  # lying record counts
        c = bytearray(b)
        c[57:61] = count.to_bytes(4, "big", signed=True)
        yield bytes(c)
    c = bytearray(b)  # a record-length varint of 11 bytes
    c[v2.HEADER_SIZE : v2.HEADER_SIZE] = b"\xff" * 11
    yield bytes(c)


def test_damaged_corpus_batches_fail_the_same() -> None:
    rng = random.Random(12)
    for batch in BATCHES:
        for damaged in mutations(batch, rng):
            same(damaged)


def test_offsets_out_of_step_are_told() -> None:
    """decode_chunk's ``consecutive``: offsets that repeat, go back, jump, or wrap past int64 (the engine
    hands those to the rule) break the steps of one, on both engines."""
    for deltas, base in (
        ((0, 1, 2, 3), 0),
        ((0, 2, 1, 3), 0),
        ((0, 0), 5),
        ((3, 4, 5, 9), 7),
        ((0, 1), 2**63 - 2),
        ((0, 1, 2), 2**63 - 2),
        ((0, 2**31 - 1), 0),
        ((1, 0, 1, 2), 0),
    ):
        same(build_v2_batch([RecordSpec(b"k", b"v", 1, offset_delta=d) for d in deltas], base_offset=base))


def test_wide_values_and_wraps() -> None:
    recs = [
        RecordSpec(b"k" * 200, b"v" * 20000, 2**40, headers=(("h", b"x"), ("e", None)), offset_delta=5),
        RecordSpec(None, None, -(2**40), offset_delta=2**31 - 1),
        RecordSpec(b"\xed\xa0\x80", "é€😀".encode(), 0),
    ]
    for kw in (
        {},
        {"base_sequence": 2**31 - 3, "producer_id": 7, "producer_epoch": 1},
        {"timestamp_type": "LogAppendTime", "log_append_time": 123456789},
        {"base_offset": 2**63 - 2},
    ):
        same(build_v2_batch(recs, **kw))


def test_varints_at_each_width_and_cut_inside_them() -> None:
    """Lengths, sizes and deltas at the edges of one-, two-, three- and four-byte varints (the rule reads up
    to three inline), and each record's head cut at every byte (a varint that runs past the data)."""
    edges = (63, 64, 8191, 8192, (1 << 20) - 1, 1 << 20)  # zig-zag: the largest of n bytes, the least of n + 1
    recs = [RecordSpec(bytes(n % 9000), bytes(n), n, offset_delta=n) for n in edges]
    recs += [RecordSpec(None, b"v", -n, offset_delta=-n) for n in edges]
    batch = build_v2_batch(recs)
    same(batch)
    for n in edges[:4]:
        one = build_v2_batch([RecordSpec(b"k", bytes(n), n, offset_delta=n)])
        for cut in range(v2.HEADER_SIZE, v2.HEADER_SIZE + 12):
            same(one[:cut])


blob = st.one_of(st.none(), st.binary(max_size=300))
record = st.builds(
    RecordSpec,
    key=blob,
    value=blob,
    timestamp=st.integers(-(2**45), 2**45),
    headers=st.lists(st.tuples(st.text(max_size=5), blob), max_size=3).map(tuple),
    offset_delta=st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(record, min_size=1, max_size=20),
    st.integers(0, 2**40),
    st.integers(-1, 2**31 - 1),
    st.randoms(use_true_random=False),
)
def test_round_trips_decode_the_same(records, base_offset, base_sequence, rnd) -> None:
    batch = build_v2_batch(
        records, base_offset=base_offset, base_sequence=base_sequence, producer_id=1 if base_sequence >= 0 else -1
    )
    same(batch)
    for damaged in mutations(batch, rnd):
        same(damaged)


def test_an_end_past_the_buffer_is_the_rules() -> None:
    """An ``end`` past the buffer (never passed by kseg's callers): the engine reads only the buffer
    and leaves the last record to the rule, which reports the bytes still expected after it."""
    batch = build_v2_batch([RecordSpec(b"k", b"v", 1), RecordSpec(None, b"w", 2)])
    args = (0, 1, -1, None)
    for form in (v2_records.SLICES, v2_records.SIZES, v2_records.SPANS):
        for end in (len(batch) + 1, 2**32 + 5):
            got = v2_records.decode_records(memoryview(batch), v2.HEADER_SIZE, end, 2, 0, 10, *args, form)
            want = v2_records.decode_records_py(memoryview(batch), v2.HEADER_SIZE, end, 2, 0, 10, *args, form)
            assert plain(got[0]) == plain(want[0]) and len(got[0]) == 1 and got[1:3] == want[1:3]
            assert got[3].message == want[3].message and got[3].position == want[3].position
