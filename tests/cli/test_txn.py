"""``kseg txn``: the real command on written partitions and on the corpus."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kseg.format.indexes import TXN_ENTRY
from tests.conftest import CORPUS_DATA, as_unprivileged_root, assert_no_traceback, kseg_argv, run_cli, run_subprocess
from tests.storage.forensics_data import txn_partition


def rows(result) -> list[dict]:
    return [json.loads(line) for line in result.text.splitlines()]


@pytest.fixture
def orders(tmp_path: Path) -> Path:
    return txn_partition(tmp_path / "orders-3")


def test_hanging_transaction_is_exit_1_with_the_abort_command(orders: Path) -> None:
    r = run_subprocess(["txn", str(orders)])
    assert r.exit_code == 1, r.errtext
    assert "HANGING   producer 1004 epoch 7  offsets 7..7" in r.text
    assert (
        "resolve with: kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic orders "
        "--partition 3 --start-offset 7"
    ) in r.text
    assert "last stable offset: 7, held by producer 1004 (epoch 7)" in r.text
    assert_no_traceback(r)


def test_json_rows(orders: Path) -> None:
    r = run_cli(["txn", "--from-start", "--format", "json", str(orders)])
    assert r.exit_code == 1
    got = rows(r)
    assert all("type" in row and row["partition"] == "orders-3" for row in got)
    txns = [row for row in got if row["type"] == "transaction"]
    assert [(t["producerId"], t["outcome"], t["firstOffset"], t["markerOffset"]) for t in txns] == [
        (1001, "aborted", 5, 14),
        (1000, "committed", 3, 15),
        (1002, "aborted", 12, 16),
        (1003, "committed", 17, 20),
        (1004, "open", 7, None),
        (1005, "open", 21, None),
    ]
    assert txns[0]["coordinatorEpoch"] == 5 and txns[0]["lastStableOffset"] == 3 and txns[0]["records"] == 2
    assert [t["hanging"] for t in txns] == [False] * 4 + [True, False]
    problem = next(row for row in got if row["type"] == "problem")
    assert problem["kind"] == "hanging_transaction" and "--start-offset 7" in problem["command"]
    summary = got[-1]
    assert summary["type"] == "summary" and summary["lastStableOffset"] == 7
    assert summary["lsoHeldBy"] == {"producerId": 1004, "producerEpoch": 7, "firstOffset": 7}
    assert (summary["committed"], summary["aborted"], summary["open"], summary["hanging"]) == (2, 2, 2, 1)
    assert summary["txnindexChecked"] == 3 and summary["snapshotsChecked"] == 3 and summary["exitCode"] == 1


def test_hanging_after_longer_than_the_transaction_is_exit_0(orders: Path) -> None:
    r = run_cli(["txn", "--hanging-after", "2h", str(orders)])
    assert r.exit_code == 0, r.text
    assert "0 hanging" in r.text and "no problems" in r.text


def _entries(path: Path) -> list[tuple]:
    data = path.read_bytes()
    return [TXN_ENTRY.unpack_from(data, i) for i in range(0, len(data), TXN_ENTRY.size)]


def _write(path: Path, entries) -> None:
    path.write_bytes(b"".join(TXN_ENTRY.pack(*e) for e in entries))


def test_txnindex_with_a_missing_and_a_wrong_entry(orders: Path) -> None:
    idx = orders / "00000000000000000010.txnindex"
    first, second = _entries(idx)  # 1001 (5..14, LSO 3) and 1002 (12..16, LSO 7)
    _write(idx, [second[:4] + (9,)])  # 1001's entry lost, 1002's with a wrong lastStableOffset
    r = run_cli(["txn", "--from-start", "--hanging-after", "2h", "--format", "json", str(orders)])
    assert r.exit_code == 1
    problems = [row for row in rows(r) if row["type"] == "problem"]
    assert [(p["kind"], p["segment"]) for p in problems] == [
        ("txnindex_missing", "00000000000000000010"),
        ("txnindex_wrong", "00000000000000000010"),
    ]
    assert problems[0]["expected"] == "producerId 1001 firstOffset 5 lastOffset 14 lastStableOffset 3"
    assert problems[1]["found"] == "producerId 1002 firstOffset 12 lastOffset 16 lastStableOffset 9"
    assert problems[1]["position"] == 0 and problems[1]["entry"] == 0
    # rebuild-index writes the right file; then the audit is clean
    assert run_cli(["rebuild-index", "--force", "--quiet", str(orders)]).exit_code == 0
    assert _entries(idx) == [first, second]
    assert run_cli(["txn", "--from-start", "--hanging-after", "2h", str(orders)]).exit_code == 0


def test_txnindex_extra_entry_and_missing_file(orders: Path) -> None:
    _write(orders / "00000000000000000000.txnindex", [(0, 4242, 1, 2, 3)])
    (orders / "00000000000000000010.txnindex").unlink()
    r = run_cli(["txn", "--from-start", "--hanging-after", "2h", str(orders)])
    assert r.exit_code == 1
    assert "problem [txnindex_extra]" in r.text and "producerId 4242" in r.text
    assert r.text.count("problem [txnindex_missing]") == 2
    assert "found:    no .txnindex file" in r.text


def test_txnindex_of_a_size_kafka_rejects(orders: Path) -> None:
    idx = orders / "00000000000000000010.txnindex"
    idx.write_bytes(idx.read_bytes() + b"\0" * 5)
    r = run_cli(["txn", "--from-start", "--hanging-after", "2h", str(orders)])
    assert r.exit_code == 1 and "problem [txnindex_corrupt]" in r.text and "not a multiple of 34" in r.text


def test_default_run_says_which_txnindex_files_it_did_not_check(orders: Path) -> None:
    r = run_cli(["txn", "--hanging-after", "2h", str(orders)])
    assert r.exit_code == 0
    assert "producer state from snapshot" in r.text and "00000000000000000023.snapshot (offset 23)" in r.text
    assert "3 before the snapshot not checked (--from-start checks every one)" in r.text


def test_corpus_partitions_are_clean() -> None:
    r = run_cli(["txn", "--from-start", "--format", "json", "txn-v2-0", "idempotent-v2-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 0, r.text
    summaries = [row for row in rows(r) if row["type"] == "summary"]
    assert [(s["partition"], s["aborted"], s["committed"], s["open"], s["lastStableOffset"]) for s in summaries] == [
        ("txn-v2-0", 3, 2, 1, 50),
        ("idempotent-v2-0", 0, 0, 0, 238),
    ]


def test_a_corrupt_batch_is_reported_not_skipped_silently(tmp_path: Path) -> None:
    part = Path(shutil.copytree(CORPUS_DATA / "corrupt-crc-0", tmp_path / "corrupt-crc-0"))
    r = run_cli(["txn", "--from-start", str(part)])
    assert r.exit_code == 1 and "problem [corrupt_batch]" in r.text and "at byte" in r.text


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: d / "missing", "no such file or directory"),
        (lambda d: d, "nothing to read here: no segment files and no partition directories"),
    ],
)
def test_unreadable_or_empty_paths_are_exit_2(tmp_path: Path, make, message) -> None:
    r = run_cli(["txn", str(make(tmp_path))])
    assert r.exit_code == 2 and message in r.errtext
    assert_no_traceback(r)


def test_indexes_without_a_log_are_exit_2(tmp_path: Path) -> None:
    part = tmp_path / "x-0"
    part.mkdir()
    shutil.copy(CORPUS_DATA / "txn-v2-0" / "00000000000000000000.txnindex", part)
    r = run_cli(["txn", str(part)])
    assert r.exit_code == 2 and r.errtext.strip().endswith("no .log segment in this partition directory")


def test_bad_duration_is_a_usage_error(orders: Path) -> None:
    r = run_cli(["txn", "--hanging-after", "soon", str(orders)])
    assert r.exit_code == 2 and "not a duration" in r.errtext


def test_permission_denied_is_exit_2(orders: Path) -> None:
    (orders / "00000000000000000010.log").chmod(0)
    cmd = as_unprivileged_root(kseg_argv("txn", "--from-start", str(orders)))
    p = subprocess.run(cmd, capture_output=True)
    assert p.returncode == 2, p.stderr
    assert b"00000000000000000010.log: permission denied" in p.stderr and b"Traceback" not in p.stderr


def test_a_segment_file_is_a_usage_error(orders: Path) -> None:
    r = run_cli(["txn", str(orders / "00000000000000000010.log")])
    assert r.exit_code == 2 and "txn takes partition directories or log roots" in r.errtext


def test_at_measures_ages_against_a_given_time(orders: Path) -> None:
    """Against a time two days after the last write, producer 1005's transaction hangs too."""
    r = run_cli(["txn", "--format", "json", "--at", "2023-11-17T00:00:00Z", str(orders)])
    assert r.exit_code == 1
    hanging = [row["producerId"] for row in rows(r) if row["type"] == "transaction" and row["hanging"]]
    assert hanging == [1004, 1005]
    assert run_cli(["txn", "--at", "yesterday", str(orders)]).exit_code == 2


def test_a_partial_batch_is_a_problem_and_no_last_stable_offset_is_stated(tmp_path: Path) -> None:
    """A segment cut mid-batch, another after it: ``txn --from-start`` reports ``partial_batch`` with the
    byte, states no last stable offset (text ``not known``, JSON null, ``notReadToEnd``), exit 1 -- never
    "no problems"."""
    part = tmp_path / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    log = part / "00000000000000000000.log"
    os.truncate(log, 20000)
    r = run_cli(["txn", "--from-start", str(part)])
    assert r.exit_code == 1, r.errtext
    assert "no problems" not in r.text
    assert f"problem [partial_batch] {log}: at byte 15967: 4033 bytes after the last whole batch" in r.text
    assert "  last stable offset: not known, 1 segment not read to its end (1 truncated)" in r.text
    summary = rows(run_cli(["txn", "--from-start", "--format", "json", str(part)]))[-1]
    assert summary["lastStableOffset"] is None and summary["exitCode"] == 1
    assert [(o["stop"], o["position"]) for o in summary["notReadToEnd"]] == [("truncated", 15967)]
