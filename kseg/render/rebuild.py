"""Output of ``kseg rebuild-index``: one block per segment and a summary (text), or
one JSON object per segment and a summary object (``docs/rebuild-index.md``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from types import MappingProxyType
from typing import Callable

from kseg.jsonlines import SCHEMA_VERSION
from kseg.limits import EXIT_OK
from kseg.ops.rebuild.recovered import Recovered
from kseg.ops.rebuild.run import Verdict
from kseg.ops.rebuild.write import (
    ABSENT,
    DIFFERS,
    FAILED,
    KEPT,
    MISSING,
    OLDER_RULE,
    REFUSED,
    REPLACED,
    SAME,
    SKIPPED,
    UNCHANGED,
    WRITTEN,
    FileOutcome,
)
from kseg.render.jsonl import dumps
from kseg.render.notes import NoteGroups
from kseg.storage import files, location
from kseg.storage.partition import Partition  # the type of what ``unreadable`` is handed
from kseg.words import noun, plural


def _differs_but_valid(o: FileOutcome) -> str:
    """An existing index that differs from recovery's but is one a Kafka writer makes: the rule itself is
    explained once, among the notes after the segments (:meth:`RebuildReport.segment`)."""
    return (
        f"the existing file ({o.existing_entries} {noun(o.existing_entries or 0, 'entry')}) differs ({o.difference}) "
        "but is valid: an older broker's rule (see the notes)"
    )


def segment_line(rec: Recovered) -> str:
    log = files.display(rec.log, store=rec.segment.store)
    if rec.failure is not None:
        text = f"{log}: Kafka's recovery would fail: {rec.failure.describe()}"
        if rec.failure.truncates_segment:
            text += "; LogLoader would then truncate the whole segment to its base offset"
        return text + "; no files rebuilt"
    if rec.truncated == 0:
        return f"{log}: {plural(rec.batches, 'batch')}, {plural(rec.log_size, 'byte')}, all valid"
    if rec.stop is not None:
        where = f"recovery stops at byte {rec.stop.position}: {rec.stop.message}"
    else:
        where = f"a partial batch at byte {rec.valid_bytes} runs past the end of the file"
    return (
        f"{log}: {rec.batches} valid {noun(rec.batches, 'batch')}, {rec.valid_bytes} of {rec.log_size} bytes; {where}; "
        f"Kafka's recovery would truncate {rec.truncated} bytes (kseg leaves the log as it is)"
    )


#: A file's outcome in words, by status (``file_line``; SAME and UNCHANGED with a rule name the rule instead).
_FILE_TEXT: Mapping[str, Callable[[FileOutcome], str]] = MappingProxyType(
    {
        SAME: lambda o: "same as the existing file",
        MISSING: lambda o: "the existing file is missing",
        ABSENT: lambda o: "no file (no aborted transaction)",
        UNCHANGED: lambda o: "unchanged (the existing file is identical)",
        WRITTEN: lambda o: "written",
        SKIPPED: lambda o: "not rebuilt",
        DIFFERS: lambda o: f"differs from the existing file ({o.existing_entries} entries): {o.difference}",
        OLDER_RULE: lambda o: (
            f"{_differs_but_valid(o)}; recovery would rewrite it with the current rule; not a problem"
        ),
        REPLACED: lambda o: f"replaced the existing file ({o.existing_entries} entries; {o.difference})",
        KEPT: lambda o: f"kept: {_differs_but_valid(o)}; --force replaces it with recovery's",
        REFUSED: lambda o: f"not written: the existing file differs ({o.difference}); give --force to replace it",
        FAILED: FileOutcome.failure,
    }
)


def file_line(o: FileOutcome) -> str:
    count = "" if o.entries is None else f"{plural(o.entries, 'entry')}: "
    if o.interval is not None:  # same as recovery's at the interval the existing file was written at
        text = {SAME: "same", UNCHANGED: "unchanged"}[o.status]
        bound = f"≥ {o.interval}, the last batch's position: no .index entry due" if o.at_least else f"≤ {o.interval}"
        text = (
            f"{text} (index.interval.bytes {bound}): what recovery writes at that interval "
            f"({plural(o.entries or 0, 'entry')} at the interval given)"
        )
        return f"  {o.path}: {plural(o.existing_entries or 0, 'entry')}: {text}"
    if o.status in (SAME, UNCHANGED) and o.rule:  # the used entries are the same; a zero tail follows
        text = f"{'same as' if o.status == SAME else 'unchanged:'} {o.rule}"
    else:
        text = _FILE_TEXT[o.status](o)
    return f"  {o.path}: {count}{text}"


class RebuildReport:
    """Collects segments, writes them as they come, and the summary at the end; the exit code is
    :class:`kseg.ops.rebuild.run.Verdict`'s (render decides none)."""

    def __init__(self, out, fmt: str, quiet: bool = False) -> None:
        self.out = out
        self.json = fmt == "json"
        self.quiet = quiet  # text: only segments with something to say (a problem, a refusal), and the summary
        self.counts: Counter = Counter()
        self.segments = 0
        self.damaged = 0
        self.unreadable_dirs = 0
        self.verdict = Verdict()
        from kseg.render.table import wanted

        # a terminal gets a per-partition table before the summary line: name -> Counter of statuses
        self.per_partition: dict[str, Counter] | None = None if self.json or not wanted(out) else {}
        self.notes = NoteGroups("segment")

    def _write(self, text: str) -> None:
        self.out.write(text.encode("utf-8", "replace"))
        self.out.flush()

    def segment(self, rec: Recovered, outcomes: list[FileOutcome]) -> None:
        self.segments += 1
        self.damaged += rec.damaged
        self.counts.update(o.status for o in outcomes)
        code = self.verdict.segment(rec, outcomes)
        if self.per_partition is not None:
            row = self.per_partition.setdefault(
                files.display(files.directory_of(rec.log, store=rec.segment.store), store=rec.segment.store),
                Counter(),
            )
            row["segments"] += 1
            row["damaged"] += rec.damaged
            row.update(o.status for o in outcomes)
        if self.json:
            self._write(dumps(segment_json(rec, outcomes)) + "\n")
            return
        if self.quiet and code == EXIT_OK:
            return
        for n in rec.notes:  # printed once per kind, before the summary (a truncation's note recurs per segment)
            self.notes.add(f"{files.display(rec.log, store=rec.segment.store)}: {n}")
        for o in outcomes:  # an older writer's rule: explained once per kind, with its count, after the segments
            if o.rule and o.status in (OLDER_RULE, KEPT):
                self.notes.add(f"{o.path}: {o.rule}")
        lines = [segment_line(rec)] + [file_line(o) for o in outcomes]
        self._write("\n".join(lines) + "\n")

    def unreadable(self, part: Partition) -> None:
        """A partition directory that could not be listed (``part.error`` says why): nothing of it was
        rebuilt or checked (exit 2)."""
        self.unreadable_dirs += 1
        self.verdict.unreadable()
        if self.json:
            row = {
                "type": "unreadable",
                "v": SCHEMA_VERSION,
                "logDir": part.log_dir,
                "partition": part.name,
                "path": files.display(part.path, store=part.store),
                "error": part.error,
            }
            self._write(dumps(row) + "\n")
        else:
            self._write(f"{part.error}; nothing in it was checked or rebuilt\n")

    def _table(self, per_partition: dict[str, Counter], order: list[str]) -> None:
        from kseg.render.table import write_table

        columns, rows = _table_rows(per_partition, order)
        self.out.flush()
        write_table(self.out, "rebuild-index: files per partition", columns, rows)

    def summary(self, notes: list[str]) -> int:
        order = [
            SAME,
            OLDER_RULE,
            UNCHANGED,
            KEPT,
            WRITTEN,
            REPLACED,
            DIFFERS,
            MISSING,
            REFUSED,
            FAILED,
            SKIPPED,
            ABSENT,
        ]
        parts = [f"{self.counts[k]} {k}" for k in order if self.counts[k] and k != ABSENT]
        if self.json:
            self._write(
                dumps(
                    {
                        "type": "summary",
                        "v": SCHEMA_VERSION,
                        "segments": self.segments,
                        "files": dict(self.counts),
                        "damagedLogs": self.damaged,
                        "unreadableDirectories": self.unreadable_dirs,
                        "notes": notes,
                        "exitCode": self.verdict.code,
                    }
                )
                + "\n"
            )
        else:
            if not self.quiet:
                self.notes.write(self.out)
            if self.per_partition:
                self._table(self.per_partition, order)
            damaged = ""
            if self.counts[ABSENT]:  # not expected to exist: never counted among the files as absent
                damaged = f"; {plural(self.counts[ABSENT], '.txnindex')} not needed (no aborted transaction)"
            if self.damaged:
                damaged += f"; {plural(self.damaged, 'log')} with invalid data"
            if self.unreadable_dirs:
                damaged += f"; {plural(self.unreadable_dirs, 'directory')} could not be read"
            self._write(f"{plural(self.segments, 'segment')}; files: {', '.join(parts) or 'none'}{damaged}\n")
        return self.verdict.code


def _table_rows(per_partition: dict[str, Counter], order: list[str]) -> tuple[list[str], list[list]]:
    shown = [k for k in order if any(c[k] for c in per_partition.values())]
    names = Counter(location.basename(path) for path in per_partition)  # a name twice (two log dirs): the path
    rows = [
        [
            location.basename(path) if names[location.basename(path)] == 1 else path,
            c["segments"],
            *(c[k] for k in shown),
            c["damaged"],
        ]
        for path, c in per_partition.items()
    ]
    return ["partition", "segments", *shown, "logs with invalid data"], rows


def segment_json(rec: Recovered, outcomes: list[FileOutcome]) -> dict:
    return {
        "type": "segment",
        "v": SCHEMA_VERSION,
        "logDir": rec.log_dir,
        "partition": rec.partition,
        "segment": rec.segment.name,
        "path": files.display(rec.log, store=rec.segment.store),
        "baseOffset": rec.segment.base_offset,
        "logSize": rec.log_size,
        "validBytes": rec.valid_bytes,
        "batches": rec.batches,
        "truncateBytes": rec.truncated,
        "stop": None if rec.stop is None else {"position": rec.stop.position, "message": rec.stop.message},
        "failure": None
        if rec.failure is None
        else {
            "position": rec.failure.position,
            "message": rec.failure.message,
            "truncatesSegment": rec.failure.truncates_segment,
        },
        "files": [
            {
                "file": o.path,
                "kind": o.kind.lstrip("."),
                "entries": o.entries,
                "status": o.status,
                "existingEntries": o.existing_entries,
                "difference": o.difference,
                "rule": o.rule,
                "indexIntervalBytesAtMost": None if o.at_least else o.interval,
                "indexIntervalBytesAtLeast": o.interval if o.at_least else None,
                "error": None if o.error is None else o.error.describe(),
            }
            for o in outcomes
        ],
        "notes": rec.notes,
    }
