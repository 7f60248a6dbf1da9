"""Index layouts and Kafka's searches (``AbstractIndex.largestLowerBoundSlotFor``)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kseg.errors import CorruptIndexError, TxnVersionError
from kseg.format.indexes import OffsetIndexView, TimeIndexView, aborted_txns_of, iter_aborted_txns, txn_sanity_check
from tests.conftest import CORPUS_DATA


def _offset_index(pairs, base=100) -> OffsetIndexView:
    return OffsetIndexView(b"".join(struct.pack(">ii", o - base, p) for o, p in pairs), base)


@given(
    st.lists(st.integers(min_value=101, max_value=10**6), unique=True, max_size=3000),
    st.integers(min_value=0, max_value=2 * 10**6),
)
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
    with pytest.raises(CorruptIndexError, match="version 3 in transaction index entry 0"):
        list(iter_aborted_txns(struct.pack(">hqqqq", 3 << 8, 1, 2, 3, 4)))


def test_txn_version_is_the_entry_first_byte() -> None:
    """``AbortedTxn.version`` is ``buffer.get(0)``: the int16's first byte, signed.  A second byte is never
    read, a negative first byte is below the current version (read), and the message is Kafka's."""
    assert [e[0] for e in iter_aborted_txns(struct.pack(">hqqqq", 3, 1, 2, 3, 4))] == [0]
    assert [e[0] for e in iter_aborted_txns(struct.pack(">hqqqq", -1, 1, 2, 3, 4))] == [-1]
    entries = struct.pack(">hqqqq", 0, 1, 2, 3, 4) + struct.pack(">hqqqq", 127 << 8, 1, 2, 3, 4)
    with pytest.raises(TxnVersionError) as info:
        list(iter_aborted_txns(entries, "d/t-0/0.txnindex"))
    assert info.value.position == 34
    assert info.value.message == (
        "Unexpected aborted transaction version 127 in transaction index d/t-0/0.txnindex, current version is 0"
    )


def test_txn_entries_read_in_pieces_across_entry_boundaries() -> None:
    """The stream form: entries split across pieces of any size are read whole, a partial last one is not."""
    data = (CORPUS_DATA / "txn-v2-0" / "00000000000000000036.txnindex").read_bytes() + b"\x00" * 20
    for size in (1, 7, 33, 34, 35, 68, 100):
        pieces = [data[i : i + size] for i in range(0, len(data), size)]
        assert [p for p, _ in aborted_txns_of(pieces)] == [0, 34], size
        assert [e for _, e in aborted_txns_of(pieces)] == list(iter_aborted_txns(data))


def test_txn_sanity_check_first_fault_decides() -> None:
    """``TransactionIndex.sanityCheck``: entries in file order, each one's version before its last offset."""
    ok, low = struct.pack(">hqqqq", 0, 7, 40, 42, 40), struct.pack(">hqqqq", 0, 7, 30, 35, 30)
    bad_version, both = struct.pack(">hqqqq", 1 << 8, 7, 40, 42, 40), struct.pack(">hqqqq", 1 << 8, 7, 30, 35, 30)
    txn_sanity_check([ok], 36, "i")
    with pytest.raises(CorruptIndexError) as info:
        txn_sanity_check([ok + low + bad_version], 36, "i")
    assert not isinstance(info.value, TxnVersionError) and info.value.position == 34
    assert info.value.message == (
        "Last offset of aborted transaction AbortedTxn(version=0, producerId=7, firstOffset=30, lastOffset=35, "
        "lastStableOffset=30) in index i is less than start offset 36"
    )
    with pytest.raises(TxnVersionError):
        txn_sanity_check([ok + bad_version + low], 36, "i")
    with pytest.raises(TxnVersionError):
        txn_sanity_check([both], 36, "i")


def test_entries_are_named_and_unpack_as_before() -> None:
    index = _offset_index([(100, 0), (105, 70)])
    assert index.entry(1) == (105, 70) and index.entry(1).position == 70 and index.lookup(104).offset == 100
    t = TimeIndexView(struct.pack(">qi", 2000, 9), 50)
    ts, offset = t.entry(0)
    assert (ts, offset) == (t.entry(0).timestamp, t.entry(0).offset) == (2000, 59)


def test_one_zero_tail_rule_for_both_index_kinds() -> None:
    """Kafka's tool stops at the first entry after the first whose offset is the base offset;
    a tail counts as preallocated only if that entry's bytes are all zero."""
    offsets = OffsetIndexView(struct.pack(">ii", 0, 0) + struct.pack(">ii", 3, 70) + bytes(16), 100)
    assert (offsets.used_entries(), offsets.zero_tail(), offsets.is_zero_tail_entry(2)) == (2, 2, True)
    times = TimeIndexView(struct.pack(">qi", 5, 1) + struct.pack(">qi", 9, 0) + bytes(12), 100)
    # entry 1 has the base offset but a timestamp: Kafka's tool stops there; only entry 2 is a zero tail
    assert (times.used_entries(), times.zero_tail()) == (1, 1)
    assert _offset_index([(100, 0), (101, 5)]).used_entries() == 2


def test_iter_entries_is_entry_in_a_loop() -> None:
    index = _offset_index([(100, 0), (105, 70), (90, 9000), (2**31 + 99, 2**31 - 1)])
    assert list(index.iter_entries()) == [index.entry(n) for n in range(index.entries)]
    assert list(index.iter_entries(2)) == [index.entry(0), index.entry(1)]
    assert type(next(index.iter_entries())).__name__ == "OffsetPosition"
    times = TimeIndexView(struct.pack(">qi", 5, 1) + struct.pack(">qi", 9, 2), 10)
    assert list(times.iter_entries()) == [(5, 11), (9, 12)]


class _Source:
    """An :class:`IndexSource` over bytes that records its reads (what ``files.IndexFile`` does with a file)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.length, self.reads = data, len(data), []

    def read(self, start: int, stop: int) -> bytes:
        self.reads.append(stop - start)
        return self.data[start:stop]


@pytest.mark.parametrize("kind", [OffsetIndexView, TimeIndexView])
@pytest.mark.parametrize("tail", [0, 1, 5000])
def test_a_source_read_in_windows_answers_as_the_bytes(kind, tail, monkeypatch) -> None:
    """Every scan and point read of a view over a windowed source equals the one over the whole bytes,
    and no read is larger than a window."""
    from kseg.format import indexes

    monkeypatch.setattr(indexes, "WINDOW", 24 * 50)
    import random

    rng = random.Random(7)
    size = kind.entry_size
    entries = 3000
    if kind is OffsetIndexView:
        body = b"".join(struct.pack(">ii", 1 + 3 * i, 10 * i + rng.randrange(5)) for i in range(entries))
    else:
        body = b"".join(struct.pack(">qi", 10**12 + 7 * i, 1 + 3 * i) for i in range(entries))
    data = body + bytes(size * tail)
    whole, source = kind(data, 100), _Source(data)
    windowed = kind(source, 100)
    assert windowed.entries == whole.entries == entries + tail
    assert windowed.used_entries() == whole.used_entries() == entries
    assert windowed.zero_tail() == whole.zero_tail() == (tail if tail > 0 else 0)
    assert windowed.all_zero() is whole.all_zero() is False
    assert list(windowed.iter_offsets(entries)) == list(whole.iter_offsets(entries))
    assert list(windowed.iter_entries()) == list(whole.iter_entries())
    assert windowed.columns(10, 2000) == whole.columns(10, 2000)
    for target in (0, 150, 5000, 10**12 + 70, 10**13):
        assert windowed.lookup(target) == whole.lookup(target)
    assert windowed.last_entry() == whole.last_entry()
    limited = windowed.limited(entries // 2)
    assert limited.entries == entries // 2 and limited.data is source
    assert max(source.reads) <= max(indexes.WINDOW, 2000 * size)
    assert kind(_Source(bytes(size * 10)), 100).all_zero() is True


@pytest.mark.parametrize("kind", [OffsetIndexView, TimeIndexView])
def test_a_lookup_in_a_windowed_index_reads_around_its_probes_not_windows(kind) -> None:
    """A binary search over an index read in windows reads the bytes around each probe (``PROBE``), not a
    window each: 200 lookups in a 1-2 MB index read ~40 KiB each (a window each: ~1 MiB each, as the
    dump of a time index over a 256 MiB sparse offset index did, a lookup per entry); a scan entry by entry
    reads twice as many bytes each time, up to a window; every answer is the one over the whole
    bytes."""
    import random

    from kseg.format import indexes

    entries = 150_000  # either index past one window
    if kind is OffsetIndexView:
        body = struct.pack(f">{2 * entries}i", *(x for i in range(entries) for x in (1 + 3 * i, 10 * i)))
    else:
        body = b"".join(struct.pack(">qi", 10**12 + 7 * i, 1 + 3 * i) for i in range(entries))
    whole, source = kind(body, 100), _Source(body)
    windowed = kind(source, 100)
    rng = random.Random(5)
    top = 3 * entries + 200 if kind is OffsetIndexView else 10**12 + 7 * entries + 10
    for target in (rng.randrange(0, top) for _ in range(200)):
        assert windowed.lookup(target) == whole.lookup(target)
    assert sum(source.reads) < 200 * 16 * indexes.PROBE
    source.reads.clear()
    scan = kind(source, 100)  # a new view: from its first read
    assert [scan.entry(n) for n in range(entries)] == list(whole.iter_entries())
    assert source.reads[:7] == [indexes.PROBE << k for k in range(7)] and len(source.reads) < 10  # 4 KiB, 8 KiB...
