"""``kseg.ops.txn.txn``: transactions rebuilt from the log agree with what Kafka wrote.

The corpus' ``txn-v2-0`` and ``idempotent-v2-0`` were written by Kafka's own
code: its ``.txnindex`` files and ``.snapshot`` files are the ground truth.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kseg.format.indexes import iter_aborted_txns
from kseg.ops.txn.report import ABORTED, COMMITTED
from kseg.ops.txn.txn import analyse
from kseg.storage.partition import scan_partition
from kseg.storage.producer_state import CompletedTxn, ProducerState
from kseg.storage.snapshots import read_snapshot, snapshot_paths
from kseg.storage.stores.discover import store_of
from tests.conftest import CORPUS_DATA
from tests.storage.forensics_data import HOUR, T, txn_partition
from tests.stores import local


def _run(path, **kw):
    done = []
    report = analyse(scan_partition(str(path), store=local()), on_transaction=done.append, **kw)
    return report, done


def test_txn_v2_agrees_with_kafkas_txnindex_files() -> None:
    report, done = _run(CORPUS_DATA / "txn-v2-0", from_start=True)
    assert report.problems == [] and report.txnindex_checked == 2
    aborted = [
        (t.producer_id, t.first_offset, t.marker_offset, t.last_stable_offset) for t in done if t.outcome == ABORTED
    ]
    written = []
    for seg in ("00000000000000000000", "00000000000000000036"):
        data = (CORPUS_DATA / "txn-v2-0" / f"{seg}.txnindex").read_bytes()
        written += [tuple(e[1:]) for e in iter_aborted_txns(data)]
    assert aborted == written == [(2001, 4, 28, 29), (2002, 29, 42, 34), (2001, 44, 49, 50)]
    # coordinator epochs 7, 8 and 9 as the MANIFEST says; the commits too
    assert [(t.producer_id, t.outcome, t.coordinator_epoch) for t in done] == [
        (2000, COMMITTED, 7),
        (2001, ABORTED, 7),
        (2002, ABORTED, 8),
        (2000, COMMITTED, 8),
        (2001, ABORTED, 9),
    ]


def test_txn_v2_agrees_with_kafkas_snapshots() -> None:
    report, _ = _run(CORPUS_DATA / "txn-v2-0", from_start=True)
    assert report.snapshots_checked == 2  # 36 and 52, both agreeing (no snapshot_mismatch problem)
    snaps = {
        o: read_snapshot(p, o, store=store_of(p))
        for o, p in snapshot_paths([str(p) for p in (CORPUS_DATA / "txn-v2-0").glob("*.snapshot")])
    }
    assert snaps[36].open_txns() == {2000: 34, 2002: 29}
    assert snaps[52].open_txns() == {2000: 50}
    assert [(t.producer_id, t.first_offset) for t in report.open] == [(2000, 50)]
    assert report.last_stable_offset == 50 and report.log_end == 52


def test_default_start_is_the_latest_snapshot_and_gives_the_same_open_state() -> None:
    from_snapshot, done = _run(CORPUS_DATA / "txn-v2-0")
    from_start, _ = _run(CORPUS_DATA / "txn-v2-0", from_start=True)
    assert from_snapshot.start_offset == 52 and from_snapshot.snapshot.endswith("00000000000000000052.snapshot")
    assert done == []  # nothing completes after the snapshot
    assert (
        [(t.producer_id, t.first_offset, t.records, t.last_offset) for t in from_snapshot.open]
        == [(t.producer_id, t.first_offset, t.records, t.last_offset) for t in from_start.open]
        == [(2000, 50, 2, 51)]
    )
    assert from_snapshot.txnindex_not_checked == 2 and from_snapshot.txnindex_checked == 0


def test_idempotent_producers_have_no_transactions() -> None:
    report, done = _run(CORPUS_DATA / "idempotent-v2-0", from_start=True)
    assert done == [] and report.open == [] and report.problems == []
    assert report.snapshots_checked == 3 and report.last_stable_offset == report.log_end == 238


def test_written_partition_across_segments_and_snapshots(tmp_path: Path) -> None:
    part = txn_partition(tmp_path / "orders-3")
    report, done = _run(part, from_start=True)
    assert [
        (t.producer_id, t.outcome, t.first_offset, t.marker_offset, t.last_stable_offset, t.records) for t in done
    ] == [
        (1001, ABORTED, 5, 14, 3, 2),
        (1000, COMMITTED, 3, 15, 7, 4),
        (1002, ABORTED, 12, 16, 7, 2),
        (1003, COMMITTED, 17, 20, 7, 3),
    ]
    assert [(t.producer_id, t.first_offset, t.hanging) for t in report.open] == [(1004, 7, True), (1005, 21, False)]
    assert report.hanging[0].open_ms == HOUR - 3
    assert report.last_stable_offset == 7 and report.lso_holder.producer_id == 1004
    assert [p.kind for p in report.problems] == ["hanging_transaction"]
    assert report.problems[0].command.endswith("abort --topic orders --partition 3 --start-offset 7")
    assert report.snapshots_checked == 3 and report.latest_timestamp == T + HOUR


def test_replay_from_a_snapshot_in_the_middle_counts_transactions_opened_before_it(tmp_path: Path) -> None:
    part = txn_partition(tmp_path / "orders-3")
    (part / "00000000000000000023.snapshot").unlink()
    report, done = _run(part)
    assert report.start_offset == 17
    assert [t.producer_id for t in done] == [1003]  # the only marker after offset 17
    hanging = report.hanging[0]
    assert (hanging.producer_id, hanging.seeded, hanging.records, hanging.first_timestamp) == (1004, True, 1, T + 3)
    assert report.txnindex_checked == 1 and report.txnindex_not_checked == 2


def test_a_corrupt_snapshot_falls_back_to_an_older_one(tmp_path: Path) -> None:
    part = txn_partition(tmp_path / "orders-3")
    snap = part / "00000000000000000023.snapshot"
    data = bytearray(snap.read_bytes())
    data[-1] ^= 0xFF
    snap.write_bytes(bytes(data))
    report, _ = _run(part)
    assert report.start_offset == 17
    assert any("CRC" in n and "skipped" in n for n in report.notes)


def test_a_snapshot_that_disagrees_with_the_log_is_a_problem(tmp_path: Path) -> None:
    from kseg.testing.writer import ProducerEntry, write_snapshot

    part = txn_partition(tmp_path / "orders-3")
    write_snapshot(part, 17, [ProducerEntry(1004, epoch=7, current_txn_first_offset=6)])
    report, _ = _run(part, from_start=True)
    mismatch = [p for p in report.problems if p.kind == "snapshot_mismatch"]
    assert len(mismatch) == 1 and "producer 1004 at offset 17" in mismatch[0].message
    assert mismatch[0].found == "open from offset 6" and mismatch[0].expected == "open from offset 7"


def test_producer_state_reports_the_completed_transaction() -> None:
    """txn_rebuild.ProducerState, generalised for kseg txn: the marker's type and coordinator epoch."""
    from kseg.storage.records import FileRecords

    state = ProducerState()
    completed = []
    with FileRecords(str(CORPUS_DATA / "txn-v2-0" / "00000000000000000000.log"), store=local()) as records:
        for batch in records.batches():
            state.completed = None
            state.apply(batch, 1 << 20)
            if state.completed is not None:
                completed.append(state.completed)
    assert completed == [CompletedTxn(2000, 0, 27, 4, 1, 7), CompletedTxn(2001, 4, 28, 29, 0, 7)]


def test_state_from_kafkas_snapshot_36_rebuilds_segment_36s_txnindex(tmp_path: Path) -> None:
    """Start at Kafka's snapshot 36 (52 removed): 2002's transaction, open since offset 29 in
    segment 0, aborts at 42 with lastStableOffset 34 (2000's, also from the snapshot) -- the
    entries Kafka wrote in segment 36's .txnindex, which the audit finds right."""
    part = Path(shutil.copytree(CORPUS_DATA / "txn-v2-0", tmp_path / "txn-v2-0"))
    (part / "00000000000000000052.snapshot").unlink()
    report, done = _run(part)
    assert report.start_offset == 36 and report.txnindex_checked == 1 and report.problems == []
    assert [(t.producer_id, t.first_offset, t.marker_offset, t.last_stable_offset, t.seeded) for t in done] == [
        (2002, 29, 42, 34, True),
        (2000, 34, 43, 44, True),
        (2001, 44, 49, 50, False),
    ]
    assert [t.records for t in done] == [11, 2, 2]  # counted from their first batch, before the snapshot


def test_hanging_is_judged_on_the_producers_last_write(tmp_path: Path) -> None:
    """kafka-transactions.sh find-hanging's rule: latest time - lastTimestamp over the timeout.
    A transaction open for an hour whose producer wrote a second ago is not hanging."""
    from kseg.testing.writer import write_partition
    from tests.storage.forensics_data import Log

    log = Log()
    log.data(1, T, 1000, txn=True)
    log.data(1, T + HOUR - 1000, 1000, txn=True)
    log.data(1, T + HOUR)
    write_partition(tmp_path / "t-0", log.appends)
    report, _ = _run(tmp_path / "t-0")
    (txn,) = report.open
    assert (txn.open_ms, txn.idle_ms, txn.hanging, txn.records) == (HOUR, 1000, False, 2)
    assert report.problems == [] and report.last_stable_offset == 0
