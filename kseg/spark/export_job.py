"""``kseg export --spark``: every split exported by an executor, straight to the output.

The driver lists (:func:`driver_plan`: names and listed sizes, no file opened,
the listing held compactly: :mod:`kseg.storage.listing`) and deals the
listing's units, in order, to tasks of about equal bytes (:func:`deal`): a
task is given the partitions its units are in (those it shares with another
task cut to its segments) and which of their units are its own, never a unit
object or a path per segment.  Each task makes its
:class:`~kseg.ops.export.export.SegmentUnit` s, reads the indexes and cuts
its units into splits
(:func:`kseg.ops.export.export.unit_splits`) and writes their rows, one split
after another, into Parquet files of about ``--target-file-size`` each
(:func:`kseg.render.export.write_parquet_files`: small segments share a file,
a large one spans several) with pyarrow — to a local or shared path, or to any
URI pyarrow reaches (``s3://`` with the standard AWS variables, ``gs://``,
``hdfs://``), so no Hadoop connector is needed — and sends back only its
counts, its files and the corrupt batches it met.  The output is a directory::

    OUTPUT/part-<log dir hash>-<partition>-<segment>-<band>-<n>.parquet   (the task's first unit; n: its files)
    OUTPUT/_SUCCESS            (written last, by the driver, when every task succeeded)

The files hold the rows of :mod:`kseg.render.export` (the data source's).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from itertools import chain

from kseg.ops.export.export import DEFAULT_TARGET_FILE_BYTES, Corruption, SegmentUnit
from kseg.render.export import ExportSummary
from kseg.spark.bins import bin_count, bytes_per_task
from kseg.spark.deal import Deal, deal
from kseg.storage.listing import Listed


def part_name(output: str, unit: SegmentUnit, n: int) -> str:
    """The ``n``-th file of the task whose first unit is ``unit``: named from the plan, so the same
    listing and options name the same files."""
    from kseg.storage import location

    digest = hashlib.sha1(unit.log_dir.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return location.join(output, f"part-{digest}-{unit.partition}-{unit.base_offset:020d}-{unit.band}-{n:04d}.parquet")


def is_part_file(name: str) -> bool:
    """A file a ``--spark`` export writes (this layout's or the one-file-per-split layout's before it)."""
    return name.startswith("part-") and name.endswith(".parquet")


def clear_previous(output: str) -> None:
    """``--force``: the part files and ``_SUCCESS`` of an earlier export to ``output`` removed (at its top,
    and one directory down, where exports before coalescing wrote them); nothing else is touched."""
    import os

    from kseg.errors import InputError
    from kseg.storage import files, location

    if location.is_remote(output):
        root = output.rstrip("/")
        for entry in location.list_tree(output):
            rel = entry.path[len(root) + 1 :].split("/")
            if (len(rel) <= 2 and is_part_file(rel[-1])) or rel == ["_SUCCESS"]:
                location.delete(entry.path)
        return
    local = location.local_path(output)
    if files.isfile(local):
        raise InputError("exists, and is a file: with --spark the output is a directory of part files", path=output)
    try:
        for name in os.listdir(local) if os.path.isdir(local) else ():
            path = os.path.join(local, name)
            if name == "_SUCCESS" or (is_part_file(name) and os.path.isfile(path)):
                os.unlink(path)
            elif os.path.isdir(path):
                for inner in os.listdir(path):
                    if is_part_file(inner):
                        os.unlink(os.path.join(path, inner))
    except OSError as exc:
        raise InputError(f"cannot replace the output: {exc.strerror or exc}", path=output) from None


def driver_plan(paths: list[str], ranges, split_bytes: int, notes: list[str] | None = None) -> list[Listed]:
    """The driver's listing of ``paths`` (side by side), held compactly, for :func:`deal`; an input that
    could not be listed raises (nothing is exported from a partial list)."""
    from kseg.errors import InputError
    from kseg.storage.listing import listed

    partitions = listed(paths, [] if notes is None else notes)  # compact: a partition's segments packed
    for part in partitions:  # an input not read is never "N records written": nothing is
        if part.error is not None:
            raise InputError(f"{part.error}; nothing was written")
    return partitions


def export_bin(
    task: Deal,
    output: str,
    ranges,
    split_bytes: int,
    limit: int,
    on_corruption: str,
    key_decoder,
    value_decoder,
    target_bytes: int = DEFAULT_TARGET_FILE_BYTES,
):
    """Runs on an executor: make the task's units from its share of the listing, cut each into its splits
    (index reads here, not on the driver) and write their rows into files of about ``target_bytes``;
    yield one ``(records, corruptions, files, splits)``."""
    from kseg.decoders.simple import resolve
    from kseg.ops.export.export import unit_splits
    from kseg.render.export import write_parquet_files

    planned = task.units(ranges, split_bytes)
    first = next(planned, None)
    if first is None:
        return
    splits = (s for unit in chain([first], planned) for s in unit_splits(unit, ranges, split_bytes, limit))
    summary, written = write_parquet_files(
        splits,
        lambda n: part_name(output, first, n),
        target_bytes,
        ranges=ranges,
        limit=limit,
        on_corruption=on_corruption,
        key_decoder=None if key_decoder is None else resolve(key_decoder),
        value_decoder=None if value_decoder is None else resolve(value_decoder),
    )
    yield summary.records, [tuple(c) for c in summary.corrupt], written, summary.splits


def run_export(
    paths: list[str],
    output: str,
    *,
    ranges,
    key_decoder,
    value_decoder,
    on_corruption: str,
    split_bytes: int,
    limit: int,
    replace: bool,
    master,
    target_bytes: int = DEFAULT_TARGET_FILE_BYTES,
    spark_conf,
    err,
    verbose: bool = False,
    listing_status: Callable[[list[str]], AbstractContextManager[object]] | None = None,
) -> ExportSummary | None:
    """Plan on the driver, export on the executors; the summary, or None when ``fail`` stopped it.
    ``listing_status(paths)``: a context the driver's listing runs in (the CLI's progress line on stderr).

    Local paths are made absolute here, on the driver (:mod:`kseg.spark.paths`); the files the
    executors say they wrote to a local output are looked for before anything is called written."""
    import os

    from kseg.errors import InputError
    from kseg.spark.session import require, started
    from kseg.storage import files, location
    from kseg.storage.context import Carried

    require()
    from kseg.spark.paths import absolute, absolute_all, local_roots, missing_line, not_here

    paths, shown_output, output = absolute_all(paths), output, absolute(output)  # executors run elsewhere
    if files.exists(output) and not replace:
        raise InputError("exists; not replaced (give --force to replace it)", path=output)
    if replace:
        clear_previous(output)  # an earlier run's files, whatever their grouping, never read as this run's
    notes: list[str] = []
    with (listing_status or (lambda _: nullcontext()))(paths):
        listing = driver_plan(paths, ranges, split_bytes, notes)
    for note in notes:
        err.write(f"kseg: note: {note}\n".encode("utf-8", "replace"))
    with started("export", master, spark_conf, verbose=verbose) as session:
        spark = session.spark
        if not location.is_remote(output):
            os.makedirs(location.local_path(output), exist_ok=True)  # for the executors to find (probe)
        session.probe(local_roots(sorted({p.log_dir for p in listing}) + [output]))
        sc = spark.sparkContext
        try:
            per_task = bytes_per_task(sc)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        bins = deal(listing, ranges, split_bytes, lambda total, n: bin_count(total, n, sc.defaultParallelism, per_task))
        summary = ExportSummary()
        if bins:
            rdd = spark.sparkContext.parallelize(bins, len(bins))
            args = (output, ranges, split_bytes, limit, on_corruption, key_decoder, value_decoder, target_bytes)
            try:
                results = rdd.flatMap(Carried(lambda b: export_bin(b, *args))).collect()  # with --rsm-key
            except Exception as exc:  # a task's CorruptionStop comes back inside Spark's error
                if "CorruptionStop" in str(exc):
                    err.write(
                        b"kseg: export stopped (--on-corruption fail): a task met a corrupt batch; "
                        b"the output is incomplete and has no _SUCCESS marker\n"
                    )
                    return None
                raise session.failed(exc) from None
            for records, corrupt, _, splits in results:
                summary.records += records
                summary.corrupt.extend(Corruption(*c) for c in corrupt)
                summary.splits += splits  # the splits the tasks found and wrote
            written = [target for _, _, targets, _ in results for target in targets]
            missing = not_here(written)
            if missing:  # never "N records written to OUTPUT" for files that are not there
                raise InputError(missing_line(missing, len(written), shown_output, "Parquet files"))
        write_success_marker(output)
        return summary


def write_success_marker(output: str) -> None:
    """``_SUCCESS``, as Hadoop's committers write it: the directory is complete."""
    import os

    from kseg.storage import files, location

    if not location.is_remote(output):
        os.makedirs(location.local_path(output), exist_ok=True)
    files.write_stream(location.join(output, "_SUCCESS"), lambda f: None, replace=True)
