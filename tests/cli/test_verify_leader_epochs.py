"""``verify-index`` checks each partition's ``leader-epoch-checkpoint`` against the batches' partition leader
epochs (the rule of :mod:`kseg.storage.leader_epochs`, shared with ``logdir``), on log directories written
the way a broker writes them (:mod:`tests.ops.logdir.kafka_dir`: ``orders-0`` is the corpus' follower-v2-0,
offsets 0..268, epochs 0 from 0, 1 from 132, 3 from 193)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, run_cli
from tests.ops.logdir.kafka_dir import checkpoint, log_dir


def _problems(directory: Path) -> tuple[int, list[tuple[str, str, str]], list[str]]:
    r = run_cli(["verify-index", "--format", "json", str(directory)])
    rows = [json.loads(line) for line in r.text.splitlines()]
    problems = [(p["kind"], p["segment"], p["message"]) for p in rows if p["type"] == "problem"]
    notes = [n for row in rows if row["type"] == "segment" for n in row["notes"]]
    return r.exit_code, problems, notes


HEALTHY = {
    "as the broker wrote it": checkpoint([(0, 0), (1, 132), (3, 193)]),
    # retention or DeleteRecords to 150: truncateFromStart moved epoch 1's entry into its batches
    "after truncateFromStart": checkpoint([(1, 150), (3, 193)]),
    # a leader elected (epoch 4) at the log end and not yet written to
    "an entry past the last batch": checkpoint([(0, 0), (1, 132), (3, 193), (4, 269)]),
}


@pytest.mark.parametrize("text", HEALTHY.values(), ids=HEALTHY.keys())
def test_a_healthy_checkpoint_is_clean(tmp_path: Path, text: str) -> None:
    d = log_dir(tmp_path / "data")
    (d / "orders-0" / "leader-epoch-checkpoint").write_text(text)
    code, problems, notes = _problems(d)
    assert (code, problems) == (0, [])
    assert not any("leader-epoch-checkpoint" in n for n in notes)


PROBLEMS = {
    "an entry after its epoch's first batch": (
        checkpoint([(0, 0), (1, 140), (3, 193)]),
        "leader-epoch",
        "line 4: epoch 1 starts at offset 140, but the first batch of epoch 1 in the log is at offset 132",
    ),
    "an entry before its epoch's first batch": (
        checkpoint([(0, 0), (1, 120), (3, 193)]),
        "leader-epoch",
        "line 4: epoch 1 starts at offset 120, but the log has a batch of the earlier epoch 0 at offset ",
    ),
    "an epoch never recorded": (
        checkpoint([(0, 0), (3, 193)]),
        "leader-epoch",
        "batches of leader epoch 1 (from offset 132) in the log, an epoch the checkpoint never recorded",
    ),
    "entries not increasing": (
        checkpoint([(0, 0), (3, 132), (1, 193)]),
        "leader-epoch-order",
        "line 5: epoch 1 at offset 193 does not follow epoch 3 at offset 132",
    ),
    "a malformed file": ("0\n3\n0 0\n1 132\n", "leader-epoch-checkpoint", "expected 3 entries"),
}


@pytest.mark.parametrize("text,kind,message", PROBLEMS.values(), ids=PROBLEMS.keys())
def test_each_leader_epoch_problem_is_found(tmp_path: Path, text: str, kind: str, message: str) -> None:
    d = log_dir(tmp_path / "data")
    (d / "orders-0" / "leader-epoch-checkpoint").write_text(text)
    code, problems, _ = _problems(d)
    assert code == 1
    assert [(k, s) for k, s, _ in problems] == [(kind, "00000000000000000000")]
    assert message in problems[0][2]


def test_an_absent_checkpoint_is_a_note_never_a_problem(tmp_path: Path) -> None:
    d = log_dir(tmp_path / "data")
    (d / "orders-0" / "leader-epoch-checkpoint").unlink()
    code, problems, notes = _problems(d)
    assert (code, problems) == (0, [])
    absent = f"{d / 'orders-0' / 'leader-epoch-checkpoint'}: absent: the batches' leader epochs not checked"
    assert [n for n in notes if "leader-epoch" in n] == [absent]


@pytest.mark.parametrize("make", ["dangling link", "fifo"])
def test_the_partitions_listing_answers_for_its_checkpoint_as_a_read_would(tmp_path: Path, make: str) -> None:
    """Whether the checkpoint is there is known when the partition is listed (no store call per segment):
    a name listed that leads nowhere (a dangling link) is absent, as it was when each read asked; a FIFO is
    there, and refused by its reader (a note: not checked, and why)."""
    from kseg.storage.context import ReadContext
    from kseg.storage.partition import scan_partition
    from kseg.storage.stores.local import LocalStore

    d = log_dir(tmp_path / "data")
    target = d / "orders-0" / "leader-epoch-checkpoint"
    target.unlink()
    if make == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(tmp_path / "nowhere")
    assert scan_partition(str(d / "orders-0"), store=LocalStore(ReadContext())).leader_epochs is (make == "fifo")
    code, problems, notes = _problems(d)
    assert (code, problems) == (0, [])
    [note] = [n for n in notes if "leader-epoch" in n]
    if make == "fifo":
        assert note.startswith(f"{target}: could not be read (") and "not a regular file" in note, note
    else:
        assert note == f"{target}: absent: the batches' leader epochs not checked"


def test_magic_v0_v1_batches_have_no_epoch_to_judge(tmp_path: Path) -> None:
    """A v1 log under a broker that assigned epochs at leader election (before 2.1): clean."""
    part = tmp_path / "data" / "old-0"
    shutil.copytree(CORPUS_DATA / "v1-none-0", part)
    (part / "leader-epoch-checkpoint").write_text(checkpoint([(0, 0), (2, 5)]))
    code, problems, notes = _problems(part)
    assert (code, problems) == (0, []) and not any("leader-epoch" in n for n in notes)


def test_the_findings_land_on_the_segment_holding_the_batches(tmp_path: Path) -> None:
    """plain-v2-0 (epoch 0, segments 0 and 251) with a checkpoint naming only epoch 5 from 251."""
    part = tmp_path / "data" / "plain-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    (part / "leader-epoch-checkpoint").write_text(checkpoint([(5, 251)]))
    code, problems, _ = _problems(part)
    assert code == 1
    assert problems == [
        (
            "leader-epoch",
            "00000000000000000251",
            "batches of leader epoch 0 (from offset 251) in the log, an epoch the checkpoint never recorded",
        )
    ]
