"""``kseg txn``'s last stable offset against the high watermark of ``replication-offset-checkpoint``.

The corpus' ``txn-v2-0`` (Kafka's bytes; log 0..51, end 52) completes five transactions -- (producer,
first offset, marker offset): (2000, 0, 27), (2001, 4, 28), (2002, 29, 42), (2000, 34, 43), (2001, 44, 49)
-- and leaves producer 2000's open from offset 50.  Copied into a log directory as ``txn-0`` with the
checkpoint written the way ``CheckpointFile`` writes it.  ``UnifiedLog.lastStableOffset``: the first
unstable offset (open, or completed with its marker at or above the high watermark --
``ProducerStateManager.unreplicatedTxns``) when below the high watermark, else the high watermark.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kseg.ops.txn.txn import analyse
from kseg.storage.partition import scan_partition
from tests.conftest import CORPUS_DATA
from tests.ops.logdir.kafka_dir import checkpoint
from tests.stores import local


def _partition(tmp_path: Path, hw_file: str | None) -> Path:
    part = tmp_path / "data" / "txn-0"
    shutil.copytree(CORPUS_DATA / "txn-v2-0", part)
    if hw_file is not None:
        (tmp_path / "data" / "replication-offset-checkpoint").write_text(hw_file)
    return part


@pytest.mark.parametrize(
    ("hw", "lso", "holder"),
    [
        (52, 50, 2000),  # HW at the log end: the open transaction holds the LSO
        (50, 50, None),  # HW at the open transaction's first offset: nothing unstable below it
        (45, 44, None),  # 2001's marker (49) is above the HW: its transaction (from 44) is still unstable
        (40, 29, None),  # 2002's marker (42) too: the LSO is its first offset
    ],
)
def test_last_stable_offset_against_the_checkpointed_high_watermark(tmp_path, hw, lso, holder) -> None:
    part = _partition(tmp_path, checkpoint([("other", 0, 7), ("txn", 0, hw)]))
    report = analyse(scan_partition(str(part), store=local()), from_start=True)
    assert report.high_watermark == hw
    assert report.high_watermark_file == str(tmp_path / "data" / "replication-offset-checkpoint")
    assert report.last_stable_offset == lso <= report.high_watermark
    assert (report.lso_holder.producer_id if report.lso_holder else None) == holder
    assert [(t.producer_id, t.first_offset) for t in report.open] == [(2000, 50)]
    assert not any("high watermark" in n for n in report.notes)


def test_without_the_checkpoint_the_log_end_stands_in_and_a_note_says_so(tmp_path) -> None:
    report = analyse(scan_partition(str(_partition(tmp_path, None)), store=local()), from_start=True)
    assert (report.high_watermark, report.high_watermark_file, report.last_stable_offset) == (None, None, 50)
    assert any(
        n.startswith("no replication-offset-checkpoint in ") and "log end offset stands in" in n for n in report.notes
    )
    assert report.problems == [] and report.exit_code == 0


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (checkpoint([("other", 0, 7)]), "has no entry for txn 0"),
        ("0\n1\ntxn 0 x\n", "Malformed line in checkpoint file"),
        ("1\n0\n", "Unrecognised version"),
    ],
)
def test_an_absent_entry_or_malformed_checkpoint_is_a_note_never_a_guess(tmp_path, text, says) -> None:
    report = analyse(scan_partition(str(_partition(tmp_path, text)), store=local()), from_start=True)
    assert report.high_watermark is None and report.last_stable_offset == 50
    assert any(says in n for n in report.notes) and report.exit_code == 0


def test_a_high_watermark_past_the_log_end_is_bounded_as_kafkas_load_bounds_it(tmp_path) -> None:
    report = analyse(
        scan_partition(str(_partition(tmp_path, checkpoint([("txn", 0, 99)]))), store=local()), from_start=True
    )
    assert (report.high_watermark, report.last_stable_offset) == (52, 50)
    assert any("high watermark 99 in " in n and "52 taken" in n for n in report.notes)


def test_the_command_names_the_file_in_text_and_json(tmp_path) -> None:
    from tests.conftest import run_cli

    part = _partition(tmp_path, checkpoint([("txn", 0, 52)]))
    hw_file = str(tmp_path / "data" / "replication-offset-checkpoint")
    r = run_cli(["txn", "--from-start", "--format", "json", str(part)])
    summary = [json.loads(line) for line in r.text.splitlines()][-1]
    assert (summary["highWatermark"], summary["highWatermarkFile"], summary["lastStableOffset"]) == (52, hw_file, 50)
    assert summary["lsoHeldBy"]["producerId"] == 2000
    text = run_cli(["txn", "--from-start", str(part)]).text
    assert f"2 offsets below the high watermark 52 (from {hw_file}): read_committed consumers stop here" in text
