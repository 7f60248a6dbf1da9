"""Output of ``kseg verify-index`` (local and ``--spark``): one line per segment with its problem and
note lines, and a summary line (text), or the report rows and a summary object (JSON Lines).

A segment is named ``<partition>/<base offset>``; when the run spans more than one log
directory, by its whole directory path (``b1/data/orders-0/00000000000000000000``), so a
reader can tell which broker's replica a line is about.  See ``docs/verify-index.md``.
"""

from __future__ import annotations

import os

from kseg.jsonlines import SCHEMA_VERSION, dumps
from kseg.ops.verify.report import result_rows
from kseg.ops.verify.result import Problem, SegmentResult
from kseg.ops.verify.run import Report, is_directory_row
from kseg.render.notes import NoteGroups, Repeats, plural


def problem_line(p: Problem) -> str:
    """``file: entry N: byte M: kind: message (expected E, found F)``."""
    where = [p.file]
    if p.entry is not None:
        where.append(f"entry {p.entry}")
    if p.position is not None:
        where.append(f"byte {p.position}")
    text = f"{': '.join(where)}: {p.kind}: {p.message}"
    if p.expected is not None or p.found is not None:
        first = "of the first: " if p.consequences else ""
        text += f" ({first}expected {p.expected}, found {p.found})"
    return text


def _write(out, text: str) -> None:
    out.write(text.encode("utf-8", "replace"))


def directory(res: SegmentResult) -> str:
    """The partition directory's path as found, shown in its store's grammar (the result's ``names``)."""
    return res.names.display(res.path if is_directory_row(res) else os.path.dirname(res.path) or ".")


def label(res: SegmentResult, full: bool) -> str:
    """``partition/segment``, or with ``full`` the partition directory's path (as found) and the segment."""
    if is_directory_row(res):
        return directory(res) if full else res.partition
    if full:
        return f"{directory(res)}/{res.segment}"
    return f"{res.partition}/{res.segment}"


def note_groups() -> NoteGroups:
    """Where a run's notes are grouped by kind when they are not printed under each segment (text
    without ``--verbose``)."""
    return NoteGroups("file", "--verbose or --format json lists every one")


def render_result(
    out,
    res: SegmentResult,
    output_format: str,
    full_names: bool = False,
    notes: NoteGroups | None = None,
    quiet: bool = False,
    folded: bool = False,
    repeats: Repeats | None = None,
) -> None:
    """One segment's summary line, its problem lines and notes (text), or its rows (json).

    Text: with ``notes`` the notes go there (printed grouped by kind at the end), else under the
    segment (``repeats``: a long note's explanation once a run); ``folded``: they were grouped already, as
    the result came (a Spark run); ``quiet`` prints only segments with problems (or failed) and no notes."""
    if output_format == "json":
        _write(out, "".join(dumps(row) + "\n" for row in result_rows(res)))
        return
    if quiet and res.status == "clean":
        return
    where = label(res, True)  # the path as given, as every problem and note of the segment names it (issue 33)
    counts = f"({plural(res.batches, 'batch')}, {plural(res.bytes, 'byte')})"
    if res.status == "failed":
        lines = [f"{where}: FAILED: {res.failed}"]
    elif res.problems:
        lines = [f"{where}: {plural(res.problem_count, 'problem')} {counts}"]
    else:
        lines = [f"{where}: clean {counts}"]
    lines += [f"  problem: {problem_line(p)}" for p in res.problems]
    lines += [f"  note: {note}" for note in res.omitted_notes()]  # about the problems: always with them
    if notes is not None:
        for note in res.notes:
            notes.add(note)
    elif not quiet and not folded:
        lines += [f"  note: {note if repeats is None else repeats.line(note)}" for note in res.notes]
    _write(out, "\n".join(lines) + "\n")


class PartitionSummary:
    """Per-partition counts for the table a terminal gets before the summary line."""

    def __init__(self, full_names: bool) -> None:
        self.full = full_names
        self.rows: dict[str, list[int]] = {}  # name -> [segments, clean, with problems, failed, problems, bytes]

    def add(self, res: SegmentResult) -> None:
        name = directory(res) if self.full else res.partition
        row = self.rows.setdefault(name, [0, 0, 0, 0, 0, 0])
        row[0] += 1
        row[1] += res.status == "clean"
        row[2] += res.status == "problems"
        row[3] += res.status == "failed"
        row[4] += res.problem_count
        row[5] += res.bytes

    def write(self, out) -> None:
        from kseg.render.table import write_table

        write_table(
            out,
            "verify-index: per partition",
            ["partition", "segments", "clean", "with problems", "failed", "problems", "bytes"],
            [[name, *counts] for name, counts in self.rows.items()],
        )


def summary_line(report: Report) -> str:
    """``N segments verified (B bytes), C clean, ...``: the run's last line (black's Report style)."""
    parts = [f"{plural(report.segments, 'segment')} verified ({plural(report.bytes, 'byte')})", f"{report.clean} clean"]
    if report.with_problems:
        parts.append(f"{report.with_problems} with problems ({plural(report.problems, 'problem')})")
    if report.failed:
        parts.append(f"{report.failed} failed")
    text = ", ".join(parts)
    if report.unreadable_dirs:
        text += f"; {plural(report.unreadable_dirs, 'directory')} could not be read"
    if report.resumed:
        text += f"; {report.resumed} of the segments resumed from the earlier report"
    return text + "."


def render_summary(out, report: Report, output_format: str) -> None:
    if output_format == "json":
        _write(
            out,
            dumps(
                {
                    "type": "summary",
                    "v": SCHEMA_VERSION,
                    "segments": report.segments,
                    "clean": report.clean,
                    "withProblems": report.with_problems,
                    "failed": report.failed,
                    "unreadableDirectories": report.unreadable_dirs,
                    "problems": report.problems,
                    "bytes": report.bytes,
                    "exitCode": report.exit_code,
                    **({"resumed": report.resumed} if report.resumed else {}),
                }
            )
            + "\n",
        )
    else:
        _write(out, summary_line(report) + "\n")
