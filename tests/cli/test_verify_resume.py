"""``kseg verify-index --resume REPORT`` as a real process: resumed segments are not read again, their
rows carried into the report, counted in the summary; a changed segment is verified again."""

from __future__ import annotations

import json
from pathlib import Path

from kseg.ops.verify.report import sort_key
from tests.conftest import corpus_copy, run_subprocess


def _rows(path: Path) -> list[dict]:
    return sorted((json.loads(line) for line in path.read_text().splitlines()), key=sort_key)


def test_resume_skips_what_was_verified_and_gives_the_full_verdict(tmp_path: Path) -> None:
    root = tmp_path / "data"
    for name in ("plain-v2-0", "txn-v2-0", "corrupt-crc-0"):
        corpus_copy(root, name, name)
    full = tmp_path / "full.jsonl"
    first = run_subprocess(["verify-index", "--report", str(full), str(root)])
    assert first.exit_code == 1
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(r) + "\n" for r in _rows(full) if r["partition"] != "txn-v2-0"))
    r = run_subprocess(["verify-index", "--resume", str(report), "--format", "json", str(root)])
    assert r.exit_code == 1, r.errtext
    *shown, summary = [json.loads(line) for line in r.text.splitlines()]
    assert {row["partition"] for row in shown if row["type"] == "segment"} == {"txn-v2-0"}  # only those read
    segments = sum(1 for row in _rows(full) if row["type"] == "segment")
    assert summary["segments"] == segments and summary["resumed"] == segments - 2 and summary["exitCode"] == 1
    assert _rows(report) == _rows(full)  # the report holds both, as one run's
    # a segment that changed since is verified again
    log = sorted((root / "plain-v2-0").glob("*.log"))[0]
    log.write_bytes(log.read_bytes() + b"\0\0\0")
    r = run_subprocess(["verify-index", "--resume", str(report), str(root)])
    assert r.exit_code == 1
    assert f"plain-v2-0/{log.stem}: 1 problem" in r.text
    assert f"; {segments - 1} of the segments resumed from the earlier report." in r.text


def test_resume_into_another_report_and_unreadable_resume(tmp_path: Path) -> None:
    part = corpus_copy(tmp_path, "plain-v2-0", "p-0")
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    assert run_subprocess(["verify-index", "--report", str(old), str(part)]).exit_code == 0
    r = run_subprocess(["verify-index", "--resume", str(old), "--report", str(new), str(part)])
    assert r.exit_code == 0 and "2 of the segments resumed" in r.text
    assert _rows(new) == _rows(old)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    r = run_subprocess(["verify-index", "--resume", str(bad), str(part)])
    assert r.exit_code == 2 and r.errtext.startswith("kseg: error: ") and len(r.errtext.splitlines()) == 1
    assert "expected a verify-index report row" in r.errtext and bad.read_text() == "garbage\n"
