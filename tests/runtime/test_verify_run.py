"""The run of ``verify-index`` (:class:`kseg.runtime.verify.VerifyRun`), on real partition directories and real
report files: the report written as results come, ``--resume``'s segments skipped and their rows carried
(into the report here, into a ``part-resumed`` file for Spark), counted in the summary, and the exit code."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kseg.ops.verify.report import JsonlReport, sort_key
from kseg.ops.verify.run import Report
from kseg.runtime.run import Run
from kseg.runtime.verify import VerifyRun
from kseg.storage.outputs import destination
from kseg.storage.stores.find import discover
from tests.conftest import corpus_copy


def _rows(path: Path) -> list[dict]:
    return sorted((json.loads(line) for line in path.read_text().splitlines()), key=sort_key)


def _verify(paths: list[str], report: Path | None, resume: Path | None = None) -> tuple[int, VerifyRun, str]:
    run = Run(io.BytesIO(), io.BytesIO(), quiet=True)
    keys = VerifyRun.verified(run, str(resume) if resume else None)
    verify = VerifyRun(run, str(report) if report else None, JsonlReport(destination(str(report))) if report else None)
    partitions = verify.skip(discover(paths, []), keys, str(resume) if resume else None)
    code = verify.here(partitions, strict=False, jobs=1, max_message_size=1 << 20, output_format="text", verbose=False)
    return code, verify, run.out.getvalue().decode()  # type: ignore[attr-defined]


def test_a_run_reports_and_gives_the_exit_code(tmp_path: Path) -> None:
    clean = corpus_copy(tmp_path / "data", "plain-v2-0", "clean-0")
    bad = corpus_copy(tmp_path / "data", "corrupt-crc-0", "bad-0")
    report = tmp_path / "r.jsonl"
    code, verify, text = _verify([str(clean)], report)
    assert code == 0 and verify.resumption is None and verify.prior.counts() == Report().counts()
    segments = [r for r in _rows(report) if r["type"] == "segment"]
    assert segments and {r["status"] for r in segments} == {"clean"}
    assert "clean" in text.splitlines()[-1]
    code, _, _ = _verify([str(bad)], tmp_path / "bad.jsonl")
    assert code == 1 and any(r["type"] == "problem" for r in _rows(tmp_path / "bad.jsonl"))


def test_resume_skips_the_verified_segments_carries_their_rows_and_counts_them(tmp_path: Path) -> None:
    root = tmp_path / "data"
    for name in ("plain-v2-0", "corrupt-crc-0"):
        corpus_copy(root, name, name)
    full = tmp_path / "full.jsonl"
    assert _verify([str(root)], full)[0] == 1
    resumed = tmp_path / "resumed.jsonl"
    code, verify, text = _verify([str(root)], resumed, resume=full)
    segments = sum(1 for r in _rows(full) if r["type"] == "segment")
    assert code == 1  # the carried problems still count
    assert verify.resumption is not None and len(verify.resumption.skipped) == segments
    assert verify.prior.resumed == segments == verify.prior.segments
    assert _rows(resumed) == _rows(full)  # the carried rows are the new report's, as one run's
    assert f"; {segments} of the segments resumed from the earlier report." in text


def test_on_spark_the_carried_rows_become_the_report_directory_s_part_file(tmp_path: Path) -> None:
    """What the Spark driver does before Spark starts (no session needed): the report directory made ready
    and the rows of the skipped segments written as its ``part-resumed`` file, counted for the summary."""
    part = corpus_copy(tmp_path, "plain-v2-0", "p-0")
    old = tmp_path / "old.jsonl"
    assert _verify([str(part)], old)[0] == 0
    run = Run(io.BytesIO(), io.BytesIO())
    directory = tmp_path / "report"
    verify = VerifyRun(run, str(directory))
    left = verify.skip(discover([str(part)], []), VerifyRun.verified(run, str(old)), str(old))
    assert [seg for p in left for seg in p.segments] == []
    verify.ready_report()
    assert verify.resumed_part is not None and Path(verify.resumed_part).parent == directory
    assert _rows(Path(verify.resumed_part)) == _rows(old)
    result = verify.tally(Report())
    assert result.resumed == result.segments == verify.prior.resumed > 0 and result.exit_code == 0


def test_a_report_to_resume_that_cannot_be_read_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    run = Run(io.BytesIO(), io.BytesIO())
    with pytest.raises(SystemExit) as ended:
        VerifyRun.verified(run, str(bad))
    err = run.err.getvalue().decode()  # type: ignore[attr-defined]
    assert ended.value.code == 2 and err.startswith("kseg: error: ") and len(err.splitlines()) == 1
    assert "expected a verify-index report row" in err and bad.read_text() == "garbage\n"
    assert VerifyRun.verified(run, None) == {}
