"""Records of a compressed batch decoded from pieces: the same records and errors as from the whole buffer."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.errors import CorruptRecordError, KsegError
from kseg.format import v2_records, v2_stream
from kseg.testing.v2 import encode_record

ARGS = (100, 1_700_000_000_000, 5, None)
FORMS = [v2_records.SLICES, v2_records.SIZES, v2_records.SPANS]


def _plain(buf: memoryview, rec: tuple, form: int) -> tuple:
    """A record with its key and value as bytes (slices and spans read), comparable across buffers."""
    if form == v2_records.SLICES:
        return (*rec[:3], *(None if x is None else bytes(x) for x in rec[3:5]), rec[5])
    if form == v2_records.SPANS:
        return (*rec[:3], *(None if x is None else bytes(v2_records.span_slice(buf, x)) for x in rec[3:5]), rec[5])
    return rec


def decoded(stream: v2_stream.RecordPieces, n: int, form: int) -> tuple[list, tuple | None]:
    """Every record ``stream`` hands out, ``n`` at a time, and the error that ends it (message, position)."""
    out: list = []
    try:
        while not stream.done:
            buf, records, consecutive = stream.take(n)
            assert records
            if stream.steps:
                assert consecutive == v2_records.in_steps(records)
            out += [_plain(memoryview(buf), r, form) for r in records]
    except KsegError as exc:
        assert isinstance(exc, CorruptRecordError)
        return out, (str(exc), exc.position)
    return out, None


def whole(raw: bytes, count: int, form: int, steps: bool) -> v2_stream.RecordPieces:
    return v2_stream.RecordPieces(raw, iter(()), len(raw), count, ARGS, form, steps)


def split(raw: bytes, cuts: list[int], count: int, form: int, steps: bool) -> v2_stream.RecordPieces:
    at = sorted({c % (len(raw) + 1) for c in cuts} | {0, len(raw)})
    pieces = [raw[a:b] for a, b in zip(at, at[1:], strict=False) if b > a]
    return v2_stream.RecordPieces(b"", iter(pieces), len(raw), count, ARGS, form, steps)


def records_bytes(specs: list[tuple[bytes | None, bytes | None, int]]) -> bytes:
    return b"".join(encode_record(i, i * 3, k, v, [("h", b"x")] * hs) for i, (k, v, hs) in enumerate(specs))


_record = st.tuples(
    st.one_of(st.none(), st.binary(max_size=40)), st.one_of(st.none(), st.binary(max_size=300)), st.integers(0, 2)
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specs=st.lists(_record, min_size=0, max_size=30),
    cuts=st.lists(st.integers(0, 1 << 16), max_size=12),
    count_delta=st.integers(-3, 3),
    flips=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=3),
    tail=st.binary(max_size=8),
    n=st.integers(1, 9),
    form=st.sampled_from(FORMS),
    steps=st.booleans(),
)
def test_pieces_decode_as_the_whole_buffer(specs, cuts, count_delta, flips, tail, n, form, steps) -> None:
    raw = bytearray(records_bytes(specs) + tail)
    for at, byte in flips:
        if raw:
            raw[at % len(raw)] = byte
    raw = bytes(raw)
    count = max(0, len(specs) + count_delta)
    if count == 0:
        return
    expected = decoded(whole(raw, count, form, steps), n, form)
    assert decoded(split(raw, cuts, count, form, steps), n, form) == expected
    one_byte = v2_stream.RecordPieces(
        b"", iter([raw[i : i + 1] for i in range(len(raw))]), len(raw), count, ARGS, form, steps
    )
    assert decoded(one_byte, n, form) == expected


def test_a_record_straddling_pieces_is_carried_over() -> None:
    values = [bytes([i]) * 1000 for i in range(5)]
    raw = records_bytes([(b"k", v, 0) for v in values])
    pieces = [raw[i : i + 700] for i in range(0, len(raw), 700)]  # every record cut at least once
    stream = v2_stream.RecordPieces(b"", iter(pieces), len(raw), 5, ARGS, v2_records.SLICES, False)
    got, error = decoded(stream, 100, v2_records.SLICES)
    assert error is None
    assert [r[4] for r in got] == values
    assert [r[0] for r in got] == [100, 101, 102, 103, 104]
    assert len(stream.buf) < 2 * 700 + 1100  # one piece and one partial record held, not the stream


@pytest.mark.parametrize("form", FORMS)
def test_an_error_past_a_piece_boundary_has_its_position_in_the_stream(form: int) -> None:
    raw = records_bytes([(b"k", b"v" * 100, 0)] * 20)
    count = 21  # one more than there are: premature end at the stream's end
    pieces = [raw[i : i + 97] for i in range(0, len(raw), 97)]
    got, error = decoded(v2_stream.RecordPieces(b"", iter(pieces), len(raw), count, ARGS, form, True), 4, form)
    assert len(got) == 20
    assert error is not None and "premature end of records (record 21 of 21)" in error[0]
    assert error[1] == len(raw)
    assert decoded(whole(raw, count, form, True), 4, form)[1] == error


def test_records_remaining_after_the_last_is_found_without_reading_the_rest() -> None:
    raw = records_bytes([(None, None, 0)] * 50_000)
    pieces = iter([raw[i : i + 1000] for i in range(0, len(raw), 1000)])
    stream = v2_stream.RecordPieces(b"", pieces, len(raw), 2, ARGS, v2_records.SIZES, False)
    got, error = decoded(stream, 10, v2_records.SIZES)
    assert len(got) == 1
    assert error is not None and "records still remaining after the last record" in error[0]
    assert len(list(pieces)) > 90  # the rest of the stream was never asked for


def test_open_records_keeps_one_piece_and_opens_a_longer_stream_again() -> None:
    raw = records_bytes([(b"k", b"v", 0)] * 10)
    opened: list[int] = []

    def opener(size: int):
        def open_():
            opened.append(size)
            return iter([raw[i : i + size] for i in range(0, len(raw), size)])

        return open_

    stream, again = v2_stream.open_records(opener(len(raw)), 10, ARGS, v2_records.SLICES, False)
    assert decoded(stream, 3, v2_records.SLICES)[1] is None
    assert decoded(again(v2_records.SIZES, False), 3, v2_records.SIZES)[1] is None
    assert opened == [len(raw)]  # one piece: decompressed once, kept
    stream, again = v2_stream.open_records(opener(7), 10, ARGS, v2_records.SLICES, False)
    assert decoded(stream, 3, v2_records.SLICES) == decoded(whole(raw, 10, v2_records.SLICES, False), 3, 0)
    assert decoded(again(v2_records.SIZES, False), 3, v2_records.SIZES)[1] is None
    assert opened == [len(raw), 7, 7, 7]  # measured once, then opened for each reading
