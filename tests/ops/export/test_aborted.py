"""``export``'s ``aborted`` column and ``--isolation read_committed`` (issue 32): Kafka's consumer rule.

A partition of three segments: producer 7's first transaction (offsets 0..1) is aborted by a marker in
the *next* segment (its ``.txnindex`` entry is there, ``firstOffset`` in the segment before), its second
(offsets 5..6) is committed; producer 8 writes without transactions throughout; producer 9 aborts a
transaction inside one segment.  Each record's ``aborted`` is what a ``read_committed`` consumer decides,
whatever split or task reads it (a task's share of the listing keeps the later ``.txnindex`` files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kseg.ops.export.export import Corruption, Ranges, plan, read_split, units
from kseg.spark.deal import deal_in_order, packing
from kseg.storage.listing import Listed
from kseg.storage.partition import scan_partition
from kseg.storage.stores.find import discover_as
from kseg.testing.control import build_control_batch
from kseg.testing.segment import SegmentWriter
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import run_cli
from tests.stores import local

T = 1_700_000_000_000
ABORTED = {0, 1, 10, 11}  # producer 7's first transaction, producer 9's
CONTROL = {4, 7, 12}


def _data(offset: int, pid: int, txn: bool) -> bytes:
    return build_v2_batch(
        [RecordSpec(b"k", b"v%d" % offset, T + offset)],
        base_offset=offset,
        producer_id=pid,
        producer_epoch=0,
        base_sequence=offset,
        transactional=txn,
    )


def _marker(kind: str, offset: int, pid: int) -> bytes:
    return build_control_batch(
        kind, base_offset=offset, producer_id=pid, producer_epoch=0, coordinator_epoch=1, timestamp=T + offset
    )


def _write(directory: Path, base: int, batches: list[bytes], aborted: list[tuple[int, int, int]] = ()) -> None:
    w = SegmentWriter(directory, base, index_interval_bytes=1)
    for b in batches:
        w.append([b])
    for pid, first, last in aborted:
        w.add_aborted_txn(pid, first, last, first)
    w.close()


@pytest.fixture
def partition(tmp_path: Path) -> Path:
    d = tmp_path / "orders-0"
    d.mkdir()
    _write(d, 0, [_data(0, 7, True), _data(1, 7, True), _data(2, 8, False)])
    _write(d, 3, [_data(3, 8, False), _marker("ABORT", 4, 7), _data(5, 7, True), _data(6, 7, True)], [(7, 0, 4)])
    _write(
        d,
        7,
        [_marker("COMMIT", 7, 7), _data(8, 8, False), _data(9, 8, False), _data(10, 9, True), _data(11, 9, True)]
        + [_marker("ABORT", 12, 9), _data(13, 8, False)],
        [(9, 10, 12)],
    )
    return d


def _facts(splits, committed: bool = False) -> list:
    out = []
    for split in splits:
        for item in read_split(split, committed=committed):
            assert not isinstance(item, Corruption), item
            out.append(item)
    return out


def test_aborted_as_a_read_committed_consumer_decides(partition: Path) -> None:
    facts = _facts(plan([scan_partition(str(partition), store=local())]))
    assert [f.offset for f in facts] == list(range(14))
    assert {f.offset for f in facts if f.aborted} == ABORTED
    assert {f.offset for f in facts if f.is_control} == CONTROL
    committed = _facts(plan([scan_partition(str(partition), store=local())]), committed=True)
    assert [f.offset for f in committed] == sorted(set(range(14)) - ABORTED - CONTROL)


@pytest.mark.parametrize("split_bytes", [100, 1 << 20])
def test_every_task_share_decides_the_same(partition: Path, split_bytes: int) -> None:
    """Tasks of one unit each (a share cut to its segment): the segment 0 task still sees segment 3's
    ``.txnindex``; a range starting past a transaction's marker does not inherit it."""
    deals = deal_in_order(discover_as([str(partition)], [], Listed), Ranges(), split_bytes, packing(1, 1))
    assert len(deals) >= 3
    from kseg.ops.export.export import unit_splits

    facts = _facts(
        s for d in deals for u in d.units(Ranges(), split_bytes) for s in unit_splits(u, Ranges(), split_bytes)
    )
    assert {f.offset for f in facts if f.aborted} == ABORTED
    ranged = _facts(
        s
        for u in units([scan_partition(str(partition), store=local())], Ranges(from_offset=5))
        for s in plan_one(u, Ranges(from_offset=5))
    )
    assert {f.offset for f in ranged if f.aborted} == ABORTED - {0, 1}


def plan_one(unit, ranges):
    from kseg.ops.export.export import unit_splits

    return unit_splits(unit, ranges)


def test_cli_isolation_and_column(partition: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "all.parquet"
    r = run_cli(["export", str(partition), "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    rows = pq.read_table(out).to_pylist()
    assert {row["offset"] for row in rows if row["aborted"]} == ABORTED
    out = tmp_path / "rc.parquet"
    r = run_cli(["export", "--isolation", "read_committed", str(partition), "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    rows = pq.read_table(out).to_pylist()
    assert [row["offset"] for row in rows] == sorted(set(range(14)) - ABORTED - CONTROL)
    assert not any(row["aborted"] or row["isControl"] for row in rows)


def test_read_committed_stops_at_the_last_stable_offset(partition: Path, tmp_path: Path) -> None:
    """A transaction still open at the log end (no marker) holds the last stable offset: a read_committed
    consumer is given nothing from its first offset on, non-transactional records after it included."""
    import pyarrow.parquet as pq

    _write(partition, 14, [_data(14, 10, True), _data(15, 8, False), _data(16, 10, True)])
    out = tmp_path / "rc.parquet"
    r = run_cli(["export", "--isolation", "read_committed", str(partition), "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    assert [row["offset"] for row in pq.read_table(out).to_pylist()] == sorted(set(range(14)) - ABORTED - CONTROL)
    everything = run_cli(["export", str(partition), "-o", str(tmp_path / "all.parquet")])
    assert everything.exit_code == 0
    rows = pq.read_table(tmp_path / "all.parquet").to_pylist()
    assert [row["offset"] for row in rows][-3:] == [14, 15, 16] and not any(row["aborted"] for row in rows[-3:])


def test_the_corpus_transactions_stop_where_kseg_txn_says(tmp_path: Path) -> None:
    """txn-v2-0 (written by Kafka) ends inside an open transaction: read_committed ends below the last stable
    offset ``kseg txn`` reports, and leaves out exactly the records the aborted column marks."""
    import re

    import pyarrow.parquet as pq

    from tests.conftest import CORPUS_DATA

    src = CORPUS_DATA / "txn-v2-0"
    lso = int(re.search(r"last stable offset: (\d+)", run_cli(["txn", str(src)]).text).group(1))
    assert run_cli(["export", str(src), "-o", str(tmp_path / "a.parquet")]).exit_code == 0
    everything = pq.read_table(tmp_path / "a.parquet").to_pylist()
    r = run_cli(["export", "--isolation", "read_committed", str(src), "-o", str(tmp_path / "c.parquet")])
    assert r.exit_code == 0, r.errtext
    got = [row["offset"] for row in pq.read_table(tmp_path / "c.parquet").to_pylist()]
    want = [row["offset"] for row in everything if not row["aborted"] and not row["isControl"] and row["offset"] < lso]
    assert got == want and any(row["aborted"] for row in everything) and max(got) < lso
