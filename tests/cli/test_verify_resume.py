"""``kseg verify-index --resume REPORT`` (the real command, run in the test process): resumed segments are
not read again, their rows carried into the report, counted in the summary; a changed segment is verified
again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kseg.ops.verify.report import sort_key
from tests.conftest import corpus_copy, run_cli


def _rows(path: Path) -> list[dict]:
    return sorted((json.loads(line) for line in path.read_text().splitlines()), key=sort_key)


def test_resume_skips_what_was_verified_and_gives_the_full_verdict(tmp_path: Path) -> None:
    root = tmp_path / "data"
    for name in ("plain-v2-0", "txn-v2-0", "corrupt-crc-0"):
        corpus_copy(root, name, name)
    full = tmp_path / "full.jsonl"
    first = run_cli(["verify-index", "--report", str(full), str(root)])
    assert first.exit_code == 1
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(r) + "\n" for r in _rows(full) if r["partition"] != "txn-v2-0"))
    r = run_cli(["verify-index", "--resume", str(report), "--format", "json", str(root)])
    assert r.exit_code == 1, r.errtext
    *shown, summary = [json.loads(line) for line in r.text.splitlines()]
    assert {row["partition"] for row in shown if row["type"] == "segment"} == {"txn-v2-0"}  # only those read
    segments = sum(1 for row in _rows(full) if row["type"] == "segment")
    assert summary["segments"] == segments and summary["resumed"] == segments - 2 and summary["exitCode"] == 1
    assert _rows(report) == _rows(full)  # the report holds both, as one run's
    # a segment that changed since is verified again
    log = sorted((root / "plain-v2-0").glob("*.log"))[0]
    log.write_bytes(log.read_bytes() + b"\0\0\0")
    r = run_cli(["verify-index", "--resume", str(report), str(root)])
    assert r.exit_code == 1
    assert f"plain-v2-0/{log.stem}: 1 problem" in r.text
    # and the segment after it too: its overlap with the changed one would belong on its row
    assert f"; {segments - 2} of the segments resumed from the earlier report." in r.text


def test_resume_into_another_report_and_unreadable_resume(tmp_path: Path) -> None:
    part = corpus_copy(tmp_path, "plain-v2-0", "p-0")
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    assert run_cli(["verify-index", "--report", str(old), str(part)]).exit_code == 0
    r = run_cli(["verify-index", "--resume", str(old), "--report", str(new), str(part)])
    assert r.exit_code == 0 and "2 of the segments resumed" in r.text
    assert _rows(new) == _rows(old)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("garbage\n")
    r = run_cli(["verify-index", "--resume", str(bad), str(part)])
    assert r.exit_code == 2 and r.errtext.startswith("kseg: error: ") and len(r.errtext.splitlines()) == 1
    assert "expected a verify-index report row" in r.errtext and bad.read_text() == "garbage\n"


def overlapping_partition(root: Path) -> Path:
    """A partition whose middle segment overlaps both neighbours: ``…000`` (offsets 0-250), ``…200``
    (a copy of the ``…251`` segment: offsets 251 on, named 200) and ``…251``."""
    part = corpus_copy(root, "plain-v2-0", "p-0")
    for suffix in (".log", ".index", ".timeindex"):
        (part / f"{200:020d}{suffix}").write_bytes((part / f"{251:020d}{suffix}").read_bytes())
    return part


def failed_in(rows: list[dict], segment: str) -> list[dict]:
    """``rows`` (a report's) with ``segment``'s verdict turned into a ``failed`` row: a report whose run
    could not read it (its problem rows gone with the verdict)."""
    out = []
    for row in rows:
        if row["segment"] == segment and row["type"] == "problem":
            continue
        if row["segment"] == segment:
            row = {**row, "status": "failed", "error": "executor x: no such file", "problems": 0}
        out.append(row)
    return out


def test_resume_checks_continuity_across_resumed_segments(tmp_path: Path) -> None:
    """A full run and a resumed run give the same problems: ``…200``, verified again (its row was failed),
    overlaps the resumed ``…000`` before it (checked against the report's lastOffset of it), and
    ``…251`` (whose verdict could be resumed) overlaps ``…200``: verified again, the overlap on its row."""
    part = overlapping_partition(tmp_path / "data")
    full = tmp_path / "full.jsonl"
    first = run_cli(["verify-index", "--report", str(full), str(part)])
    assert first.exit_code == 1, first.errtext
    kinds = {(r["segment"], r["kind"]) for r in _rows(full) if r["type"] == "problem"}
    assert {(f"{200:020d}", "segment-overlap"), (f"{251:020d}", "segment-overlap")} <= kinds
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(r) + "\n" for r in failed_in(_rows(full), f"{200:020d}")))
    r = run_cli(["verify-index", "--resume", str(report), "--format", "json", str(part)])
    assert r.exit_code == 1, r.errtext
    *shown, summary = [json.loads(line) for line in r.text.splitlines()]
    assert [row["segment"] for row in shown if row["type"] == "segment"] == [f"{200:020d}", f"{251:020d}"]
    assert summary["resumed"] == 1
    assert _rows(report) == _rows(full)  # the same rows, the same problems, as the full run's


def test_resume_from_a_report_on_a_store(s3, tmp_path: Path) -> None:
    """``--resume s3://…``: a JSON Lines file and a Parquet part-file directory on the S3 server, read
    with ranged requests; the same rows as the full run, continuity checked across the resumed segment."""
    pytest.importorskip("pyarrow")
    from kseg.ops.verify.report import write_rows_part
    from kseg.storage.outputs import destination

    part = overlapping_partition(tmp_path / "data")
    full = tmp_path / "full.jsonl"
    assert run_cli(["verify-index", "--report", str(full), str(part)]).exit_code == 1
    rows = failed_in(_rows(full), f"{200:020d}")
    parquet = tmp_path / "r.parquet"
    parquet.mkdir()
    write_rows_part(destination(str(parquet)), "00000", rows[:3], "parquet")
    write_rows_part(destination(str(parquet)), "00001", rows[3:], "parquet")
    s3.upload_tree(parquet, "resume/r.parquet")
    s3.client.put_object(
        Bucket="kseg-test", Key="resume/r.jsonl", Body="".join(json.dumps(r) + "\n" for r in rows).encode()
    )
    for name in ("r.jsonl", "r.parquet"):
        new = tmp_path / f"new-{name}.jsonl"
        r = run_cli(["verify-index", "--resume", s3.uri(f"resume/{name}"), "--report", str(new), str(part)])
        assert r.exit_code == 1 and "1 of the segments resumed" in r.text, (name, r.errtext)
        assert _rows(new) == _rows(full), name
    r = run_cli(["verify-index", "--resume", s3.uri("resume/none.jsonl"), str(part)])
    assert r.exit_code == 2 and len(r.errtext.splitlines()) == 1, r.errtext
    assert "cannot read the report to resume" in r.errtext and "resume/none.jsonl" in r.errtext


def test_a_byte_flipped_with_size_and_mtime_restored_is_read_again(tmp_path: Path) -> None:
    """Size and mtime are no identity (issue 32): the report records size, mtime_ns and ctime_ns, and a
    segment whose ctime moved is verified again (its CRC problem found), with a note saying why."""
    import os
    import time

    part = corpus_copy(tmp_path, "plain-v2-0", "p-0")
    report = tmp_path / "r.jsonl"
    assert run_cli(["verify-index", "--report", str(report), str(part)]).exit_code == 0
    rows = _rows(report)
    assert all(row["identity"].startswith("size=") and " ctime_ns=" in row["identity"] for row in rows)
    log = sorted(part.glob("*.log"))[-1]
    st = log.stat()
    time.sleep(0.01)
    data = bytearray(log.read_bytes())
    data[-3] ^= 0xFF  # in the last batch's records: its CRC no longer holds
    log.write_bytes(bytes(data))
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
    r = run_cli(["verify-index", "--resume", str(report), str(part)])
    assert r.exit_code == 1, r.errtext
    assert f"p-0/{log.stem}: 1 problem" in r.text and "1 of the segments resumed" in r.text
    assert f"{log}: verified again: changed since the report (ctime_ns " in r.errtext


@pytest.mark.parametrize("what", ["fifo", "/dev/zero"])
def test_resume_from_a_fifo_or_a_device_is_one_line(tmp_path: Path, what: str) -> None:
    import os

    part = corpus_copy(tmp_path, "plain-v2-0", "p-0")
    path = tmp_path / "fifo" if what == "fifo" else Path(what)
    if what == "fifo":
        os.mkfifo(path)
    r = run_cli(["verify-index", "--resume", str(path), "--report", str(tmp_path / "new.jsonl"), str(part)])
    assert r.exit_code == 2 and len(r.errtext.splitlines()) == 1, r.errtext
    assert f"{path}: cannot resume from it: a " in r.errtext and "not a report" in r.errtext


def test_resume_of_segments_on_a_store_trusts_their_etag(s3, tmp_path: Path) -> None:
    """On a store the identity is the object's ETag: an unchanged object is resumed, one written again with
    a byte flipped (same size) is verified again."""
    part = corpus_copy(tmp_path, "plain-v2-0", "p-0")
    s3.upload_tree(part, "resume-etag/p-0")
    uri = s3.uri("resume-etag/p-0")
    report = tmp_path / "r.jsonl"
    assert run_cli(["verify-index", "--report", str(report), uri]).exit_code == 0
    assert all(row["identity"].startswith("etag=") for row in _rows(report))
    again = run_cli(["verify-index", "--resume", str(report), uri])
    assert again.exit_code == 0 and "2 of the segments resumed" in again.text, again.text
    log = sorted(part.glob("*.log"))[-1]
    data = bytearray(log.read_bytes())
    data[-3] ^= 0xFF
    s3.client.put_object(Bucket=uri.split("/")[2], Key=f"resume-etag/p-0/{log.name}", Body=bytes(data))
    r = run_cli(["verify-index", "--resume", str(report), uri])
    assert r.exit_code == 1 and f"p-0/{log.stem}: 1 problem" in r.text, r.text
    assert "verified again: changed since the report (etag " in r.errtext
