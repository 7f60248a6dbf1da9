"""verify-index at fleet scale (issue 20): a note kind repeated across segments prints once with its
count, ``-q`` prints only problems and the summary, and index entries made wrong by one earlier cause
(a truncation point, an empty log) are one problem row with their count (``consequences``)."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

from kseg.testing.appendinfo import leader_append_info
from kseg.testing.segment import SegmentWriter
from kseg.testing.v2 import build_v2_batch
from tests.conftest import assert_no_traceback, run_cli
from tests.ops.verify.kafka_versions import TS, _records

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus" / "data"
PRE_37 = "a time index written by a broker before Kafka 3.7"


def _pre37_partition(root: Path, segments: int) -> Path:
    """``segments`` segments a Kafka 2.8 leader wrote (uncompressed CreateTime appends): every
    ``.timeindex`` carries the pre-3.7 rule, so every segment has the same note."""
    d = root / "orders-0"
    for s in range(segments):
        w = SegmentWriter(d, 10 * s, per_batch_index=False)
        for b in range(2):
            raw = build_v2_batch(_records(5, TS + s * 1000 + b * 100), base_offset=10 * s + 5 * b)
            w.append([raw], leader_append_info([raw], "2.8"))
        w.close()
    return d


@pytest.fixture(scope="module")
def hundred(tmp_path_factory) -> Path:
    return _pre37_partition(tmp_path_factory.mktemp("fleet"), 100)


def test_a_note_shared_by_100_segments_prints_once_with_its_count(hundred: Path) -> None:
    r = run_cli(["verify-index", str(hundred)])
    assert r.exit_code == 0, r.text
    notes = [line for line in r.text.splitlines() if "note:" in line and "leader-epoch-checkpoint" not in line]
    assert len(notes) == 1, notes
    assert notes[0].startswith("note: 100 files: 100 entries name the offset of the record holding"), notes[0]
    assert PRE_37 in notes[0] and "and 97 more" in notes[0]
    assert notes[0].count(".timeindex") == 3  # the first few places
    assert r.text.splitlines()[-1] == "100 segments verified (%d bytes), 100 clean." % sum(
        p.stat().st_size for p in hundred.glob("*.log")
    )


def test_verbose_and_json_give_every_place(hundred: Path) -> None:
    r = run_cli(["verify-index", "--verbose", str(hundred)])
    notes = [line for line in r.text.splitlines() if "  note: " in line and "largest timestamp" in line]
    assert len(notes) == 100  # every place, each under its segment
    assert sum(PRE_37 in line for line in notes) == 1  # the explanation once (issue 33), then "(as above)"
    assert sum(line.endswith("(as above)") for line in notes) == 99
    r = run_cli(["verify-index", "--format", "json", str(hundred)])
    segments = [json.loads(line) for line in r.text.splitlines()][:-1]
    notes = [[n for n in s["notes"] if "leader-epoch-checkpoint" not in n] for s in segments]
    assert len(segments) == 100 and all(len(n) == 1 and PRE_37 in n[0] for n in notes)


def test_quiet_prints_only_problems_and_the_summary(hundred: Path, tmp_path: Path) -> None:
    r = run_cli(["verify-index", "-q", str(hundred)])
    assert r.exit_code == 0
    assert r.text.splitlines() == [r.text.splitlines()[-1]] and "100 clean" in r.text
    bad = tmp_path / "bad-0"
    shutil.copytree(CORPUS / "corrupt-crc-0", bad)
    r = run_cli(["verify-index", "-q", str(hundred), str(bad)])
    assert r.exit_code == 1
    lines = r.text.splitlines()
    assert not any("note" in line or ": clean (" in line for line in lines), lines
    assert any(line.startswith("  problem: ") and ": crc: " in line for line in lines)
    assert lines[-1].startswith("101 segments verified")


def _corrupt_length_mid_segment(tmp_path: Path) -> tuple[Path, int]:
    """large-v2-0 with the length field of its 5th batch set to 3: the log's readable batches end there."""
    d = tmp_path / "large-v2-0"
    shutil.copytree(CORPUS / "large-v2-0", d)
    log = d / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    pos = 0
    for _ in range(4):
        pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
    struct.pack_into(">i", data, pos + 8, 3)
    log.write_bytes(bytes(data))
    return d, pos


def _entries_past(index: Path, size: int, end: int) -> int:
    data = index.read_bytes()
    return sum(struct.unpack_from(">ii", data, i)[1] >= end for i in range(0, len(data), size))


def test_one_corrupt_length_mid_segment_is_one_problem_with_its_consequence_count(tmp_path: Path) -> None:
    d, pos = _corrupt_length_mid_segment(tmp_path)
    index = d / "00000000000000000000.index"
    past = _entries_past(index, 8, pos)
    first = index.stat().st_size // 8 - past
    assert past > 100  # the case of the issue: hundreds of entries past the truncation point
    r = run_cli(["verify-index", "--format", "json", str(d)])
    assert r.exit_code == 1
    rows = [json.loads(line) for line in r.text.splitlines()]
    problems = [row for row in rows if row["type"] == "problem"]
    assert [p["kind"] for p in problems] == ["corrupt-batch", "index-position", "timeindex-offset"]
    assert problems[0]["position"] == pos and problems[0]["consequences"] is None
    idx = problems[1]
    assert idx["consequences"] == past and idx["entry"] == first and idx["found"] == str(pos)
    assert (
        f"{past} entries ({first}..{past + first - 1})" in idx["message"] and f"end at byte {pos} of" in idx["message"]
    )
    assert problems[2]["consequences"] == past  # the time index past the same point
    assert rows[-1]["problems"] == 3
    text = run_cli(["verify-index", str(d)]).text
    assert "3 problems (4 batches" in text  # the four before the corrupt length and text.count("  problem: ") == 3
    assert f"index-position: position outside the log's batches: {past} entries" in text


def test_an_empty_log_beside_its_index_is_one_problem_per_index(tmp_path: Path) -> None:
    d = tmp_path / "e-0"
    d.mkdir()
    for ext in (".index", ".timeindex"):
        shutil.copy(CORPUS / "large-v2-0" / f"00000000000000000000{ext}", d)
    (d / "00000000000000000000.log").write_bytes(b"")
    entries = (d / "00000000000000000000.index").stat().st_size // 8
    r = run_cli(["verify-index", str(d)])
    assert_no_traceback(r)
    assert r.exit_code == 1
    assert "2 problems (0 batches, 0 bytes)" in r.text
    assert r.text.count(f"{entries} entries (0..{entries - 1})") == 2 and r.text.count("the log is empty") == 2


def test_one_entry_is_singular(tmp_path: Path) -> None:
    d, pos = _corrupt_length_mid_segment(tmp_path)
    index = d / "00000000000000000000.index"
    data = index.read_bytes()
    keep = next(i for i in range(0, len(data), 8) if struct.unpack_from(">i", data, i + 4)[0] >= pos)
    index.write_bytes(data[: keep + 8])  # one entry past the truncation point
    (d / "00000000000000000000.timeindex").unlink()
    r = run_cli(["verify-index", "--format", "json", str(d)])
    row = [json.loads(line) for line in r.text.splitlines() if '"index-position"' in line][0]
    assert row["consequences"] == 1 and ": 1 entry (" in row["message"]
