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

    OUTPUT/_temporary/<run>/part-<log dir hash>-<partition>-<segment>-<band>-<n>.parquet   (the tasks write)
    OUTPUT/part-....parquet, OUTPUT/_SUCCESS   (the driver's commit when every task succeeded: moved, _SUCCESS last)

(:mod:`kseg.spark.staging`: a failed or killed run leaves nothing a reader takes as data).

The files hold the rows of :mod:`kseg.render.export` (the data source's).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from itertools import chain, groupby
from typing import TYPE_CHECKING, Any, NamedTuple

from kseg.ops.export.export import DEFAULT_TARGET_FILE_BYTES, Corruption, SegmentUnit, select_topics
from kseg.render.export import ExportSummary
from kseg.spark.bins import bin_count, bytes_per_task
from kseg.spark.deal import Deal, deal
from kseg.storage.listing import Listed

if TYPE_CHECKING:
    from kseg.storage.outputs import Destination

#: The columns a hive layout (``--partition-by topic,partition``) keeps in its directory names.
HIVE_COLUMNS = ("topic", "partition")


def hive_part_name(output: Destination, split, n: int) -> str:
    """The ``n``-th file of a task's rows of one topic-partition from ``split`` on, in the hive layout:
    ``topic=T/partition=P/part-<log dir hash>-<segment>-<byte>-<n>.parquet`` (a partition number absent
    from the directory name is Hive's default partition); a local directory is made for it."""
    from kseg.ops.export.export import topic_partition
    from kseg.storage import location

    topic, number = topic_partition(split.partition)
    where = location.join(output.path, f"topic={topic}")
    where = location.join(where, f"partition={'__HIVE_DEFAULT_PARTITION__' if number is None else number}")
    digest = hashlib.sha1(split.log_dir.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    if not output.store.remote:  # a store has no directories to make
        import os

        os.makedirs(location.local_path(where), exist_ok=True)
    return location.join(where, f"part-{digest}-{split.segment}-{split.start}-{n:04d}.parquet")


def part_name(output: str, unit: SegmentUnit, n: int) -> str:
    """The ``n``-th file of the task whose first unit is ``unit``: named from the plan, so the same
    listing and options name the same files."""
    from kseg.storage import location

    digest = hashlib.sha1(unit.log_dir.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return location.join(output, f"part-{digest}-{unit.partition}-{unit.base_offset:020d}-{unit.band}-{n:04d}.parquet")


def driver_plan(paths: list[str], ranges, split_bytes: int, notes: list[str] | None = None) -> list[Listed]:
    """The driver's listing of ``paths`` (side by side), held compactly, for :func:`deal`; an input that
    could not be listed raises (nothing is exported from a partial list)."""
    from kseg.errors import InputError
    from kseg.storage.stores.find import discover_as

    partitions = discover_as(paths, [] if notes is None else notes, Listed)  # compact: a partition's segments packed
    for part in partitions:  # an input not read is never "N records written": nothing is
        if part.error is not None:
            raise InputError(f"{part.error}; nothing was written")
    return partitions


def export_bin(
    task: Deal,
    output: Destination,
    ranges,
    split_bytes: int,
    limit: int,
    on_corruption: str,
    key_decoder,
    value_decoder,
    target_bytes: int = DEFAULT_TARGET_FILE_BYTES,
    committed: bool = False,
    since: dict[str, int] | None = None,
    hive: bool = False,
    registry: dict | None = None,
):
    """Runs on an executor: make the task's units from its share of the listing, cut each into its splits
    (index reads here, not on the driver) and write their rows into files of about ``target_bytes``
    (with ``hive``, a topic-partition's rows under ``topic=T/partition=P/``, without those two columns);
    yield one ``(records, corruptions, files, splits, next offsets, registry decoder's reasons)``."""
    from functools import partial

    from kseg.decoders.simple import resolve
    from kseg.ops.export.export import unit_splits
    from kseg.render.export import ExportSummary, write_parquet_files

    planned = task.units(ranges, split_bytes, since)
    first = next(planned, None)
    if first is None:
        return
    splits = (s for unit in chain([first], planned) for s in unit_splits(unit, ranges, split_bytes, limit))
    key_fn = None if key_decoder is None or key_decoder == "registry" else resolve(key_decoder)
    value_fn = None if value_decoder is None or value_decoder == "registry" else resolve(value_decoder)
    typed: tuple = ()
    if registry is not None:  # the driver's replayed store: decoders and typed columns made here, once a task
        from kseg.decoders.registry import Registry, RegistryDecoder
        from kseg.decoders.registry.typed_topics import typed_columns

        framing, validate = registry["framing"], registry["validate"]
        shared = Registry(registry["store"], registry["context"], validate, framing)
        made = {role: RegistryDecoder(shared, role) for role in registry["roles"]}
        key_fn, value_fn = made.get("key", key_fn), made.get("value", value_fn)
        typed = typed_columns(
            registry["store"],
            registry["roles"],
            registry["topics"],
            registry["context"],
            framing,
            validate,
            registry["messages"],
        )
    write = partial(
        write_parquet_files,
        ranges=ranges,
        limit=limit,
        on_corruption=on_corruption,
        key_decoder=key_fn,
        value_decoder=value_fn,
        committed=committed,
        typed=typed,
        store=output.store,
    )
    summary, written = ExportSummary(), list[str]()
    if not hive:
        _, written = write(splits, lambda n: part_name(output.path, first, n), target_bytes, summary=summary)
    for _, group in groupby(splits if hive else (), key=lambda s: (s.log_dir, s.partition)):
        run = iter(group)
        head = next(run)
        _, files = write(
            chain([head], run), partial(hive_part_name, output, head), target_bytes, drop=HIVE_COLUMNS, summary=summary
        )
        written.extend(files)
    reasons = shared.reasons() if registry is not None else ([], [])
    yield summary.records, [tuple(c) for c in summary.corrupt], written, summary.splits, summary.next_offsets, reasons


def choose_on(sc: Any, sets: list) -> list[tuple[int, str]]:
    """:func:`kseg.ops.diff.choose.choose_set` of each replica set, one task a set (the sets' order)."""
    from kseg.ops.diff.choose import choose_set
    from kseg.storage.context import Carried

    if not sets:
        return []
    return sc.parallelize(sets, len(sets)).map(Carried(choose_set)).collect()


class ExportJob(NamedTuple):
    """What ``export --spark`` was asked (:func:`run_export`'s arguments but the paths and the output)."""

    ranges: object
    key_decoder: str | None
    value_decoder: str | None
    on_corruption: str
    split_bytes: int
    limit: int
    replace: bool
    master: str | None
    target_bytes: int
    committed: bool
    spark_conf: Any
    err: Any
    verbose: bool
    listing_status: Callable[[list[str]], AbstractContextManager[object]] | None
    topics: tuple[str, ...] = ()
    since: dict[str, int] | None = None
    hive: bool = False
    one_replica: bool = False
    registry: dict | None = None  # the registry decoder: the replayed store, context, roles, topic


def run_export(
    paths: list[str],
    output: Destination,
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
    committed: bool = False,
    spark_conf,
    err,
    verbose: bool = False,
    listing_status: Callable[[list[str]], AbstractContextManager[object]] | None = None,
    topics: tuple[str, ...] = (),
    since: dict[str, int] | None = None,
    hive: bool = False,
    one_replica: bool = False,
    registry: dict | None = None,
) -> ExportSummary | None:
    """Plan on the driver, export on the executors; the summary, or None when ``fail`` stopped it.
    ``listing_status(paths)``: a context the driver's listing runs in (the CLI's progress line on stderr).

    Local paths are made absolute here, on the driver (:mod:`kseg.spark.paths`).  The output is checked
    before any work and committed once (:mod:`kseg.spark.staging`): the tasks write under a staging
    prefix, the driver moves their files into place and writes ``_SUCCESS`` last; a failure removes what
    was staged."""
    from kseg.spark import staging
    from kseg.spark.session import require

    require()
    from kseg.spark.paths import absolute_all, absolute_destination

    job = ExportJob(
        ranges, key_decoder, value_decoder, on_corruption, split_bytes, limit, replace, master, target_bytes,
        committed, spark_conf, err, verbose, listing_status, tuple(topics), since, hive, one_replica, registry,
    )  # fmt: skip
    paths, shown, to = absolute_all(paths), output.path, absolute_destination(output)  # executors run elsewhere
    staged = staging.staging_dir(to)  # (on the output's store)
    made = staging.prepare(to, staged.path, replace)  # before any work: refused, unwritable, no bucket
    try:
        summary = _export(job, paths, to, staged, shown)
    except BaseException:
        staging.discard(to, staged.path, made)  # nothing a reader takes as data; an earlier export left whole
        raise
    if summary is None:
        staging.discard(to, staged.path, made)
    return summary


def _export(
    job: ExportJob, paths: list[str], output: Destination, staged: Destination, shown: str
) -> ExportSummary | None:
    """:func:`run_export` once the output is prepared: list, run the tasks (writing under ``staged``),
    check their files are there, commit."""
    import os

    from kseg.errors import InputError
    from kseg.spark import staging
    from kseg.spark.paths import local_roots, missing_line, not_here
    from kseg.spark.session import started
    from kseg.storage import location
    from kseg.storage.context import Carried

    err = job.err
    notes: list[str] = []
    with (job.listing_status or (lambda _: nullcontext()))(paths):
        listing = select_topics(driver_plan(paths, job.ranges, job.split_bytes, notes), job.topics)
    for note in notes:
        err.write(f"kseg: note: {note}\n".encode("utf-8", "replace"))
    with started("export", job.master, job.spark_conf, verbose=job.verbose) as session:
        spark = session.spark
        if not output.store.remote:
            os.makedirs(location.local_path(staged.path), exist_ok=True)  # for the executors to find (probe)
        session.probe(local_roots(sorted({p.log_dir for p in listing}) + [staged.path]))
        sc = spark.sparkContext
        kept: list[str] = []
        if job.one_replica:  # each replica set compared by a task, as diff --spark does
            from kseg.ops.diff.choose import one_replica

            try:
                listing, kept = one_replica(listing, lambda sets: choose_on(sc, sets))
            except Exception as exc:
                raise session.failed(exc) from None
        try:
            per_task = bytes_per_task(sc)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        split_bytes = job.split_bytes
        bins = deal(listing, job.ranges, split_bytes, lambda t, n: bin_count(t, n, sc.defaultParallelism, per_task))
        summary = ExportSummary()
        written: list[str] = []
        if bins:
            rdd = spark.sparkContext.parallelize(bins, len(bins))
            args: tuple[Any, ...] = (staged, job.ranges, split_bytes, job.limit, job.on_corruption)
            args += (job.key_decoder, job.value_decoder, job.target_bytes, job.committed, job.since, job.hive)
            args += (job.registry,)
            try:
                results = rdd.flatMap(Carried(lambda b: export_bin(b, *args))).collect()  # with --rsm-key
            except Exception as exc:  # a task's CorruptionStop comes back inside Spark's error
                if "CorruptionStop" in str(exc):
                    err.write(
                        b"kseg: export stopped (--on-corruption fail): a task met a corrupt batch; "
                        b"nothing was written\n"
                    )
                    return None
                raise session.failed(exc) from None
            for records, corrupt, _, splits, reached, reasons in results:
                summary.reasons[0].extend(reasons[0])
                summary.reasons[1].extend(reasons[1])
                summary.reached(reached)
                summary.records += records
                summary.corrupt.extend(Corruption(*c) for c in corrupt)
                summary.splits += splits  # the splits the tasks found and wrote
            written = [target for _, _, targets, _, _, _ in results for target in targets]
            missing = not_here(written, output.store)
            if missing:  # never "N records written to OUTPUT" for files that are not there
                raise InputError(missing_line(missing, len(written), shown, "Parquet files"))
        staging.commit(output, staged.path, written, job.replace)
        summary.replicas = kept
        return summary
