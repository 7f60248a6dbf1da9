"""``kseg verify-index`` through the real CLI: output, report, exit codes, jobs, log roots."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import CORPUS_DATA, assert_no_traceback, run_cli, run_subprocess


def test_clean_directory_exits_0() -> None:
    r = run_cli(["verify-index", str(CORPUS_DATA / "plain-v2-0")])
    assert r.exit_code == 0
    assert r.text.splitlines() == [
        "plain-v2-0/00000000000000000000: clean (22 batches, 28637 bytes)",
        "plain-v2-0/00000000000000000251: clean (16 batches, 22265 bytes)",
        "2 segments verified (50902 bytes), 2 clean.",
    ]


def test_problems_exit_1_with_one_line_each() -> None:
    r = run_cli(["verify-index", str(CORPUS_DATA / "corrupt-index-0")])
    assert r.exit_code == 1
    lines = r.text.splitlines()
    assert lines[0].startswith("corrupt-index-0/00000000000000000000: 1 problem")
    assert "entry 1" in lines[1] and "expected 103" in lines[1] and "found 106" in lines[1]


def test_strict_applies_kafkas_rule() -> None:
    follower = str(CORPUS_DATA / "follower-v2-0")
    assert run_cli(["verify-index", follower]).exit_code == 0
    r = run_cli(["verify-index", "--strict", follower])
    assert r.exit_code == 1 and r.text.count("index-mismatch") == 9


def test_log_root_with_report_and_jobs(tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir()
    for name in ("plain-v2-0", "corrupt-crc-0", "txn-v2-0"):
        shutil.copytree(CORPUS_DATA / name, root / name)
    shutil.copytree(CORPUS_DATA / "plain-v2-0", root / "old-0.0123456789abcdef0123456789abcdef-delete")
    report = tmp_path / "r.jsonl"
    r1 = run_subprocess(["verify-index", "--jobs", "2", "--report", str(report), str(root)])
    assert r1.exit_code == 1
    assert "skipped, a partition directory in transition" in r1.errtext
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    segments = [row for row in rows if row["type"] == "segment"]
    assert {row["partition"] for row in segments} == {"plain-v2-0", "corrupt-crc-0", "txn-v2-0"}
    assert [row["kind"] for row in rows if row["type"] == "problem"] == ["crc"]
    r2 = run_cli(["verify-index", "--format", "json", str(root)])
    objs = [json.loads(line) for line in r2.text.splitlines()]
    assert objs[-1]["type"] == "summary" and objs[-1]["problems"] == 1 and objs[-1]["exitCode"] == 1
    assert [o for o in objs if o["type"] != "summary"] == rows


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli(["verify-index", str(tmp_path / "nope")])
    assert r.exit_code == 2
    assert_no_traceback(r)


def test_single_segment_file() -> None:
    r = run_cli(["verify-index", str(CORPUS_DATA / "plain-v2-0" / "00000000000000000251.log")])
    assert r.exit_code == 0 and r.text.count("clean (") == 1


def test_unreadable_log_is_a_failed_segment_exit_2(tmp_path: Path) -> None:
    part = tmp_path / "p-0"
    part.mkdir()
    (part / "00000000000000000000.log").mkdir()  # a directory where the log should be
    shutil.copyfile(CORPUS_DATA / "plain-v2-0" / "00000000000000000000.index", part / "00000000000000000000.index")
    r = run_cli(["verify-index", str(part)])
    assert r.exit_code == 2 and "FAILED" in r.text
