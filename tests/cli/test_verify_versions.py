"""Healthy partitions from every Kafka version verify clean by default, and ``--strict`` reports exactly
what Kafka's ``--verify-index-only`` reports (the version table of ``docs/verify-index.md``).

Each case is written by :mod:`tests.ops.verify.kafka_versions` the way that version's broker wrote it
(the Kafka source is cited in each builder's docstring); the oracle ``kafka_verify_index_only``
applies ``DumpLogSegments.dumpIndex``/``dumpTimeIndex``.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests.conftest import assert_no_traceback, run_cli, run_subprocess
from tests.ops.verify.kafka_versions import BUILDERS, kafka_verify_index_only

PRE_37 = "before Kafka 3.7"
PRE_806 = "index a multi-batch append"
CLEANER = "log cleaner kept"
ZERO_TAIL = "preallocated zero tail"

# (table row, builder, Kafka version, the notes expected by default)
CASES = [
    ("1.1 leader, uncompressed CreateTime", "leader_uncompressed", "1.1", {PRE_37}),
    ("2.0 leader, uncompressed CreateTime", "leader_uncompressed", "2.0", {PRE_37}),
    ("2.8 leader, uncompressed CreateTime", "leader_uncompressed", "2.8", {PRE_37}),
    ("3.4 leader, uncompressed CreateTime", "leader_uncompressed", "3.4", {PRE_37}),
    ("3.6 leader, uncompressed CreateTime", "leader_uncompressed", "3.6", {PRE_37}),
    ("3.7 leader, uncompressed CreateTime", "leader_uncompressed", "3.7", set()),
    ("3.9 leader, uncompressed CreateTime", "leader_uncompressed", "3.9", set()),
    ("2.8 leader, v2 and up-converted v1 requests", "leader_mixed_with_conversion", "2.8", {PRE_37}),
    ("2.8 leader, compressed", "leader_compressed", "2.8", set()),
    ("3.9 leader, compressed", "leader_compressed", "3.9", set()),
    ("2.8 leader, LogAppendTime", "leader_log_append_time", "2.8", set()),
    ("2.8 leader, v1 uncompressed", "leader_v1", "2.8", {PRE_806}),
    ("2.8 leader, v0 uncompressed", "leader_v0", "2.8", {PRE_806}),
    ("2.8 follower", "follower", "2.8", {PRE_806}),
    ("3.9 follower", "follower", "3.9", {PRE_806}),
    ("2.8 log cleaner", "cleaned", "2.8", {CLEANER}),
    ("crashed active segment, no entry yet", "crashed_active_segment", "3.6", {ZERO_TAIL}),
]


def _build(tmp_path: Path, builder: str, kafka: str) -> Path:
    return BUILDERS[builder](tmp_path, kafka)


def _json(r) -> tuple[list[dict], dict]:
    rows = [json.loads(line) for line in r.text.splitlines()]
    return rows[:-1], rows[-1]


@pytest.mark.parametrize("row,builder,kafka,notes", CASES, ids=[c[0] for c in CASES])
def test_healthy_partition_is_clean_by_default_and_strict_is_kafkas_verdict(
    tmp_path: Path, row: str, builder: str, kafka: str, notes: set[str]
) -> None:
    part = _build(tmp_path, builder, kafka)
    r = run_cli(["verify-index", "--format", "json", str(part)])
    rows, summary = _json(r)
    assert r.exit_code == 0, r.text
    assert summary["problems"] == 0 and summary["exitCode"] == 0
    (seg,) = [x for x in rows if x["type"] == "segment"]
    found = {key for key in (PRE_37, PRE_806, CLEANER, ZERO_TAIL) for n in seg["notes"] if key in n}
    assert found == notes, seg["notes"]

    expected = kafka_verify_index_only(part / "00000000000000000000.log")
    s = run_cli(["verify-index", "--strict", "--format", "json", str(part)])
    strict_rows, strict_summary = _json(s)
    reported = {(Path(p["file"]).suffix, p["entry"]) for p in strict_rows if p["type"] == "problem"}
    assert reported == expected
    assert s.exit_code == (1 if expected else 0) and strict_summary["exitCode"] == s.exit_code
    if notes & {PRE_37, CLEANER}:  # the older rules Kafka's own tool reports
        assert expected


def test_pre_37_time_index_text_output_names_the_rule(tmp_path: Path) -> None:
    part = _build(tmp_path, "leader_uncompressed", "2.8")
    r = run_subprocess(["verify-index", str(part)])
    assert r.exit_code == 0, r.text
    assert r.text.splitlines()[0] == f"{part / '00000000000000000000'}: clean (12 batches, 55392 bytes)"
    assert "note: " in r.text and "11 entries name the offset of the record holding the largest timestamp" in r.text
    assert "a time index written by a broker before Kafka 3.7" in r.text
    s = run_subprocess(["verify-index", "--strict", str(part)])
    assert s.exit_code == 1
    assert (
        s.text.count(
            "timeindex-offset: indexed offset is not the last offset of its batch (Kafka's --verify-index-only rule)"
        )
        == 11
    )
    assert_no_traceback(s)


def _patch_time_entry(part: Path, n: int, offset: int) -> None:
    path = part / "00000000000000000000.timeindex"
    raw = bytearray(path.read_bytes())
    ts, _ = struct.unpack_from(">qi", raw, n * 12)
    struct.pack_into(">qi", raw, n * 12, ts, offset)
    path.write_bytes(bytes(raw))


def test_a_damaged_pre_37_entry_is_still_a_problem(tmp_path: Path) -> None:
    """Entry 0 names offset 7 (record 2 of batch 5..9 holds the largest timestamp); offset 6 is inside the
    same batch but holds a smaller timestamp: lookups from it are still right, but no Kafka version wrote it."""
    part = _build(tmp_path, "leader_uncompressed", "2.8")
    _patch_time_entry(part, 0, 6)
    r = run_cli(["verify-index", str(part)])
    assert r.exit_code == 1
    assert "entry 0: byte 0: timeindex-offset" in r.text and "found 6" in r.text
    _patch_time_entry(part, 0, 70)  # past the log: no batch holds it
    r = run_cli(["verify-index", str(part)])
    assert r.exit_code == 1 and "timeindex-offset: indexed offset is not an offset of any batch" in r.text


def test_rebuild_check_calls_an_older_rule_file_valid_exit_0(tmp_path: Path) -> None:
    part = _build(tmp_path, "leader_uncompressed", "3.6")
    r = run_cli(["rebuild-index", "--check", str(part)])
    assert r.exit_code == 0, r.text
    assert "00000000000000000000.index: 11 entries: same as the existing file" in r.text
    assert (
        "00000000000000000000.timeindex: 11 entries: the existing file (11 entries) differs (entry #0: "
        "existing (timestamp 1730000000150, offset 7), rebuilt (timestamp 1730000000150, offset 9)) but is "
        "valid: an older broker's rule (see the notes)" in r.text
    )
    # the rule's explanation once, among the notes after the segments (issue 33)
    assert r.text.count("11 entries name the offset of the record holding the largest timestamp") == 1
    assert r.text.splitlines()[-1] == (
        "1 segment; files: 1 same, 1 older-rule; 1 .txnindex not needed (no aborted transaction)"
    )
    j = run_cli(["rebuild-index", "--check", "--format", "json", str(part)])
    (seg, summary) = [json.loads(line) for line in j.text.splitlines()]
    assert [f["status"] for f in seg["files"]] == ["same", "older-rule", "absent"]
    assert PRE_37 in seg["files"][1]["rule"] and summary["exitCode"] == 0


@pytest.mark.parametrize("builder,kafka", [("cleaned", "2.8"), ("follower", "2.8"), ("leader_v1", "2.8")])
def test_rebuild_check_on_other_older_rules_exit_0(tmp_path: Path, builder: str, kafka: str) -> None:
    part = _build(tmp_path, builder, kafka)
    r = run_cli(["rebuild-index", "--check", "--format", "json", str(part)])
    (seg, summary) = [json.loads(line) for line in r.text.splitlines()]
    assert summary["exitCode"] == 0 and r.exit_code == 0, r.text
    assert {f["status"] for f in seg["files"]} <= {"same", "older-rule", "absent"}
    assert "older-rule" in {f["status"] for f in seg["files"]}


def test_rebuild_check_still_reports_a_real_difference(tmp_path: Path) -> None:
    part = _build(tmp_path, "leader_uncompressed", "2.8")
    _patch_time_entry(part, 3, 21)  # the batch 20..24 holds its largest timestamp at 22, not 21
    r = run_cli(["rebuild-index", "--check", str(part)])
    assert r.exit_code == 1
    assert "00000000000000000000.timeindex: 11 entries: differs from the existing file (11 entries): entry #0" in r.text
    crashed = _build(tmp_path, "crashed_active_segment", "2.8")  # a zero tail is healthy, as verify-index says
    c = run_cli(["rebuild-index", "--check", str(crashed)])
    assert c.exit_code == 0 and c.text.count("then a preallocated zero tail") == 2, c.text


@pytest.mark.parametrize("kafka", ["2.4", "3.6"])
def test_untrimmed_rolled_segment_kafka_10207(tmp_path: Path, kafka: str) -> None:
    from tests.ops.verify.kafka_versions import untrimmed_rolled_segment

    part = untrimmed_rolled_segment(tmp_path, kafka)
    r = run_cli(["verify-index", "--format", "json", str(part)])
    rows, summary = _json(r)
    assert r.exit_code == 0 and summary["problems"] == 0, r.text
    first, second = [x for x in rows if x["type"] == "segment"]
    assert sum(ZERO_TAIL in n for n in first["notes"]) == 2 and not any(ZERO_TAIL in n for n in second["notes"])
    s = run_cli(["verify-index", "--strict", "--format", "json", str(part)])
    strict_rows, _ = _json(s)
    reported = {(Path(p["file"]).name, p["entry"]) for p in strict_rows if p["type"] == "problem"}
    expected = {
        (name + suffix, n)
        for name in ("00000000000000000000", "00000000000000000030")
        for suffix, n in kafka_verify_index_only(part / f"{name}.log")
    }
    assert reported == expected and s.exit_code == (1 if expected else 0)


def test_rebuild_without_force_names_the_older_rule_of_a_file_it_keeps(tmp_path: Path) -> None:
    part = _build(tmp_path, "leader_uncompressed", "2.8")
    before = (part / "00000000000000000000.timeindex").read_bytes()
    r = run_cli(["rebuild-index", str(part)])
    assert r.exit_code == 0  # healthy by its writer's rule (as --check says): kept, never an error
    assert (
        "00000000000000000000.timeindex: 11 entries: kept: the existing file (11 entries) differs (entry #0: "
        "existing (timestamp 1730000000150, offset 7), rebuilt (timestamp 1730000000150, offset 9)) but is "
        "valid: an older broker's rule (see the notes)" in r.text
    )
    assert r.text.count("11 entries name the offset of the record holding the largest timestamp") == 1
    assert (part / "00000000000000000000.timeindex").read_bytes() == before
