"""``kseg.ops.rebuild.rebuild``: Kafka's recovery reproduced on the corpus, byte for byte."""

from __future__ import annotations

import os
import shutil

import pytest

from kseg.ops.rebuild.rebuild import recover_partition, recover_segment, resolve
from kseg.ops.rebuild.write import rebuilt_files
from kseg.storage import files
from kseg.storage.partition import scan_partition
from kseg.storage.producer_state import ProducerState
from kseg.testing.writer import (
    RecordSpec,
    build_control_batch,
    build_control_record_batch,
    build_v2_batch,
    write_partition,
)
from tests.conftest import CORPUS_DATA
from tests.stores import local

CASES = sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir())
# Appends of several batches (follower fetches, uncompressed v0/v1 produce requests: one
# index entry per append), a segment never closed, and the damaged copies.
NOT_ONE_BATCH_PER_APPEND = {"follower-v2-0", "v0-none-0", "v1-none-0", "v1-logappendtime-none-0", "prealloc-index-0"}
IDENTICAL = [c for c in CASES if c not in NOT_ONE_BATCH_PER_APPEND and not c.startswith("corrupt-")]


def rebuild_dir(path) -> dict:
    """{segment name: Recovered} for every segment of a directory."""
    notes: list[str] = []
    (target,) = resolve([str(path)], notes)
    return {rec.segment.name: rec for rec in recover_partition(target)}


def existing(path, name: str, kind: str) -> bytes | None:
    p = os.path.join(path, name + kind)
    return open(p, "rb").read() if os.path.exists(p) else None


@pytest.mark.parametrize("name", IDENTICAL)
def test_byte_identical_to_the_brokers_files(name: str) -> None:
    d = CORPUS_DATA / name
    recs = rebuild_dir(d)
    assert recs
    for seg_name, rec in recs.items():
        assert rec.truncated == 0 and rec.stop is None and rec.failure is None
        for kind, data in rebuilt_files(rec).items():
            assert data == existing(d, seg_name, kind), (seg_name, kind)


def test_the_txn_index_carries_producer_state_across_segments() -> None:
    """Segment 36's .txnindex holds an aborted transaction that started in segment 0."""
    d = CORPUS_DATA / "txn-v2-0"
    recs = rebuild_dir(d)
    later = recs["00000000000000000036"].txn_entries
    assert any(first < 36 for _, first, _, _ in later), later
    assert recs["00000000000000000036"].txn_index_bytes() == existing(d, "00000000000000000036", ".txnindex")
    # The same from segment 36 alone: the earlier segment is replayed for producer state.
    (target,) = resolve([str(d / "00000000000000000036.log")], [])
    (rec,) = recover_partition(target)
    assert rec.txn_index_bytes() == existing(d, "00000000000000000036", ".txnindex")
    # Without that state, the transaction that began in segment 0 is lost.
    seg = scan_partition(str(d), store=local()).segments[1]
    assert recover_segment(seg, ProducerState()).txn_entries != later


@pytest.mark.parametrize("name", sorted(NOT_ONE_BATCH_PER_APPEND - {"prealloc-index-0"}))
def test_multi_batch_appends_get_one_entry_per_batch(name: str) -> None:
    """The broker indexed (last offset of the append, start of the append); recovery indexes each batch."""
    d = CORPUS_DATA / name
    (rec,) = rebuild_dir(d).values()
    assert rec.truncated == 0
    assert rec.index_bytes() != existing(d, rec.segment.name, ".index")
    assert len(rec.offset_entries) > len(existing(d, rec.segment.name, ".index")) // 8
    # Every entry points at a batch holding its offset as last offset.
    from kseg.storage.records import FileRecords

    with FileRecords(rec.segment.log, store=local()) as records:
        for offset, position in rec.offset_entries:
            assert records.batch_at(position).last_offset == offset


def test_a_preallocated_segment_gets_its_used_entries_without_the_zero_tail() -> None:
    d = CORPUS_DATA / "prealloc-index-0"
    (rec,) = rebuild_dir(d).values()
    old_index = existing(d, rec.segment.name, ".index")
    old_time = existing(d, rec.segment.name, ".timeindex")
    assert (len(old_index), len(old_time)) == (65536, 65532)
    assert old_index.startswith(rec.index_bytes()) and not any(old_index[len(rec.index_bytes()) :])
    assert len(rec.offset_entries) == 19
    assert old_time.startswith(rec.time_index_bytes()[:-12])  # the crash left no final entry


@pytest.mark.parametrize(
    "name,valid,truncated,stop",
    [
        ("corrupt-crc-0", 3117, 25520, "Record is corrupt (stored crc = 209471313, computed crc = 1767657066)"),
        ("corrupt-compressed-0", 1325, 27619, "Record is corrupt (stored crc = "),
        ("corrupt-truncated-0", 25466, 37, None),
        ("corrupt-garbage-tail-0", 28637, 20, "found record size 5 smaller than minimum record overhead (14)"),
    ],
)
def test_recovery_stops_at_the_first_invalid_batch(name: str, valid: int, truncated: int, stop) -> None:
    d = CORPUS_DATA / name
    before = {p: (d / p).read_bytes() for p in os.listdir(d)}
    (rec,) = rebuild_dir(d).values()
    assert (rec.valid_bytes, rec.truncated) == (valid, truncated)
    if stop is None:
        assert rec.stop is None  # a partial last batch ends iteration silently
    else:
        assert rec.stop.message.startswith(stop) and rec.stop.position == valid
    assert {p: (d / p).read_bytes() for p in os.listdir(d)} == before  # the log is never touched
    # The entries are those of the valid prefix: what plain-v2-0 gives for the same batches.
    plain = rebuild_dir(CORPUS_DATA / "plain-v2-0")["00000000000000000000"]
    if name != "corrupt-compressed-0":
        assert rec.offset_entries == [e for e in plain.offset_entries if e[1] < valid]


@pytest.mark.parametrize(
    "name,segment,source",
    [
        ("corrupt-index-0", "00000000000000000000", ".index"),
        ("corrupt-timeindex-0", "00000000000000000251", ".timeindex"),
    ],
)
def test_damaged_indexes_rebuild_to_the_originals(name: str, segment: str, source: str) -> None:
    rec = rebuild_dir(CORPUS_DATA / name)[segment]
    files_ = rebuilt_files(rec)
    assert files_[source] != existing(CORPUS_DATA / name, segment, source)
    for kind in (".index", ".timeindex"):
        assert files_[kind] == existing(CORPUS_DATA / "plain-v2-0", segment, kind)


@pytest.mark.parametrize("interval", [0, 1, 1000, 100_000])
def test_the_interval_rule(interval: int) -> None:
    (target,) = resolve([str(CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log")], [])
    (rec,) = recover_partition(target, index_interval_bytes=interval)
    from kseg.storage.records import FileRecords

    with FileRecords(rec.segment.log, store=local()) as records:
        batches = [(b.position, b.last_offset) for b in records.batches()]
    expected, last = [], 0
    for position, last_offset in batches:
        if position - last > interval:
            expected.append((last_offset, position))
            last = position
    assert rec.offset_entries == expected


# -- Kafka's recovery failures, on segments built with the test writer ----------------------------
def _data(base: int, n: int = 3, ts: int = 1000, **kw) -> bytes:
    return build_v2_batch([RecordSpec(b"k", b"v" * 100, ts + i) for i in range(n)], base_offset=base, **kw)


def _recover_one(tmp_path, batches, **kw):
    (tmp_path / "00000000000000000000.log").write_bytes(b"".join(batches))  # no index rules to obey
    (target,) = resolve([str(tmp_path)], [])
    (rec,) = recover_partition(target, **kw)
    return rec


def test_offsets_going_backwards_fail_like_kafka(tmp_path) -> None:
    """OffsetIndex.append throws InvalidOffsetException; LogLoader truncates the segment."""
    rec = _recover_one(tmp_path, [_data(0), _data(10), _data(5)], index_interval_bytes=0)
    assert rec.failure is not None and rec.failure.truncates_segment
    assert rec.failure.message.startswith("InvalidOffsetException")
    assert rebuilt_files(rec)  # the bytes exist, but kseg writes none (see rebuild_write)


def test_offset_overflow(tmp_path) -> None:
    rec = _recover_one(tmp_path, [_data(0), _data(1 << 31)])
    assert rec.failure.message.startswith("LogSegmentOffsetOverflowException")


def test_a_non_marker_control_batch_with_a_producer_id_fails(tmp_path) -> None:
    bad = build_control_record_batch(2, b"\0\0", base_offset=3, timestamp=1000, producer_id=7, producer_epoch=0)
    rec = _recover_one(tmp_path, [_data(0), bad])
    assert rec.failure.message.startswith("IllegalArgumentException: invalid control record type")


def test_a_short_marker_value_stops_after_its_batch(tmp_path) -> None:
    """InvalidRecordException comes from updateProducerState, after validBytes counted the batch."""
    bad = build_control_record_batch(
        0, b"\0", base_offset=3, timestamp=1000, producer_id=7, producer_epoch=0, transactional=True
    )
    rec = _recover_one(tmp_path, [_data(0, producer_id=7, producer_epoch=0, transactional=True), bad, _data(4)])
    assert rec.stop is not None and "end transaction marker" in rec.stop.message
    assert rec.valid_bytes == len(_data(0, producer_id=7, producer_epoch=0, transactional=True)) + len(bad)


def test_non_transactional_write_inside_a_transaction_fails(tmp_path) -> None:
    rec = _recover_one(
        tmp_path,
        [_data(0, producer_id=7, producer_epoch=0, transactional=True), _data(3, producer_id=7, producer_epoch=0)],
    )
    assert rec.failure.message.startswith("InvalidTxnStateException")


def test_last_stable_offset_is_the_earliest_other_open_transaction(tmp_path) -> None:
    txn = dict(producer_epoch=0, transactional=True)
    appends = [
        [_data(0, producer_id=1, **txn)],  # pid 1 opens at 0
        [_data(3, producer_id=2, **txn)],  # pid 2 opens at 3
        [
            build_control_batch(
                "ABORT", base_offset=6, producer_id=1, producer_epoch=0, coordinator_epoch=1, timestamp=2000
            )
        ],  # lso = 3 (pid 2 still open)
        [
            build_control_batch(
                "ABORT", base_offset=7, producer_id=2, producer_epoch=0, coordinator_epoch=1, timestamp=2000
            )
        ],  # lso = 8
        [
            build_control_batch(
                "COMMIT", base_offset=8, producer_id=3, producer_epoch=0, coordinator_epoch=1, timestamp=2000
            )
        ],  # no open transaction: nothing
    ]
    write_partition(tmp_path, appends)
    rec = rebuild_dir(tmp_path)["00000000000000000000"]
    assert rec.txn_entries == [(1, 0, 6, 3), (2, 3, 7, 8)]
    assert rec.txn_index_bytes() == existing(tmp_path, "00000000000000000000", ".txnindex")


def test_later_segments_are_noted_after_a_truncation(tmp_path) -> None:
    shutil.copytree(CORPUS_DATA / "plain-v2-0", tmp_path / "p-0")
    log = tmp_path / "p-0" / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[4858] ^= 0x5A
    log.write_bytes(bytes(data))
    recs = rebuild_dir(tmp_path / "p-0")
    assert recs["00000000000000000000"].truncated > 0
    assert "would delete this segment" in recs["00000000000000000251"].notes[0]


def test_an_empty_log_gives_empty_indexes(tmp_path) -> None:
    (tmp_path / "00000000000000000007.log").write_bytes(b"")
    (target,) = resolve([str(tmp_path / "00000000000000000007.log")], [])
    (rec,) = recover_partition(target)
    assert rebuilt_files(rec) == {files.INDEX: b"", files.TIME_INDEX: b"", files.TXN_INDEX: None}


def test_rebuilt_index_bytes_are_the_entries_packed_in_the_file_layout() -> None:
    """The entries are kept as arrays and packed 4,096 at a time: the bytes are each entry's, in order."""
    import random

    from kseg.format.indexes import OFFSET_ENTRY, TIME_ENTRY
    from kseg.ops.rebuild.recovered import Recovered
    from kseg.storage.partition import Segment

    rng = random.Random(7)
    base = 1_000_000
    rec = Recovered(Segment(base_offset=base, store=local()))
    for i in range(10_001):  # three pack calls
        rec.index_offsets.append(base + 3 * i)
        rec.index_positions.append(4096 * i + rng.randrange(4096))
        rec.time_timestamps.append(1_730_000_000_000 + 5 * i)
        rec.time_offsets.append(base + 3 * i + 2)
    assert rec.index_bytes() == b"".join(OFFSET_ENTRY.pack(o - base, p) for o, p in rec.offset_entries)
    assert rec.time_index_bytes() == b"".join(TIME_ENTRY.pack(t, o - base) for t, o in rec.time_entries)
    assert len(rec.offset_entries) == len(rec.time_entries) == 10_001
    rec.drop_entries()
    assert rec.index_bytes() == rec.time_index_bytes() == b"" and rec.offset_entries == []


@pytest.mark.parametrize("tail", ["zeros", "entries"])
def test_a_large_existing_index_is_compared_in_windows_as_the_bytes_are(tmp_path, monkeypatch, tail) -> None:
    """An existing index over ``files.WHOLE_INDEX`` is read in windows (issue 19): same verdict and text."""
    from kseg.ops.rebuild import write as rebuild_write
    from kseg.ops.rebuild.compare import LargeIndex

    src = CORPUS_DATA / "plain-v2-0"
    for f in src.iterdir():
        shutil.copy(f, tmp_path / f.name)
    index = tmp_path / "00000000000000000000.index"
    good = index.read_bytes()
    extra = bytes(8 * 5000) if tail == "zeros" else (b"\x00\x00\x7f\x00\x00\x00\x00\x10" * 5000)
    index.write_bytes(good + extra)
    small = rebuild_write.check(
        recover_segment(scan_partition(str(tmp_path), store=local()).segments[0], ProducerState())
    )
    monkeypatch.setattr(files, "WHOLE_INDEX", 1024)
    assert isinstance(rebuild_write._read(str(index), local()), LargeIndex)
    large = rebuild_write.check(
        recover_segment(scan_partition(str(tmp_path), store=local()).segments[0], ProducerState())
    )
    assert [(o.kind, o.status, o.difference, o.existing_entries) for o in large] == [
        (o.kind, o.status, o.difference, o.existing_entries) for o in small
    ]
    if tail == "zeros":  # a preallocated zero tail after the used entries is healthy (issue 20), large or not
        assert [o.status for o in large if o.kind == ".index"] == ["same"]
        assert any(o.rule and "preallocated zero tail" in o.rule for o in large)
    else:
        assert any(o.difference and "more" in o.difference for o in large)
