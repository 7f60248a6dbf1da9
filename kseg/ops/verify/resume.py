"""``verify-index --resume REPORT``: the segments an earlier report already verified, skipped.

A report's segment rows (:mod:`kseg.ops.verify.report`: JSON Lines, one file or a directory of part
files; or Parquet part files) name each segment by ``logDir``, ``partition`` and ``segment`` and give
the ``bytes`` read.  A segment whose row is ``clean`` or ``problems`` and whose ``.log`` is still that
size is *resumed*: not read again, its rows (the segment row and its problem rows) carried into the new
report and counted in the summary.  A ``failed`` row, a segment that changed size, or one read only up to
a fault (its ``bytes`` short of the file) is verified again.  Overlap between a resumed segment and a
new one is not checked (the report holds no last offsets).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace

from kseg.errors import InputError
from kseg.ops.verify.report import PART_PREFIX
from kseg.ops.verify.run import Report
from kseg.storage.partition import Partition

#: A verified segment as a report names it: (logDir, partition, segment, bytes).
Key = tuple[str, str, str, int]
#: Statuses of segments that were verified to a verdict (``failed`` ones were not).
VERDICTS = ("clean", "problems")


def report_files(path: str) -> list[str]:
    """The files of a local report: the file itself, or a directory's ``part-*.jsonl``/``.parquet``."""
    try:
        if not os.path.isdir(path):
            with open(path, "rb"):
                return [path]
        names = sorted(os.listdir(path))
    except OSError as exc:
        raise InputError(f"cannot read the report to resume: {exc.strerror or exc}", path=path) from None
    return [os.path.join(path, n) for n in names if n.startswith(PART_PREFIX) and n.endswith((".jsonl", ".parquet"))]


def read_rows(path: str) -> Iterator[dict]:
    """Every row of a local report, file by file (a Parquet part by record batches: bounded memory)."""
    for name in report_files(path):
        if name.endswith(".parquet"):
            import pyarrow.parquet as pq

            try:
                for batch in pq.ParquetFile(name).iter_batches(batch_size=10_000):
                    yield from batch.to_pylist()
            except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
                raise InputError(f"cannot read the report to resume: {exc}", path=name) from None
            continue
        yield from _jsonl_rows(name)


def _jsonl_rows(name: str) -> Iterator[dict]:
    position = 0
    try:
        with open(name, "rb") as f:
            for line in f:
                try:
                    row = json.loads(line)
                except ValueError:
                    row = None
                if not isinstance(row, dict) or "type" not in row:
                    raise InputError(
                        "cannot resume from it: expected a verify-index report row (a JSON object), found "
                        f"{line[:40]!r}",
                        path=name,
                        position=position,
                    )
                position += len(line)
                yield row
    except OSError as exc:
        raise InputError(f"cannot read the report to resume: {exc.strerror or exc}", path=name) from None


def verified(path: str) -> set[Key]:
    """The segments the report at ``path`` gives a verdict for (clean or with problems)."""
    return {
        (row.get("logDir") or "", row["partition"], row["segment"], int(row.get("bytes") or 0))
        for row in read_rows(path)
        if row.get("type") == "segment" and row.get("segment") and row.get("status") in VERDICTS
    }


def skip_verified(partitions: list[Partition], keys: set[Key]) -> tuple[list[Partition], set[tuple[str, str, str]]]:
    """``partitions`` without the segments in ``keys`` (same log dir, partition, name and ``.log`` size),
    and those skipped as ``(logDir, partition, segment)``."""
    skipped: set[tuple[str, str, str]] = set()
    out = []
    for p in partitions:
        if p.error is not None or not keys:
            out.append(p)
            continue
        keep = []
        for seg in p.segments:
            if (p.log_dir, p.name, seg.name, seg.log_size()) in keys:
                skipped.add((p.log_dir, p.name, seg.name))
            else:
                keep.append(seg)
        out.append(replace(p, segments=keep) if len(keep) != len(p.segments) else p)
    return out, skipped


def carried_rows(path: str, skipped: set[tuple[str, str, str]], prior: Report) -> Iterator[dict]:
    """The rows of the skipped segments in the report at ``path`` (read again: not held), counted in
    ``prior`` as they pass (``prior.resumed`` the segments)."""
    for row in read_rows(path):
        if (row.get("logDir") or "", row.get("partition"), row.get("segment")) not in skipped:
            continue
        if row.get("type") == "segment":
            prior.resumed += 1
            prior.segments += 1
            prior.bytes += int(row.get("bytes") or 0)
            prior.problems += int(row.get("problems") or 0)
            if row.get("status") == "problems":
                prior.with_problems += 1
            else:
                prior.clean += 1
        yield row
