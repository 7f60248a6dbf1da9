"""kseg txn's lines and rows (:mod:`kseg.render.txn`) for transactions and problems built by hand."""

from __future__ import annotations

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.txn.audit import TxnProblem
from kseg.ops.txn.report import ABORTED, COMMITTED, Transaction
from kseg.render.txn import human, iso, problem_line, problem_row, transaction_line, transaction_row


def _txn(outcome: str) -> Transaction:
    t = Transaction(1000, 2, 10)
    t.add_batch(14, 5, 2, 1730000000000)
    t.first_timestamp = 1730000000000
    t.outcome = outcome
    if outcome != "open":
        t.marker_offset, t.coordinator_epoch, t.marker_timestamp, t.last_stable_offset = 15, 3, 1730000001500, 16
    return t


def test_iso_and_human() -> None:
    assert (iso(None), iso(-1), iso(1730000000100)) == ("-", "-", "2024-10-27T03:33:20.100Z")
    assert iso(10**20) == str(10**20)  # out of datetime's range: the number
    assert (human(None), human(999), human(1000), human(90061000)) == ("-", "999 ms", "1s", "1d 1h 1m 1s")


def test_transaction_lines_committed_aborted_open_and_hanging() -> None:
    assert transaction_line(_txn(COMMITTED)) == (
        "  committed producer 1000 epoch 2  offsets 10..14 (5 records in 1 batch)  first 2024-10-27T03:33:20.000Z"
        "  COMMIT at 15 coordinatorEpoch 3 2024-10-27T03:33:21.500Z  lastStableOffset 16"
    )
    assert "  aborted   producer 1000" in transaction_line(_txn(ABORTED))
    assert " ABORT at 15 " in transaction_line(_txn(ABORTED))
    t = _txn("open")
    t.open_ms, t.idle_ms = 61000, 1000
    assert transaction_line(t) == (
        "  open      producer 1000 epoch 2  offsets 10..14 (5 records in 1 batch)  first 2024-10-27T03:33:20.000Z"
        "  open 1m 1s, last write 1s before the latest"
    )
    t.hanging = True
    assert transaction_line(t).startswith("  HANGING   producer 1000")


def test_transaction_row() -> None:
    row = transaction_row("t-0", _txn(COMMITTED))
    assert row == {
        "type": "transaction",
        "v": SCHEMA_VERSION,
        "partition": "t-0",
        "producerId": 1000,
        "producerEpoch": 2,
        "firstOffset": 10,
        "lastOffset": 14,
        "records": 5,
        "batches": 1,
        "outcome": "committed",
        "markerOffset": 15,
        "coordinatorEpoch": 3,
        "firstTimestamp": 1730000000000,
        "lastTimestamp": 1730000000000,  # add_batch: the last write
        "markerTimestamp": 1730000001500,
        "lastStableOffset": 16,
        "openMs": None,
        "idleMs": None,
        "hanging": False,
        "fromSnapshot": False,
    }


def test_problem_line_and_row() -> None:
    p = TxnProblem(
        "txnindex_missing_entry",
        "t-0/00.txnindex",
        "00",
        "an aborted transaction is not in the index",
        position=40,
        expected="producerId 7 firstOffset 3",
        command="kseg rebuild-index --force t-0",
    )
    assert problem_line(p) == (
        "  problem [txnindex_missing_entry] t-0/00.txnindex: at byte 40: an aborted transaction is not in the index\n"
        "    expected: producerId 7 firstOffset 3\n"
        "    found:    (no entry)\n"
        "    resolve with: kseg rebuild-index --force t-0"
    )
    assert problem_line(TxnProblem("k", "f", None, "m")) == "  problem [k] f: m"
    row = problem_row("t-0", p)
    assert (row["type"], row["segment"], row["position"], row["found"], row["command"]) == (
        "problem",
        "00",
        40,
        None,
        "kseg rebuild-index --force t-0",
    )
