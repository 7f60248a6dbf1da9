"""``kseg diff``: replica pairs identical, lagging, and divergent after an unclean election."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kseg.jsonlines import SCHEMA_VERSION
from tests.conftest import CORPUS_DATA, assert_no_traceback, run_cli, run_subprocess
from tests.storage.forensics_data import EPOCHS_SHARED, replica_logs, write_replica

NEW_LEADER_EPOCHS = "0\n3\n0 0\n1 50\n2 100\n"


def rows(result) -> list[dict]:
    return [json.loads(line) for line in result.text.splitlines()]


@pytest.fixture
def brokers(tmp_path: Path) -> Path:
    """Three brokers: b1 the old leader (to 150, epoch 1), b2 the new leader elected
    uncleanly at 100 (epoch 2, to 130), b3 a follower of b1 that stopped at 120."""
    old, new = replica_logs()
    write_replica(tmp_path / "b1" / "data" / "events-0", old.appends, EPOCHS_SHARED, rolls=[6])
    write_replica(tmp_path / "b2" / "data" / "events-0", new.appends, NEW_LEADER_EPOCHS, rolls=[6])
    write_replica(tmp_path / "b3" / "data" / "events-0", old.appends[:12], EPOCHS_SHARED, rolls=[6])
    for b in ("b1", "b2"):
        write_replica(tmp_path / b / "data" / "same-0", old.appends, EPOCHS_SHARED)
    write_replica(tmp_path / "b1" / "data" / "alone-0", old.appends[:2], None)
    return tmp_path


def part(brokers: Path, broker: str, name: str = "events-0") -> str:
    return str(brokers / broker / "data" / name)


def test_identical_replicas_are_exit_0(brokers: Path) -> None:
    r = run_subprocess(["diff", part(brokers, "b1", "same-0"), part(brokers, "b2", "same-0")])
    assert r.exit_code == 0, r.errtext
    assert r.text.splitlines()[0] == "same-0: 2 replicas, identical"
    assert_no_traceback(r)


def test_a_prefix_is_lagging_not_divergent(brokers: Path) -> None:
    r = run_cli(["diff", "--format", "json", part(brokers, "b1"), part(brokers, "b3")])
    assert r.exit_code == 0
    a, b, summary = rows(r)
    assert summary == {
        "type": "summary",
        "v": SCHEMA_VERSION,
        "partition": "events-0",
        "replicas": 2,
        "status": "lagging",
        "firstDivergentOffset": None,
        "leader": None,
        "differences": [],
        "commonStartOffset": 0,
        "notes": [],
        "exitCode": 0,
    }
    assert (a["status"], a["lag"], a["logEndOffset"]) == ("identical", 0, 150)
    assert (b["status"], b["lag"], b["logEndOffset"]) == ("lagging", 30, 120)
    assert a["onlyHere"] == [{"firstOffset": 120, "lastOffset": 149, "records": 30, "batches": 3}]
    assert b["onlyHere"] == []


def test_unclean_election_is_divergent_with_epochs_and_lost_ranges(brokers: Path) -> None:
    r = run_cli(["diff", "--format", "json", part(brokers, "b1"), part(brokers, "b2")])
    assert r.exit_code == 1
    old, new, summary = rows(r)
    assert all(row["type"] for row in (old, new, summary))
    assert summary["status"] == "divergent" and summary["firstDivergentOffset"] == 100
    assert summary["differences"] == ["partitionLeaderEpoch", "crc"] and summary["leader"] == 1
    assert (
        old["batchBeforeDivergence"]["partitionLeaderEpoch"]
        == new["batchBeforeDivergence"]["partitionLeaderEpoch"]
        == 1
    )
    assert old["batchBeforeDivergence"]["crc"] == new["batchBeforeDivergence"]["crc"]
    assert (old["batchAtDivergence"]["partitionLeaderEpoch"], new["batchAtDivergence"]["partitionLeaderEpoch"]) == (
        1,
        2,
    )
    assert old["onlyHere"] == [{"firstOffset": 100, "lastOffset": 149, "records": 50, "batches": 5}]
    assert new["onlyHere"] == [{"firstOffset": 100, "lastOffset": 129, "records": 30, "batches": 3}]
    assert new["leaderEpochs"][-1] == {"epoch": 2, "startOffset": 100}
    # the old leader follows the new one: OffsetsForLeaderEpoch(1) = 100, so it truncates there
    assert (old["truncateTo"], old["lostRecords"]) == (100, 50)
    assert (new["truncateTo"], new["lostRecords"]) == (None, None)


def test_divergent_text(brokers: Path) -> None:
    r = run_cli(["diff", part(brokers, "b1"), part(brokers, "b2")])
    assert r.exit_code == 1
    assert "events-0: 2 replicas, DIVERGENT from offset 100" in r.text
    assert "at 100:     batch 100..109 epoch 2" in r.text and "(checkpoint: epoch 2)" in r.text
    assert "only here: offsets 100..149 (50 records in 5 batches)" in r.text
    assert "replica 0 truncates to offset 100 (OffsetsForLeaderEpoch) and loses 50 records (100..149)" in r.text


def test_different_log_starts_are_not_a_divergence(brokers: Path, tmp_path: Path) -> None:
    """Retention deleted b1's first segment only: compared from where both logs have data."""
    copy = Path(shutil.copytree(part(brokers, "b1", "same-0"), tmp_path / "copy" / "same-0"))
    write_replica(tmp_path / "rolled" / "same-0", replica_logs()[0].appends, EPOCHS_SHARED, rolls=[6])
    for f in (tmp_path / "rolled" / "same-0").glob("00000000000000000000.*"):
        f.unlink()
    r = run_cli(["diff", "--format", "json", str(copy), str(tmp_path / "rolled" / "same-0")])
    assert r.exit_code == 0, r.text
    a, b, summary = rows(r)
    assert summary["status"] == "identical" and summary["commonStartOffset"] == 60
    assert b["logStartOffset"] == 60 and "6 batches below offset 60" in summary["notes"][0]


def test_roots_compare_every_partition_under_more_than_one_root(brokers: Path) -> None:
    r = run_cli(["diff", "--roots", "--format", "json", *(str(brokers / b / "data") for b in ("b1", "b2", "b3"))])
    assert r.exit_code == 1
    summaries = [row for row in rows(r) if row["type"] == "summary"]
    assert [(s["partition"], s["replicas"], s["status"]) for s in summaries] == [
        ("events-0", 3, "divergent"),
        ("same-0", 2, "identical"),
    ]
    assert "/alone-0: under one root only: nothing to compare" in r.errtext


def test_roots_notes_on_partitions_under_one_root_are_one_line(brokers: Path) -> None:
    for n in range(1, 31):  # thirty more partitions only one broker holds
        shutil.copytree(brokers / "b1" / "data" / "same-0", brokers / "b1" / "data" / f"solo-{n}")
    r = run_cli(["diff", "--roots", *(str(brokers / b / "data") for b in ("b1", "b2", "b3"))])
    notes = [line for line in r.errtext.splitlines() if "under one root only" in line]
    assert len(notes) == 1, notes
    assert notes[0].startswith("kseg: note: 31 paths: under one root only: nothing to compare (")
    assert notes[0].endswith(" and 28 more)")


def test_malformed_leader_epoch_checkpoint_is_reported_not_fatal(brokers: Path) -> None:
    (brokers / "b2" / "data" / "same-0" / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n")
    r = run_cli(["diff", "--format", "json", part(brokers, "b1", "same-0"), part(brokers, "b2", "same-0")])
    assert r.exit_code == 0
    assert "expected 2 entries in leader-epoch-checkpoint, found 1" in rows(r)[1]["leaderEpochsError"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["one"], "two or more partition directories"),
        (["missing-0", "missing-1"], "missing-0: no such file or directory"),
        (["--spark", "a", "b"], "--spark takes --roots"),
    ],
)
def test_usage_and_missing_paths_are_exit_2(tmp_path: Path, args, message) -> None:
    r = run_cli(["diff", *args], cwd=tmp_path)
    assert r.exit_code == 2 and message in r.errtext
    assert len(r.errtext.strip().splitlines()) == 1
    assert_no_traceback(r)


def test_empty_directory_and_roots_without_shared_partitions_are_exit_2(brokers: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_cli(["diff", str(empty), part(brokers, "b1")])
    assert r.exit_code == 2 and "not a partition directory" in r.errtext
    r = run_cli(["diff", "--roots", str(brokers / "b1" / "data"), str(empty)])
    assert r.exit_code == 2 and "nothing to read here" in r.errtext and "log root" in r.errtext
    other = tmp_path / "other" / "data"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", other / "lonely-0")
    r = run_cli(["diff", "--roots", str(brokers / "b1" / "data"), str(other)])
    assert r.exit_code == 2 and "nothing compared" in r.errtext


def test_corpus_copy_against_itself_is_identical() -> None:
    r = run_cli(["diff", str(CORPUS_DATA / "txn-v2-0"), str(CORPUS_DATA / "txn-v2-0")])
    assert r.exit_code == 0 and "txn-v2-0: 2 replicas, identical" in r.text


def test_a_batch_damaged_on_one_disk_is_damage_not_divergence() -> None:
    """corrupt-crc-0 is plain-v2-0's segment 0 with one byte flipped in batch 31..50: that copy is damaged
    there (the batch named with its bytes), lagging after its one segment; the whole copy is identical."""
    args = [
        "diff",
        "--any-names",
        "--format",
        "json",
        str(CORPUS_DATA / "plain-v2-0"),
        str(CORPUS_DATA / "corrupt-crc-0"),
    ]
    r = run_cli(args)
    assert r.exit_code == 1
    good, bad, summary = rows(r)
    assert summary["status"] == "damaged" and summary["firstDivergentOffset"] is None
    assert (good["status"], bad["status"]) == ("identical", "damaged") and bad["lag"] == 169
    assert bad["damagedBatches"] == 1 and good["damagedBatches"] == 0
    (damage,) = bad["damaged"]
    assert (damage["segment"], damage["baseOffset"], damage["lastOffset"]) == (f"{0:020d}", 31, 50)
    assert damage["size"] > 0 and damage["position"] > 0
    assert bad["onlyHere"] == [] and good["onlyHere"] == [
        {"firstOffset": 251, "lastOffset": 419, "records": 169, "batches": 16}
    ]


def test_a_batch_damaged_in_every_copy_is_in_each_never_only_here() -> None:
    """Both copies hold batch 31..50 damaged (no whole copy of it): each names the damage; the offsets are
    in both, so neither says "only here" (each did)."""
    bad = str(CORPUS_DATA / "corrupt-crc-0")
    r = run_cli(["diff", "--format", "json", bad, bad])
    assert r.exit_code == 1
    one, two, summary = rows(r)
    assert summary["status"] == "damaged"
    assert one["damagedBatches"] == two["damagedBatches"] == 1
    assert one["onlyHere"] == two["onlyHere"] == [] and one["onlyHereRecords"] == two["onlyHereRecords"] == 0
    assert "only here" not in run_cli(["diff", bad, bad]).text


def _three_replicas(root: Path) -> list[Path]:
    """b1 whole (plain-v2-0), b2 lagging at a batch boundary (its segment 0 only), b3 whole but for one
    damaged batch (corrupt-crc-0's segment 0 with plain-v2-0's segment 251)."""
    b1, b2, b3 = (root / b / "data" / "orders-0" for b in ("b1", "b2", "b3"))
    shutil.copytree(CORPUS_DATA / "plain-v2-0", b1)
    shutil.copytree(CORPUS_DATA / "corrupt-crc-0", b3)
    b2.mkdir(parents=True)
    for name in (f"{0:020d}.log", f"{0:020d}.index", f"{0:020d}.timeindex"):
        shutil.copy(b1 / name, b2 / name)
    for name in (f"{251:020d}.log", f"{251:020d}.index", f"{251:020d}.timeindex"):
        shutil.copy(b1 / name, b3 / name)
    return [b1, b2, b3]


def test_three_replicas_whole_lagging_and_damaged(tmp_path: Path) -> None:
    """Issue 32: b1 and b3 were both ``divergent`` with the same "only here" offsets.  Now b1 is identical,
    b2 lagging, b3 damaged (its batch 31..50 named with its byte range), nothing only here; the twin
    without the damage is lagging, exit 0."""
    b1, b2, b3 = _three_replicas(tmp_path)
    r = run_cli(["diff", "--format", "json", str(b1), str(b2), str(b3)])
    assert r.exit_code == 1, r.errtext
    *reps, summary = rows(r)
    assert [rep["status"] for rep in reps] == ["identical", "lagging", "damaged"]
    assert summary["status"] == "damaged" and summary["firstDivergentOffset"] is None
    assert all(rep["onlyHere"] == [] for rep in reps)  # b3 holds 251..419 too, b1 holds 31..50 whole
    assert [(d["baseOffset"], d["lastOffset"]) for d in reps[2]["damaged"]] == [(31, 50)]
    text = run_cli(["diff", str(b1), str(b2), str(b3)])
    lines = text.text.splitlines()
    assert lines[0] == "orders-0: 3 replicas, DAMAGED in a copy (batches whose CRC does not hold), the rest agrees"
    d = reps[2]["damaged"][0]
    assert (
        f"    damaged: batch 31..50 in {0:020d} at bytes {d['position']}..{d['position'] + d['size']}: "
        "its CRC does not hold"
    ) in lines
    assert "divergent" not in text.text.lower()
    shutil.copy(b1 / f"{0:020d}.log", b3 / f"{0:020d}.log")  # the healthy twin: b3 whole again
    twin = run_cli(["diff", str(b1), str(b2), str(b3)])
    assert twin.exit_code == 0 and "lagging" in twin.text.splitlines()[0], twin.text


def test_different_topic_partitions_are_refused_unless_any_names(tmp_path: Path) -> None:
    a, b = tmp_path / "orders-0", tmp_path / "x" / "orders-1"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", a)
    shutil.copytree(CORPUS_DATA / "plain-v2-0", b)
    r = run_cli(["diff", str(a), str(b)])
    assert r.exit_code == 2 and r.text == ""
    assert r.errtext.splitlines()[0] == (
        f"kseg: error: the replicas are of different topic-partitions: orders-0 ({a}), orders-1 ({b}); "
        "give --any-names to compare them anyway"
    )
    again = run_cli(["diff", "--any-names", str(a), str(b)])
    assert again.exit_code == 0 and "identical" in again.text.splitlines()[0]
    same = tmp_path / "y" / "orders-0"  # the twin: one topic-partition in two places
    shutil.copytree(CORPUS_DATA / "plain-v2-0", same)
    assert run_cli(["diff", str(a), str(same)]).exit_code == 0


def test_a_replica_stopped_by_a_partial_batch_is_unreadable_from_the_offset_after_the_last_read(tmp_path: Path) -> None:
    """Segment 0 of one copy cut at byte 20000 (inside the batch holding offsets 151..200): that replica is
    ``unreadable from offset 151`` with the byte and the reason, its log end 151 (the offset after the last
    one read, not the next segment's base offset), the set ``incomplete`` -- never lagging, never identical."""
    good, bad = tmp_path / "a" / "p-0", tmp_path / "b" / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", good)
    shutil.copytree(CORPUS_DATA / "plain-v2-0", bad)
    log = bad / "00000000000000000000.log"
    os.truncate(log, 20000)
    r = run_cli(["diff", str(good), str(bad)])
    assert r.exit_code == 1, r.errtext
    assert "lagging" not in r.text and "identical" not in r.text
    assert r.text.splitlines()[0] == (
        "p-0: 2 replicas, NOT COMPARED TO THE END: a replica could not be read past a "
        "corrupt or partial batch (what was read agrees)"
    )
    assert (
        f"replica 1 {bad}: log 0..151, 151 records in 14 batches, unreadable from offset 151: {log}: at byte 15967: "
        "a partial batch"
    ) in r.text
    assert r.errtext.startswith(f"kseg: error: replica 1: unreadable from offset 151: {log}: at byte 15967: ")
    reps = rows(run_cli(["diff", "--format", "json", str(good), str(bad)]))
    assert reps[1]["status"] == "unreadable" and reps[1]["logEndOffset"] == 151
    assert reps[1]["read"]["stop"] == "truncated" and reps[1]["read"]["bytesRead"] == 15967
    assert reps[0]["status"] == "agrees-where-read" and reps[-1]["status"] == "incomplete"
