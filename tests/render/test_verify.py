"""verify-index's lines (:mod:`kseg.render.verify`): problems, segments, notes and the summary."""

from __future__ import annotations

import io
import json

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.verify.result import Problem, SegmentResult
from kseg.ops.verify.run import Report
from kseg.render.notes import NoteGroups
from kseg.render.verify import label, problem_line, render_result, render_summary, summary_line
from kseg.storage.location import LocalNames


def _result(**kw) -> SegmentResult:
    res = SegmentResult(
        "orders-0", "00000000000000000000", 0, "/b1/data/orders-0/00000000000000000000.log", names=LocalNames()
    )
    res.bytes, res.batches = 2048, 1
    for k, v in kw.items():
        setattr(res, k, v)
    return res


def test_problem_line_where_kind_message_expected_found() -> None:
    p = Problem("index_entry", "00.index", "offset not in the log", position=16, entry=2, expected="5", found="9")
    assert problem_line(p) == "00.index: entry 2: byte 16: index_entry: offset not in the log (expected 5, found 9)"
    assert problem_line(Problem("truncated", "00.log", "a partial batch")) == "00.log: truncated: a partial batch"
    # a row standing for many entries wrong for one cause names what the first one expected
    many = Problem(
        "past_end", "00.index", "3 entries past the log", entry=4, expected="<= 9", found="12", consequences=3
    )
    assert (
        problem_line(many)
        == "00.index: entry 4: past_end: 3 entries past the log (of the first: expected <= 9, found 12)"
    )


def test_label_short_or_with_the_directory() -> None:
    res = _result()
    assert label(res, False) == "orders-0/00000000000000000000"
    assert label(res, True) == "/b1/data/orders-0/00000000000000000000"


def test_segment_lines_clean_problems_failed_and_notes() -> None:
    out = io.BytesIO()
    render_result(out, _result(notes=["00.timeindex: preallocated zero tail of 1 entry"]), "text")
    problem = Problem("crc", "00.log", "batch CRC mismatch", position=0)
    render_result(out, _result(problems=[problem], bytes=1, batches=2), "text")
    render_result(out, _result(failed="[Errno 5] Input/output error"), "text")
    assert out.getvalue().decode() == (
        "/b1/data/orders-0/00000000000000000000: clean (1 batch, 2048 bytes)\n"
        "  note: 00.timeindex: preallocated zero tail of 1 entry\n"
        "/b1/data/orders-0/00000000000000000000: 1 problem (2 batches, 1 byte)\n"
        "  problem: 00.log: byte 0: crc: batch CRC mismatch\n"
        "/b1/data/orders-0/00000000000000000000: FAILED: [Errno 5] Input/output error\n"
    )


def test_quiet_skips_clean_segments_and_grouped_notes_wait_for_the_end() -> None:
    out, groups = io.BytesIO(), NoteGroups("file")
    render_result(out, _result(), "text", quiet=True)
    render_result(out, _result(notes=["a/00.index: note one"]), "text", notes=groups)
    assert out.getvalue().decode() == "/b1/data/orders-0/00000000000000000000: clean (1 batch, 2048 bytes)\n"
    assert groups.texts() == ["a/00.index: note one"]


def test_json_rows_and_summary() -> None:
    out = io.BytesIO()
    render_result(out, _result(), "json")
    report = Report()
    report.add(_result())
    report.add(_result(problems=[Problem("crc", "00.log", "m")]))
    render_summary(out, report, "json")
    rows = [json.loads(line) for line in out.getvalue().decode().splitlines()]
    assert rows[0]["type"] == "segment" and rows[0]["v"] == SCHEMA_VERSION
    assert rows[-1] == {
        "type": "summary",
        "v": SCHEMA_VERSION,
        "segments": 2,
        "clean": 1,
        "withProblems": 1,
        "failed": 0,
        "unreadableDirectories": 0,
        "problems": 1,
        "bytes": 4096,
        "exitCode": report.exit_code,
    }


def test_summary_line_counts_in_words() -> None:
    report = Report()
    assert summary_line(report) == "0 segments verified (0 bytes), 0 clean."
    report.add(_result())
    report.add(_result(problems=[Problem("crc", "00.log", "m"), Problem("crc", "00.log", "n")]))
    report.add(_result(failed="gone"))
    report.unreadable_dirs = 1
    assert summary_line(report) == (
        "3 segments verified (6144 bytes), 1 clean, 1 with problems (2 problems), 1 failed; "
        "1 directory could not be read."
    )
