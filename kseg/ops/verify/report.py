"""Verification report rows: one schema shared by the local command and the Spark job.

Rows are flat dicts (JSON Lines, or Parquet from Spark).  Every row has
``type`` (``segment`` or ``problem``), ``v`` (the schema version, ``docs/json-output.md``),
``logDir`` (the log directory holding the partition, absolute: replicas under two brokers' log
roots are two logs), ``partition`` and ``segment``.

segment rows: ``path``, ``bytes``, ``batches``, ``lastOffset`` (the last offset read: what the
next segment's base offset must pass; null when no batch was read), ``identity`` (the ``.log``'s version
when it was read: size, mtime_ns and ctime_ns, or a store's ETag; what ``--resume`` trusts), ``problems`` (count),
``status`` (``clean``, ``problems`` or ``failed``), ``error`` (why a failed
segment could not be verified, else null), ``notes`` (list of strings).  A
partition directory that could not be listed is one ``failed`` segment row
with ``segment`` null and ``path`` the directory.

problem rows: ``file``, ``kind``, ``message``, ``position`` (byte, or null),
``entry`` (index entry, or null), ``expected``, ``found`` (strings or null),
``consequences`` (how many index entries the row stands for when they are all
wrong for one earlier cause -- a truncation point, an empty log -- else null).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kseg.errors import InputError
from kseg.jsonlines import SCHEMA_VERSION, dumps
from kseg.ops.verify.result import SegmentResult
from kseg.storage.atomic import AtomicStream
from kseg.storage.location import local_path

if TYPE_CHECKING:
    from kseg.storage.outputs import Destination


def segment_row(res: SegmentResult) -> dict:
    return {
        "type": "segment",
        "v": SCHEMA_VERSION,
        "logDir": res.log_dir,
        "partition": res.partition,
        "segment": res.segment or None,
        "path": res.path,
        "bytes": res.bytes,
        "batches": res.batches,
        "lastOffset": res.last_offset,
        "identity": res.identity,
        "problems": res.problem_count,
        "status": res.status,
        "error": res.failed,
        "notes": [*res.notes, *res.omitted_notes()],
    }


def problem_rows(res: SegmentResult) -> list[dict]:
    # JSON rows: one field a line in docs/json-output.md's order; alike txn's problem rows in shape only
    return [
        {
            "type": "problem",
            "v": SCHEMA_VERSION,
            "logDir": res.log_dir,
            "partition": res.partition,
            "segment": res.segment,
            "file": p.file,
            "kind": p.kind,
            "message": p.message,
            "position": p.position,
            "entry": p.entry,
            "expected": p.expected,
            "found": p.found,
            "consequences": p.consequences,
        }
        for p in res.problems
    ]


def result_rows(res: SegmentResult) -> list[dict]:
    return [segment_row(res), *problem_rows(res)]


def rows(results: list[SegmentResult]) -> list[dict]:
    out = []
    for res in results:
        out.extend(result_rows(res))
    return out


def check_target(path: str, *, directory_ok: bool = False, force: bool = True) -> None:
    """Refuse, before any work, a report path that cannot be written.

    The report is a new file renamed into place, so the path must be in an
    existing directory and must not be a directory or a special file
    (``/dev/null``, ``/proc/version``); an existing file is replaced only
    with ``force``.  ``directory_ok``: Spark's Parquet output is a directory."""
    path = local_path(path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError("cannot write the report: no such directory", path=parent)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(f"cannot write the report: {exc.strerror or exc}", path=path) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            if not directory_ok:
                raise InputError("cannot write the report: is a directory", path=path)
        elif not stat.S_ISREG(st.st_mode):
            raise InputError("cannot write the report: not a regular file", path=path)
        elif directory_ok:
            raise InputError(
                "cannot write the report: a file exists there (with --spark a report is a directory of part files)",
                path=path,
            )
        elif not force:
            raise InputError(
                "cannot write the report: the file exists; not replaced (give --force to replace it)", path=path
            )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError("cannot write the report: permission denied", path=parent)


class JsonlReport:
    """The rows as JSON Lines, written as results come (constant memory) to a temporary file that
    :meth:`commit` renames into place; opening it checks the path, before any work."""

    def __init__(self, output: Destination, force: bool = True) -> None:
        path = output.path
        check_target(path, force=force)
        self.output = output  # the report as given, and its store (chosen once, from the option)
        self.path = local_path(path)
        try:
            self.stream = AtomicStream(self.path)
        except InputError as exc:
            raise InputError(f"cannot write the report: {exc.message}", path=path) from None

    def add(self, res: SegmentResult) -> None:
        self.add_rows(result_rows(res))

    def add_rows(self, rows: Iterable[dict]) -> None:
        """Rows as they are (those of an earlier report carried by ``--resume``)."""
        self.stream.write("".join(dumps(row) + "\n" for row in rows).encode("utf-8"))

    def commit(self) -> None:
        self.stream.commit()

    def discard(self) -> None:
        self.stream.discard()


def sort_key(row: dict) -> tuple:
    """A stable order for comparing reports from different runners."""
    return (
        row.get("logDir") or "",
        row["partition"],
        row["segment"] or "",
        row["type"] != "segment",
        json.dumps(row, sort_keys=True),
    )


# -- a report as a directory of part files (written by many writers at once: Spark's executors) -----------
# The columns of a Parquet report: every row type in one schema, nulls where a field does not apply; the
# third item: the row types that have the field (segment_row's and problem_rows' keys).
COLUMNS = (
    ("type", "string", "segment problem"),
    ("v", "int64", "segment problem"),
    ("logDir", "string", "segment problem"),
    ("partition", "string", "segment problem"),
    ("segment", "string", "segment problem"),
    ("path", "string", "segment"),
    ("bytes", "int64", "segment"),
    ("batches", "int64", "segment"),
    ("lastOffset", "int64", "segment"),
    ("identity", "string", "segment"),
    ("problems", "int64", "segment"),
    ("status", "string", "segment"),
    ("error", "string", "segment"),
    ("notes", "list<string>", "segment"),
    ("file", "string", "problem"),
    ("kind", "string", "problem"),
    ("message", "string", "problem"),
    ("position", "int64", "problem"),
    ("entry", "int64", "problem"),
    ("expected", "string", "problem"),
    ("found", "string", "problem"),
    ("consequences", "int64", "problem"),
)


def own_fields(row: dict) -> dict:
    """A row read from a Parquet report with only its type's fields (as JSON Lines has it)."""
    kind = row.get("type") or ""
    return {name: row[name] for name, _, kinds in COLUMNS if name in row and kind in kinds.split()}


PART_PREFIX, SUCCESS = "part-", "_SUCCESS"


def report_format(path: str) -> str:
    """``parquet`` for a path ending ``.parquet``, else ``jsonl``."""
    return "parquet" if path.rstrip("/").endswith(".parquet") else "jsonl"


def part_path(directory: str, name: str, fmt: str) -> str:
    from kseg.storage import location

    return location.join(directory, f"{PART_PREFIX}{name}.{'parquet' if fmt == 'parquet' else 'jsonl'}")


def write_part(directory: Destination, name: str, results: list[SegmentResult], fmt: str) -> str:
    """One part file of a report directory holding the rows of ``results`` (in their order)."""
    return write_rows_part(directory, name, rows(results), fmt)


#: Rows per Parquet row group (and per write) when a part is written from a stream of rows.
ROWS_PER_BATCH = 10_000


def batched(items: Iterable[dict], n: int) -> Iterable[list[dict]]:
    """``items`` in lists of ``n`` (the last shorter): itertools.batched, which Python 3.10 lacks."""
    batch: list[dict] = []
    for item in items:
        batch.append(item)
        if len(batch) == n:
            yield batch
            batch = []
    if batch:
        yield batch


def write_rows_part(directory: Destination, name: str, all_rows: Iterable[dict], fmt: str) -> str:
    """One part file of a report directory holding ``all_rows`` (in their order), written in batches on the
    directory's store."""
    from kseg.storage import files

    path, store = part_path(directory.path, name, fmt), directory.store
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        types = {"string": pa.string(), "int64": pa.int64(), "list<string>": pa.list_(pa.string())}
        schema = pa.schema([(n, types[t]) for n, t, _ in COLUMNS])

        def parquet(f) -> None:
            with pq.ParquetWriter(f, schema) as writer:
                for batch in batched(all_rows, ROWS_PER_BATCH):
                    rows_ = [{n: row.get(n) for n, _, _ in COLUMNS} for row in batch]
                    writer.write_table(pa.Table.from_pylist(rows_, schema=schema))

        files.write_stream(path, parquet, replace=True, store=store)
    else:

        def jsonl(f) -> None:
            for batch in batched(all_rows, ROWS_PER_BATCH):
                f.write("".join(dumps(row) + "\n" for row in batch).encode("utf-8"))

        files.write_stream(path, jsonl, replace=True, store=store)
    return path


def prepare_directory(report: Destination) -> None:
    """Make a report directory ready for a new run: created if missing; the part files and
    ``_SUCCESS`` of an earlier run removed (nothing else is touched).  A regular file in its
    place is an error."""
    from kseg.storage import files, location

    directory, store = report
    if store.remote:
        for entry in location.list_tree(directory):
            name = location.basename(entry.path)
            if location.dirname(entry.path) == directory.rstrip("/") and (
                name.startswith(PART_PREFIX) or name == SUCCESS
            ):
                location.delete(entry.path)
        return
    local = location.local_path(directory)
    if files.isfile(local, store=store):
        raise InputError(
            "cannot write the report: a file exists there (with --spark a report is a directory of part files)",
            path=directory,
        )
    try:
        os.makedirs(local, exist_ok=True)
        for name in os.listdir(local):
            if name.startswith(PART_PREFIX) or name == SUCCESS:
                os.unlink(os.path.join(local, name))
    except OSError as exc:
        raise InputError(f"cannot write the report: {exc.strerror or exc}", path=directory) from None


def open_report(path: str | None, inputs: list[str], *, spark: bool, force: bool) -> JsonlReport | None:
    """verify-index's ``--report`` checked before any work (a run must not end on a path it cannot write):
    never on an input; JSON Lines on a local path for the local command (opened here, replaced only with
    ``force``), a directory of part files (local or a URI) written by the executors with ``spark`` (checked
    here, None returned).  :class:`InputError` says why not."""
    if not path:
        return None
    from kseg.storage.outputs import destination, refuse_on_inputs

    refuse_on_inputs(path, inputs, "--report")
    if path.endswith(".parquet") and not spark:
        raise InputError(
            "a .parquet report needs --spark; the local command writes JSON Lines (give a .jsonl path)", path=path
        )
    output = destination(path)  # its store chosen once, here
    remote = output.store.remote
    if spark:
        if not remote:
            check_target(path, directory_ok=True)
        return None
    if remote:
        raise InputError(
            "a report on a store needs --spark (its executors write it); the local command writes a local file",
            path=path,
        )
    return JsonlReport(output, force=force)
