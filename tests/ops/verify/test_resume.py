"""kseg.ops.verify.resume: which segments an earlier report verified, skipped only when unchanged."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from kseg.errors import InputError
from kseg.ops.verify.report import write_rows_part
from kseg.ops.verify.resume import Verdict, carried_rows, skip_verified, verified
from kseg.ops.verify.run import Report
from kseg.storage import files
from kseg.storage.listing import Listed
from kseg.storage.outputs import destination
from kseg.storage.stores.discover import store_of
from kseg.storage.stores.find import discover
from tests.conftest import corpus_copy


def _segment_row(
    log_dir: str,
    partition: str,
    segment: str,
    size: int,
    status: str,
    problems: int = 0,
    last: int | None = 9,
    identity: str | None = None,
) -> dict:
    """A report's segment row; ``identity`` that of the partition's ``.log`` when it exists (as the run that
    wrote the report recorded it), else ``size=<size>``."""
    log = Path(log_dir) / partition / f"{segment}.log"
    if identity is None:
        identity = files.identity(str(log), store=store_of(str(log))) if log.exists() else f"size={size}"
    return {
        "type": "segment",
        "logDir": log_dir,
        "partition": partition,
        "segment": segment,
        "bytes": size,
        "lastOffset": last,
        "identity": identity,
        "status": status,
        "problems": problems,
    }


def test_only_unchanged_segments_with_a_verdict_are_skipped(tmp_path: Path) -> None:
    part = corpus_copy(tmp_path, "plain-v2-0", "p-0")
    (partition,) = discover([str(part)], [])
    first, second = partition.segments
    log_dir = str(tmp_path)
    rows = [
        _segment_row(log_dir, "p-0", first.name, first.log_size(), "problems", 1),
        {"type": "problem", "logDir": log_dir, "partition": "p-0", "segment": first.name, "kind": "crc"},
        _segment_row(log_dir, "p-0", second.name, second.log_size() + 1, "clean"),  # changed since
        _segment_row(log_dir, "q-0", first.name, first.log_size(), "clean"),  # another partition
        _segment_row(log_dir, "p-0", "00000000000000099999", 5, "failed"),  # never a verdict
    ]
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept, skipped, before = skip_verified([partition], verified(str(report)))
    assert skipped == {(log_dir, "p-0", first.name)}
    assert [s.name for s in kept[0].segments] == [second.name]
    assert before[(log_dir, "p-0", second.name)].last_offset == 9  # checked against the skipped one
    prior = Report()
    carried = list(carried_rows(str(report), skipped, prior))
    assert [r["type"] for r in carried] == ["segment", "problem"]
    assert (prior.resumed, prior.segments, prior.with_problems, prior.problems) == (1, 1, 1, 1)
    assert prior.exit_code == 1


def test_a_part_file_directory_jsonl_and_parquet(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    rows = [_segment_row("/d", "p-0", f"{i:020d}", 10 + i, "clean") for i in range(3)]
    for fmt, name in (("jsonl", "j"), ("parquet", "p.parquet")):
        directory = tmp_path / name
        directory.mkdir()
        write_rows_part(destination(str(directory)), "00000", rows[:2], fmt)
        write_rows_part(destination(str(directory)), "00001", rows[2:], fmt)
        assert verified(str(directory)) == {
            ("/d", "p-0", f"{i:020d}", 10 + i): Verdict(9, f"size={10 + i}") for i in range(3)
        }


def test_a_report_that_is_not_one_is_an_error_at_its_byte(tmp_path: Path) -> None:
    bad = tmp_path / "r.jsonl"
    bad.write_text('{"type":"segment","partition":"p-0","segment":null}\nnot json\n')
    with pytest.raises(InputError) as info:
        verified(str(bad))
    assert "expected a verify-index report row" in info.value.describe() and "52" in info.value.describe()
    with pytest.raises(InputError, match="cannot read the report to resume"):
        verified(str(tmp_path / "missing.jsonl"))


def _partition(tmp_path: Path, segments: int):
    """A partition directory of ``segments`` segments (copies of plain-v2-0's two, renamed in order)."""
    part = corpus_copy(tmp_path, "plain-v2-0", "p-0")
    (partition,) = discover([str(part)], [])
    while len(partition.segments) < segments:
        src = partition.segments[len(partition.segments) % 2]
        base = 1000 * len(partition.segments)
        for suffix in (".log", ".index", ".timeindex"):
            (part / f"{base:020d}{suffix}").write_bytes((part / f"{src.name}{suffix}").read_bytes())
        (partition,) = discover([str(part)], [])
    return partition


def test_a_segment_after_a_verified_again_one_is_verified_again_too(tmp_path: Path) -> None:
    """Segments 0, 2 and 3 have verdicts, 1 failed: 0 and 3 are skipped; 2 is verified again (its overlap
    with 1 belongs on its row); 1 is checked against 0's last offset as the report gives it; 3 is not
    (its row, carried, was checked against 2 by the earlier run)."""
    partition = _partition(tmp_path, 4)
    segs = partition.segments
    rows = [_segment_row(partition.log_dir, "p-0", s.name, s.log_size(), "clean", last=i) for i, s in enumerate(segs)]
    rows[1]["status"] = "failed"
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept, skipped, before = skip_verified([partition], verified(str(report)))
    assert [s.name for s in kept[0].segments] == [segs[1].name, segs[2].name]
    assert skipped == {(partition.log_dir, "p-0", segs[i].name) for i in (0, 3)}
    assert list(before) == [(partition.log_dir, "p-0", segs[1].name)]
    assert before[(partition.log_dir, "p-0", segs[1].name)].segment == segs[0].name
    assert before[(partition.log_dir, "p-0", segs[1].name)].last_offset == 0
    assert kept[0].head_left_out
    packed, skipped_packed, before_packed = skip_verified([Listed(partition)], verified(str(report)))
    assert isinstance(packed[0], Listed)  # --spark's listing stays compact
    assert [s.name for s in packed[0].segments] == [s.name for s in kept[0].segments]
    assert packed[0].head_left_out and (skipped_packed, before_packed) == (skipped, before)


def test_a_row_without_last_offset_is_verified_again(tmp_path: Path) -> None:
    row = _segment_row("/d", "p-0", f"{0:020d}", 10, "clean")
    del row["lastOffset"]  # a report written before lastOffset: continuity could not be checked across it
    report = tmp_path / "r.jsonl"
    report.write_text(json.dumps(row) + "\n")
    assert verified(str(report)) == {}


def _flip_keeping_size_and_mtime(path: Path, at: int = 100) -> None:
    """A byte of ``path`` flipped, its size and mtime as before (``touch -d`` would do the same)."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def test_a_segment_changed_with_size_and_mtime_kept_is_verified_again(tmp_path: Path) -> None:
    """Size and mtime are no identity: the ctime (which no user sets back) tells the write, and the note says
    so; the untouched segment (the healthy twin) is skipped."""
    partition = _partition(tmp_path, 2)
    first, second = partition.segments
    rows = [
        _segment_row(partition.log_dir, "p-0", s.name, s.log_size(), "clean", last=i) for i, s in enumerate([first])
    ]
    rows.append(_segment_row(partition.log_dir, "p-0", second.name, second.log_size(), "clean", last=500))
    report = tmp_path / "r.jsonl"
    report.write_text("".join(json.dumps(r) + "\n" for r in rows))
    time.sleep(0.01)  # a ctime of the same clock tick would not tell
    _flip_keeping_size_and_mtime(Path(second.log))
    notes: list[str] = []
    kept, skipped, _ = skip_verified([partition], verified(str(report)), notes)
    assert skipped == {(partition.log_dir, "p-0", first.name)}
    assert [s.name for s in kept[0].segments] == [second.name]
    (note,) = notes
    assert note.startswith(f"{second.log}: verified again: changed since the report (ctime_ns ")
    assert "mtime_ns" not in note and "size" not in note


def test_a_row_without_identity_is_verified_again_with_a_note(tmp_path: Path) -> None:
    partition = _partition(tmp_path, 2)
    seg = partition.segments[0]
    row = _segment_row(partition.log_dir, "p-0", seg.name, seg.log_size(), "clean")
    del row["identity"]  # a report of an older kseg: size alone was trusted
    report = tmp_path / "r.jsonl"
    report.write_text(json.dumps(row) + "\n")
    notes: list[str] = []
    kept, skipped, _ = skip_verified([partition], verified(str(report)), notes)
    assert skipped == set() and kept[0].segments[0].name == seg.name
    assert notes == [f"{seg.log}: verified again: the report records no identity of it (an older report)"]


def test_a_report_that_is_no_regular_file_is_refused_before_a_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody writes: an open for reading would block
    for path, said in ((fifo, "a FIFO, not a report"), (Path("/dev/zero"), "a device, not a report")):
        with pytest.raises(InputError, match=said):
            verified(str(path))


def test_a_report_line_past_the_bound_is_refused_where_it_starts(tmp_path: Path) -> None:
    from kseg.ops.verify import resume

    row = json.dumps(_segment_row("/d", "p-0", f"{0:020d}", 10, "clean")) + "\n"
    report = tmp_path / "r.jsonl"
    with report.open("wb") as f:
        f.write(row.encode())
        f.truncate(len(row) + resume.MAX_ROW + 2 * resume.CHUNK)  # NUL bytes, no newline
    with pytest.raises(InputError) as info:
        verified(str(report))
    assert f"a line longer than {resume.MAX_ROW} bytes" in info.value.describe()
    assert f"at byte {len(row)}" in info.value.describe() or str(len(row)) in info.value.describe()
