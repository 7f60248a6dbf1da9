"""Index layouts and Kafka's searches (``AbstractIndex.largestLowerBoundSlotFor``)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kseg.errors import CorruptIndexError
from kseg.format.indexes import OffsetIndexView, TimeIndexView, iter_aborted_txns
from tests.conftest import CORPUS_DATA


def _offset_index(pairs, base=100) -> OffsetIndexView:
    return OffsetIndexView(b"".join(struct.pack(">ii", o - base, p) for o, p in pairs), base)


@given(st.lists(st.integers(min_value=101, max_value=10**6), unique=True, max_size=3000),
       st.integers(min_value=0, max_value=2 * 10**6))
def test_lookup_is_the_largest_lower_bound(offsets, target) -> None:
    offsets.sort()
    index = _offset_index([(o, i * 10) for i, o in enumerate(offsets)])
    below = [(o, i * 10) for i, o in enumerate(offsets) if o <= target]
    assert index.lookup(target) == (below[-1] if below else (100, 0))


def test_corpus_index_lookup_268() -> None:
    # Kafka's documentation example: segment 251, offset 268 -> the entry just below.
    data = (CORPUS_DATA / "plain-v2-0" / "00000000000000000251.index").read_bytes()
    index = OffsetIndexView(data, 251)
    offset, position = index.lookup(268)
    assert offset <= 268 and all(index.entry(n)[0] > 268 for n in range(index.entries) if index.entry(n)[0] > offset)


def test_offset_index_sanity() -> None:
    _offset_index([(101, 0), (150, 4096)]).sanity_check()
    with pytest.raises(CorruptIndexError, match="not a multiple of 8"):
        OffsetIndexView(b"\0" * 9, 0).sanity_check()
    with pytest.raises(CorruptIndexError, match="less than the base offset"):
        OffsetIndexView(struct.pack(">ii", -5, 0), 10).sanity_check()


def test_preallocated_tail_passes_offset_sanity_but_not_time_sanity() -> None:
    d = CORPUS_DATA / "prealloc-index-0"
    OffsetIndexView((d / "00000000000000000000.index").read_bytes(), 0).sanity_check()
    with pytest.raises(CorruptIndexError, match="last timestamp is 0"):
        TimeIndexView((d / "00000000000000000000.timeindex").read_bytes(), 0).sanity_check()


def test_time_index_lookup() -> None:
    data = b"".join(struct.pack(">qi", ts, rel) for ts, rel in [(1000, 5), (2000, 9), (3000, 20)])
    t = TimeIndexView(data, 50)
    assert t.lookup(999) == (-1, 50)
    assert t.lookup(2500) == (2000, 59)
    assert t.lookup(5000) == (3000, 70)


def test_txn_index_entries() -> None:
    data = (CORPUS_DATA / "txn-v2-0" / "00000000000000000036.txnindex").read_bytes()
    assert list(iter_aborted_txns(data)) == [(0, 2002, 29, 42, 34), (0, 2001, 44, 49, 50)]
    with pytest.raises(CorruptIndexError, match="version 3"):
        list(iter_aborted_txns(struct.pack(">hqqqq", 3, 1, 2, 3, 4)))
