"""The compiled engine's batch and record lines against the pure-Python formatter (issue 12).

``TextSink.batch_lines`` and ``TextSink.v2_records`` with the engine and
with it switched off must write the same bytes, for values at and past the
int64 limits, sequences that wrap, every flag, headers, null keys and
values, valid and malformed UTF-8 (Java's replacement rule), and items the
engine hands back (legacy batches, numbers past int64).
"""

from __future__ import annotations

import io
import itertools
from types import SimpleNamespace

import pytest

from kseg import engine
from kseg.format import v2_records
from kseg.format.strings import string_decoder
from kseg.render import text

pytestmark = pytest.mark.skipif(
    engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)"
)

I64 = (-(2**63), -1, 0, 1, 2**31 - 1, 2**63 - 1)


def written(fn, monkeypatch, use_c: bool) -> bytes:
    monkeypatch.setattr(text, "_c_lines", engine.C.record_lines if use_c else None)
    monkeypatch.setattr(text, "_c_batch_lines", engine.C.batch_lines if use_c else None)
    out = io.BytesIO()
    sink = text.TextSink(out, io.BytesIO())
    try:
        fn(sink)
    except Exception as exc:  # the same error after the same lines
        sink.flush()
        return out.getvalue() + f"\n{type(exc).__name__}: {exc}".encode()
    sink.flush()
    return out.getvalue()


def same(fn, monkeypatch) -> bytes:
    c = written(fn, monkeypatch, True)
    assert c == written(fn, monkeypatch, False)
    return c


class Legacy:
    magic, offset, size, max_timestamp, timestamp_type, codec, crc = 1, 5, 40, 7, "CreateTime", 0, 99

    def is_valid(self) -> bool:
        return True


def test_batch_lines(monkeypatch) -> None:
    items = []
    for n, (bo, delta, seq) in enumerate(itertools.product(I64, (0, 5, 2**31 - 1), (-1, 0, 2**31 - 3, 2**31 - 1))):
        attrs = (0x08, 0x10, 0x20, 0x40, 0x03, 0x7F)[n % 6]
        h = (
            bo,
            100,
            n % 3 - 1,
            2,
            2**32 - 1 - n,
            attrs,
            delta,
            I64[n % 6],
            I64[(n + 1) % 6],
            n % 4 - 1,
            n % 2 - 1,
            seq,
            n,
        )
        items.append((n * 100, 61 + n, h, n % 2 == 0))
    items.insert(7, (700, 40, None, Legacy()))
    items.append((2**70, 61, items[0][2], True))  # a position past int64: the Python formatter
    out = same(lambda s: s.batch_lines(items), monkeypatch)
    assert out.count(b"\n") == 6 and b"unknown compression type id: 7" in out  # item 5: attrs 0x7F, after 5 lines
    items = [i for i in items if i[2] is None or i[2][5] != 0x7F]
    out = same(lambda s: s.batch_lines(items), monkeypatch)
    assert out.count(b"\n") == len(items)


#: Keys and values both record-line tests format: null, empty, ASCII, multi-byte UTF-8, a lone surrogate,
#: an overlong form, past U+10FFFF, an invalid byte, control characters, an overlong 4-byte form.
BLOBS = [
    None,
    b"",
    b"ascii",
    "é€😀".encode(),
    b"\xed\xa0\x80",
    b"\xc0\xaf",
    b"\xf4\x90\x80\x80",
    b"\xff",
    b"a\x00b\nc",
    b"\xf0\x8f\xbf\xbf",
]


def test_record_lines_sizes(monkeypatch) -> None:
    b = SimpleNamespace(h=(0, 0, 0, 2, 0, 0x08, 0, 0, 0, 0, 0, 0, 0))
    recs = [
        (o, t, s, k, v, h)
        for o, t, s, k, v, h in itertools.product(
            I64 + (2**64,), I64[:2] + I64[-1:], (-1, 2**31 - 1), (-1, 0, 2**31 - 1), (-1, 7), ((), ((b"h\xff", None),))
        )
    ]
    same(lambda s: s.v2_records(b, recs), monkeypatch)


def test_record_lines_text(monkeypatch) -> None:
    b = SimpleNamespace(h=(0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    # the shared values, in this test's order, with a truncated and an overlong sequence of its own
    blobs = [*BLOBS[:5], b"\xed\xa0", *BLOBS[5:9], b"\xe0\x80\x80", *BLOBS[9:], b"x" * 100000]
    buf = memoryview(b"".join(x for x in blobs if x))
    views, at = [], 0
    for x in blobs:  # as the decoder hands them out: slices of one buffer
        views.append(None if x is None else buf[at : at + len(x)])
        at += 0 if x is None else len(x)
    recs = [
        (i, 2**63 - 1, -1, k, v, () if i % 3 else ((b"k", b"v"),))
        for i, (k, v) in enumerate(itertools.product(views, views))
    ]
    out = same(lambda s: s.v2_records(b, recs, string_decoder, string_decoder), monkeypatch)
    assert out.count(b"\n") >= len(recs)


def test_record_lines_spans(monkeypatch) -> None:
    """--print-data-log with Kafka's string decoders from spans (``position << 32 | size``) in the batch:
    the same bytes as from slices, on either engine; spans the decoder never makes (outside the buffer,
    negative, past int64) take the Python formatter's slices, as the rule would."""
    b = SimpleNamespace(h=(0, 0, 0, 2, 0, 0x08, 0, 0, 0, 0, 0, 0, 0))
    blobs = [*BLOBS, b"x" * 70000]
    buf = b"".join(x for x in blobs if x)
    mv = memoryview(buf)
    spans, at = [], 0
    for x in blobs:
        spans.append(None if x is None else at << 32 | len(x))
        at += 0 if x is None else len(x)
    recs = [
        (i, 2**62 + i, i % 3 - 1, k, v, () if i % 4 else ((b"k\xff", None), (b"j", b"v")))
        for i, (k, v) in enumerate(itertools.product(spans, spans))
    ]
    as_slices = [(o, t, s, v2_records.span_slice(mv, k), v2_records.span_slice(mv, v), h) for o, t, s, k, v, h in recs]
    out = same(lambda s: s.v2_spans(b, recs, buf), monkeypatch)
    assert out == written(lambda s: s.v2_records(b, as_slices, string_decoder, string_decoder), monkeypatch, True)
    assert out.count(b"\n") >= len(recs)
    odd = [
        (1, 2, 3, len(buf) << 32 | 1, 0, ()),
        (1, 2, 3, 0, (len(buf) - 1) << 32 | 2, ()),
        (1, 2, 3, -1, 0, ()),
        (1, 2, 3, 2**64 + 5, 0, ()),
        (2**64, 2, 3, 5, 5, ()),
    ]
    same(lambda s: s.v2_spans(b, odd, mv), monkeypatch)
