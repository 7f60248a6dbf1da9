"""``kseg compaction``: tombstones, control batches and v2 delete horizons, on written partitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kseg.jsonlines import SCHEMA_VERSION
from kseg.testing.writer import RecordSpec, build_control_batch, build_v2_batch, write_partition
from tests.conftest import CORPUS_DATA, assert_no_traceback, corpus_copy, overwrite, run_cli
from tests.ops.logdir.kafka_dir import checkpoint

T = 1_700_000_000_000
DAY = 86_400_000


def _partition(directory: Path) -> Path:
    """Segment 0: 2 tombstones never cleaned, a COMMIT marker; segment 4: a cleaned batch whose
    horizon is T + 1 day (1 tombstone), another with horizon T + 3 days, plain data."""
    appends = [
        [
            build_v2_batch(
                [RecordSpec(b"a", None, T), RecordSpec(b"b", b"x", T), RecordSpec(b"c", None, T)],
                base_offset=0,
                producer_id=7,
                producer_epoch=0,
                base_sequence=0,
                transactional=True,
            )
        ],
        [
            build_control_batch(
                "COMMIT", base_offset=3, producer_id=7, producer_epoch=0, coordinator_epoch=2, timestamp=T + 1
            )
        ],
        [build_v2_batch([RecordSpec(b"d", None, T + 2)], base_offset=4, delete_horizon_ms=T + DAY)],
        [
            build_v2_batch(
                [RecordSpec(b"e", None, T + 3), RecordSpec(b"f", b"y", T + 3)],
                base_offset=5,
                codec="gzip",
                delete_horizon_ms=T + 3 * DAY,
            )
        ],
        [build_v2_batch([RecordSpec(b"g", b"z", T + 4)], base_offset=7)],
    ]
    write_partition(directory, appends, roll_before=[2])
    return directory


def test_counts_ages_and_horizons(tmp_path: Path) -> None:
    part = _partition(tmp_path / "compacted-0")
    r = run_cli(["compaction", "--format", "json", "--at", str(T + 2 * DAY), str(part)])
    assert r.exit_code == 0, r.errtext
    seg0, seg2, summary = [json.loads(line) for line in r.text.splitlines()]
    assert (
        seg0["type"],
        seg0["tombstones"],
        seg0["tombstoneBatches"],
        seg0["controlBatches"],
        seg0["commitMarkers"],
    ) == ("segment", 2, 1, 1, 1)
    assert (seg0["withDeleteHorizon"], seg0["withoutDeleteHorizon"], seg0["olderThanRetentionWithoutHorizon"]) == (
        0,
        2,
        True,
    )
    assert (
        seg2["tombstones"],
        seg2["withDeleteHorizon"],
        seg2["pastDeleteHorizon"],
        seg2["minDeleteHorizonMs"],
        seg2["maxDeleteHorizonMs"],
    ) == (2, 2, 1, T + DAY, T + 3 * DAY)
    assert summary == {
        "type": "summary",
        "v": SCHEMA_VERSION,
        "logDir": str(tmp_path),
        "partition": "compacted-0",
        "at": T + 2 * DAY,
        "deleteRetentionMs": DAY,
        "segments": 2,
        "tombstones": 4,
        "controlBatches": 1,
        "legacyTombstones": 0,
        "pastDeleteHorizon": 1,
        "withoutDeleteHorizon": 2,
        "segmentsOlderThanRetentionWithoutHorizon": 1,
        "segmentsNotReadToEnd": 0,
        "logStartOffset": 0,
        "logStartOffsetFile": None,
        "cleanerCheckpoint": None,
        "cleanerCheckpointFile": None,
        "firstDirtyOffset": None,
        "notes": [f"no cleaner-offset-checkpoint in {tmp_path}: the dirty section is not known"],
    }
    assert seg0["section"] is None and seg2["section"] is None


def test_text_and_retention_option(tmp_path: Path) -> None:
    part = _partition(tmp_path / "compacted-0")
    r = run_cli(["compaction", "--at", "2023-11-20T00:00:00Z", "--delete-retention", "7d", str(part)])
    assert r.exit_code == 0
    assert "delete.retention.ms 604800000 (7d)" in r.text
    assert "00000000000000000000: 2 tombstones in 1 batch" in r.text
    assert "2 past it: the next cleaning removes them" in r.text  # both horizons (T + 1 d, T + 3 d) passed
    assert "never given a horizon" not in r.text  # 5 days old, under 7 days


def test_corpus_consumer_offsets_and_legacy_tombstones() -> None:
    r = run_cli(
        ["compaction", "--format", "json", "--at", "1730000000000", "__consumer_offsets-0", "v1-none-0"],
        cwd=CORPUS_DATA,
    )
    assert r.exit_code == 0
    got = [json.loads(line) for line in r.text.splitlines()]
    offsets = got[0]
    assert (offsets["tombstones"], offsets["controlBatches"], offsets["commitMarkers"]) == (3, 1, 1)
    assert got[-1]["legacyTombstones"] == 1


def test_missing_path_is_exit_2(tmp_path: Path) -> None:
    r = run_cli(["compaction", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "no such file or directory" in r.errtext
    assert_no_traceback(r)


def test_a_segment_not_read_to_its_end_is_named_never_counted_as_empty(tmp_path: Path) -> None:
    """A first batch whose length field is 5: the segment is `NOT READ TO ITS END` with its byte, counted
    on the total line and in JSON (``read``, ``segmentsNotReadToEnd``), exit 1 -- never "no tombstones"."""
    import struct

    part = corpus_copy(tmp_path)
    log = part / "00000000000000000000.log"
    overwrite(log, 8, struct.pack(">i", 5))  # the first batch's length field
    r = run_cli(["compaction", str(part)])
    assert r.exit_code == 1, r.errtext
    line = next(x for x in r.text.splitlines() if "00000000000000000000:" in x)
    assert line.startswith("  00000000000000000000: NOT READ TO ITS END (corrupt, read 0 of 28637 bytes): ")
    assert f"{log}: at byte 0: found record size 5" in line
    assert "no tombstones" not in line and "1 segment not read to its end (1 corrupt)" in r.text
    assert r.errtext.startswith(f"kseg: error: {log}: at byte 0: ")
    rows = [json.loads(x) for x in run_cli(["compaction", "--format", "json", str(part)]).text.splitlines()]
    first = rows[0]
    assert first["read"] == {
        "path": str(log),
        "bytesPresent": 28637,
        "bytesRead": 0,
        "stop": "corrupt",
        "position": 0,
        "reason": first["read"]["reason"],
    }
    assert rows[-1]["segmentsNotReadToEnd"] == 1
    assert rows[1]["read"]["stop"] == "complete"


def test_a_batch_whose_crc_does_not_hold_ends_the_count_of_its_segment() -> None:
    """The corpus's ``corrupt-crc-0`` (batch 31..50 at byte 3117 damaged after Kafka wrote it): what is
    counted comes from batches that hold their CRCs -- the segment is `NOT READ TO ITS END` at the damaged
    batch, named with the stored and computed CRCs, exit 1 (it was read through and exit 0)."""
    part = CORPUS_DATA / "corrupt-crc-0"
    log = part / "00000000000000000000.log"
    r = run_cli(["compaction", str(part)])
    assert r.exit_code == 1, r.errtext
    line = next(x for x in r.text.splitlines() if "00000000000000000000:" in x)
    assert line.startswith("  00000000000000000000: NOT READ TO ITS END (corrupt, read 3117 of 28637 bytes): ")
    assert f"{log}: at byte 3117: batch at offset 31: CRC mismatch (stored 209471313, computed " in line
    assert "total in the bytes read:" in r.text and "1 segment not read to its end (1 corrupt)" in r.text
    rows = [json.loads(x) for x in run_cli(["compaction", "--format", "json", str(part)]).text.splitlines()]
    assert rows[0]["read"]["stop"] == "corrupt" and rows[0]["read"]["position"] == 3117
    assert rows[-1]["segmentsNotReadToEnd"] == 1
    assert_no_traceback(r)


# the cleaner checkpoint (LogCleanerManager.cleanableOffsets): written as CheckpointFile writes it in the
# partition's log directory; the partition: segments 0 (offsets 0..3) and 4 (offsets 4..7), log end 8
CLEANER_CASES = {
    "cleaned to the second segment": ({"cleaner": [("compacted", 0, 4)]}, 4, 4, ["cleaned", "dirty"], None),
    "cleaned into the second segment": ({"cleaner": [("compacted", 0, 6)]}, 6, 6, ["cleaned", "both"], None),
    "never cleaned (no entry)": (
        {"cleaner": [("other", 3, 9)]},
        None,
        0,
        ["dirty", "dirty"],
        "has no entry for compacted 0: never cleaned, the dirty section starts at the log start offset",
    ),
    "past the log end": (
        {"cleaner": [("compacted", 0, 99)]},
        99,
        0,
        ["dirty", "dirty"],
        "is past the log end offset 8: Kafka resets the first dirty offset to the log start offset 0",
    ),
    "below the log start": (
        {"cleaner": [("compacted", 0, 2)], "start": [("compacted", 0, 4)]},
        2,
        4,
        ["cleaned", "dirty"],
        "is below the log start offset: Kafka resets the first dirty offset to the log start offset 4",
    ),
}


@pytest.mark.parametrize("files,checkpointed,first_dirty,sections,note", CLEANER_CASES.values(), ids=CLEANER_CASES)
def test_the_dirty_section_from_the_cleaner_checkpoint(
    tmp_path: Path, files, checkpointed, first_dirty, sections, note
):
    part = _partition(tmp_path / "compacted-0")
    names = {"cleaner": "cleaner-offset-checkpoint", "start": "log-start-offset-checkpoint"}
    for key, entries in files.items():
        (tmp_path / names[key]).write_text(checkpoint(entries))
    r = run_cli(["compaction", "--format", "json", "--at", str(T + 2 * DAY), str(part)])
    assert r.exit_code == 0, r.errtext
    *segs, summary = [json.loads(line) for line in r.text.splitlines()]
    assert [s["section"] for s in segs] == sections
    assert (summary["cleanerCheckpoint"], summary["firstDirtyOffset"]) == (checkpointed, first_dirty)
    cleaner_file = str(tmp_path / "cleaner-offset-checkpoint") if checkpointed is not None else None
    assert summary["cleanerCheckpointFile"] == cleaner_file
    start_file = str(tmp_path / "log-start-offset-checkpoint") if "start" in files else None
    assert (summary["logStartOffset"], summary["logStartOffsetFile"]) == (4 if start_file else 0, start_file)
    assert (note is None) == (summary["notes"] == []) and all(note in n for n in summary["notes"][:1] if note)
    text = run_cli(["compaction", "--at", str(T + 2 * DAY), str(part)]).text
    assert f"  dirty section: from offset {first_dirty} (" in text
