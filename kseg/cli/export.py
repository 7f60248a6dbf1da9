"""``kseg export``: the records of segments as Parquet, locally or on Spark."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from kseg.cli import parts
from kseg.cli.options import (
    HELP,
    Run,
    Spark,
    clean_stale_output,
    decoder_options,
    listing_code,
    listing_status,
    max_message_size_option,
    partitions_or_fail,
    reading_bar,
    rsm_key_option,
    run_options,
    schemas_options,
    spark_options,
    validate_option,
)
from kseg.cli.params import Int, TimestampType, decoders, record_ranges, registry_decoders
from kseg.limits import EXIT_OK, EXIT_PROBLEMS, INT64_MAX, INT64_MIN, decompression_limit
from kseg.ops.export.export import DEFAULT_TARGET_FILE_BYTES, ON_CORRUPTION

if TYPE_CHECKING:
    from kseg.storage.outputs import Destination

#: The environment variable that chooses pyarrow's memory pool (read when pyarrow first allocates).
ARROW_POOL = "ARROW_DEFAULT_MEMORY_POOL"

EXIT_CORRUPT = EXIT_PROBLEMS  # corrupt batches met


@parts.command(context_settings=HELP)
@click.argument("paths", nargs=-1, required=True)
@parts.option(
    "--output",
    "-o",
    required=True,
    metavar="PATH|URI",
    help="Where the Parquet goes: a file (local run) or a directory (--spark); s3://, gs://... too.",
)
@parts.option("--from-offset", type=Int(INT64_MIN, INT64_MAX), default=None, help="First offset to export (inclusive).")
@parts.option("--to-offset", type=Int(INT64_MIN, INT64_MAX), default=None, help="Last offset to export (inclusive).")
@parts.option(
    "--from-time",
    type=TimestampType(names=False),
    default=None,
    help="Earliest timestamp to export (inclusive): epoch ms or ISO-8601 with a zone.",
)
@parts.option("--to-time", type=TimestampType(names=False), default=None, help="Timestamp to stop before (exclusive).")
@decoder_options
@schemas_options
@validate_option
@parts.option(
    "--value-message",
    "value_message",
    default=None,
    metavar="NAME",
    help="With the registry decoder and a Protobuf value subject: the message of the valueDecoded column, "
    "by name (default: the file's first message).",
)
@parts.option(
    "--key-message",
    "key_message",
    default=None,
    metavar="NAME",
    help="As --value-message, for keyDecoded.",
)
@parts.option(
    "--on-corruption",
    type=click.Choice(ON_CORRUPTION),
    default="skip",
    show_default=True,
    help="skip: a corrupt batch becomes one marked row; fail: stop, write nothing; keep: as skip, and "
    "records of a batch failing its CRC are written too (crcValid false).",
)
@parts.option(
    "--split-bytes",
    type=Int(min=1 << 20, max=1 << 62),
    default=128 << 20,
    show_default=True,
    help="Segments larger than this are read by several tasks, cut at batch boundaries.",
)
@parts.option(
    "--target-file-size",
    type=Int(min=1, max=1 << 62),
    default=None,
    metavar="BYTES",
    help="With --spark: each task's rows go into Parquet files of about this size (at or below it; "
    "default 134217728, 128 MiB): small segments share a file, a large one spans several.",
)
@parts.option(
    "--isolation",
    type=click.Choice(("read_uncommitted", "read_committed")),
    default="read_uncommitted",
    show_default=True,
    help="read_committed: the records a consumer with isolation.level=read_committed reads (no aborted "
    "transaction's records, no control records); every record is exported otherwise, the aborted column "
    "saying which a read_committed consumer drops.",
)
@parts.option(
    "--topic",
    "topics",
    multiple=True,
    metavar="NAME",
    help="Export only the partitions of this topic (repeatable), from log roots or a fleet's root.",
)
@parts.option(
    "--report",
    "report",
    default=None,
    metavar="FILE",
    help="Write what was exported (each partition's next offset) as JSON, for a later --since.",
)
@parts.option(
    "--since",
    "since_report",
    default=None,
    metavar="REPORT",
    help="Export only the records past the offsets a previous export's --report recorded.",
)
@parts.option(
    "--partition-by",
    type=click.Choice(("topic,partition",)),
    default=None,
    help="With --spark: write the files under OUTPUT/topic=T/partition=P/ (hive layout; those two columns "
    "are in the directory names).",
)
@parts.option(
    "--one-replica",
    is_flag=True,
    help="Keep one copy of each topic-partition found under several log directories: the most complete "
    "undamaged replica, as kseg diff reads them (which, and why, is printed).",
)
@parts.option("--force", is_flag=True, help="Replace an existing output.")
@max_message_size_option
@run_options
@rsm_key_option
@spark_options
def export(
    paths: tuple[str, ...],
    output: str,
    from_offset: int | None,
    to_offset: int | None,
    from_time: int | None,
    to_time: int | None,
    key_decoder: str | None,
    value_decoder: str | None,
    schemas: str | None,
    schemas_context: str,
    framing: str,
    validate: bool,
    value_message: str | None,
    key_message: str | None,
    on_corruption: str,
    split_bytes: int,
    target_file_size: int | None,
    isolation: str,
    topics: tuple[str, ...],
    report: str | None,
    since_report: str | None,
    partition_by: str | None,
    one_replica: bool,
    force: bool,
    max_message_size: int,
    run: Run,
    spark: Spark,
) -> None:
    """Export the records of log roots, partition directories or segment files
    (local paths or URIs) as Parquet: one row per record with its key, value,
    headers and batch fields, ready for SQL, DuckDB or pandas.  A key or
    value decoder adds the keyText or valueText column; the registry decoder
    adds typed keyDecoded or valueDecoded columns (docs/schemas.md).

    \b
    Exit codes:
      0  every record in range was exported
      1  corrupt batches were met (skipped and marked, or --on-corruption fail);
         with --validate, keys or values not decoded or not matching their
         schema (exported, marked in keyInvalid/valueInvalid)
      2  usage error, or an input or the output could not be read or written
    """
    from kseg.storage.outputs import check_file_target, destination, refuse_on_inputs

    # pyarrow's default allocator (mimalloc) keeps some 30 MiB more of the writer's freed memory than the
    # system's: export's memory bound (128 MiB on any input) is kept with the system's; a user's choice stands
    os.environ.setdefault(ARROW_POOL, "system")
    try:  # Parquet is pyarrow's: without it, one line saying how to get it (exit 2), never a traceback
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        run.fail(
            f"export writes Parquet with pyarrow, which cannot be imported ({exc}); "
            "install it with: pip install 'kseg[remote]'"
        )
    for name, value in (("--from-time", from_time), ("--to-time", to_time)):
        if value is not None and value < 0:
            raise click.UsageError(f"{name} takes a time (epoch ms or ISO-8601), not earliest/latest/max-timestamp")
    spark.check(run)
    if partition_by is not None and not spark.on:
        raise click.UsageError("--partition-by is for --spark (a local export writes the one file -o names)")
    if target_file_size is not None and not spark.on:
        raise click.UsageError("--target-file-size is for --spark (a local export writes the one file -o names)")
    ranges = record_ranges(from_offset, to_offset, from_time, to_time)
    if (report or since_report) and ranges.by_time:
        raise click.UsageError("--report and --since record offsets: not with --from-time/--to-time")
    names = (key_decoder, value_decoder)
    _registry_checks(spark.on, names, topics, (key_message, value_message))
    key_reg, value_reg, registry = registry_decoders(
        names, schemas, schemas_context, list(paths), run, validate, framing
    )
    key_fn, value_fn = decoders(None if key_reg else key_decoder, None if value_reg else value_decoder)
    key_fn, value_fn = key_reg or key_fn, value_reg or value_fn
    roles = tuple(role for role, d in (("key", key_reg), ("value", value_reg)) if d is not None)
    messages = {role: m for role, m in (("key", key_message), ("value", value_message)) if m is not None}
    limit = decompression_limit(max_message_size)
    # an input that cannot be read, or an output that would land on one, raises InputError: its one line,
    # exit 2, before anything is written (cli.ending.fatal)
    refuse_on_inputs(output, list(paths), "-o")  # before any work, --force or not
    to = destination(output)  # -o: its store chosen once, here
    since = None
    if since_report is not None:
        from kseg.render.export_report import read_since

        since = read_since(since_report)
    report_to = None if report is None else destination(report)  # its store chosen once, here
    if report is not None:
        refuse_on_inputs(report, list(paths), "--report")
        check_file_target(report, force=force or report == since_report, option="--report")
    if spark.on:
        from kseg.spark.export_job import run_export
        from kseg.spark.paths import absolute_all

        run = run.shown_as(paths, absolute_all(paths))  # what the driver prints names the paths as given

        summary = run_export(
            list(paths),
            to,
            ranges=ranges,
            key_decoder=key_decoder,
            value_decoder=value_decoder,
            on_corruption=on_corruption,
            split_bytes=split_bytes,
            limit=limit,
            replace=force,
            target_bytes=DEFAULT_TARGET_FILE_BYTES if target_file_size is None else target_file_size,
            committed=isolation == "read_committed",
            topics=topics,
            since=since,
            hive=partition_by is not None,
            one_replica=one_replica,
            registry=_shipped(registry, roles, schemas_context, topics, framing, messages, validate),
            master=spark.master,
            spark_conf=spark.conf,
            err=run.err,
            verbose=spark.verbose,
            listing_status=lambda inputs: listing_status(run, inputs),
        )
    else:
        check_file_target(output, force=force, option="-o")
        clean_stale_output(run, to)
        summary = _run_local(
            run,
            list(paths),
            to,
            ranges,
            (key_fn, value_fn),
            on_corruption,
            split_bytes,
            limit,
            force,
            isolation == "read_committed",
            topics,
            since,
            one_replica,
            (registry, roles, schemas_context, framing, validate, messages),
        )
    if registry is not None:
        if summary is not None:
            registry.merge(summary.reasons)  # --spark: the tasks' counts (a local run's are its own)
        for note in registry.notes():
            run.note(note)
    if summary is None:  # --on-corruption fail stopped it
        sys.exit(EXIT_CORRUPT)
    invalid = registry is not None and registry.problems() > 0  # --validate: not decoded, or not matching
    if report_to is not None:
        from kseg.render.export_report import report_bytes
        from kseg.storage import files

        data = report_bytes(summary.next_offsets, since)
        files.write_stream(report_to.path, lambda f: f.write(data), replace=True, store=report_to.store)
    replica_lines(run, summary.replicas)
    run.out.write((summary.line(output) + "\n").encode("utf-8", "replace"))
    run.out.flush()
    sys.exit(EXIT_CORRUPT if summary.corrupt or invalid else EXIT_OK)


def _registry_checks(on: bool, names: tuple, topics: tuple[str, ...], messages: tuple) -> None:
    """``--key-message``/``--value-message`` need that role's registry decoder; with ``--spark``: the
    registry decoder's typed columns need ``--topic`` (the topics typed)."""
    for role, name, message in zip(("key", "value"), names, messages, strict=True):
        if message is not None and name != "registry":
            raise click.UsageError(f"--{role}-message is for --{role}-decoder registry")
    if on and "registry" in names and not topics:
        raise click.UsageError("with --spark, the registry decoder's typed columns need --topic (their topics)")


def replica_lines(run: Run, kept: list[str]) -> None:
    """``--one-replica``: which copy of each topic-partition is exported, and why (stdout, before the
    summary line)."""
    for line in kept:
        run.out.write((f"replica: {line}\n").encode("utf-8", "replace"))
    run.out.flush()


def _typed(
    partitions: list,
    registry: Any,
    roles: tuple,
    context: str,
    framing: str = "confluent",
    validate: bool = False,
    messages: dict | None = None,
) -> tuple:
    """The registry decoder's typed columns for the topics of ``partitions`` (a usage error naming a topic
    whose subject the schemas lack)."""
    if registry is None or not roles:
        return ()
    from kseg.decoders.registry.typed_topics import typed_columns
    from kseg.ops.export.export import topic_partition

    topics = sorted({topic_partition(p.name)[0] for p in partitions if p.error is None})
    try:
        return typed_columns(registry.store, roles, topics, context, framing, validate, messages)
    except ValueError as exc:
        raise click.UsageError(f"{exc} (--topic)") from None


def _shipped(
    registry: Any, roles: tuple, context: str, topics: tuple[str, ...], framing: str, messages: dict, validate: bool
) -> dict | None:
    """``--spark``: what the executors need for the registry decoder (the replayed store, pickled with the
    task), its typed columns checked here first (a subject the schemas lack: exit 2 before any work)."""
    if registry is None:
        return None
    from kseg.decoders.registry.typed_topics import typed_columns

    try:
        typed_columns(registry.store, roles, list(set(topics)), context, framing, messages=messages)
    except ValueError as exc:
        raise click.UsageError(f"{exc} (--topic)") from None
    return {
        "store": registry.store,
        "context": context,
        "roles": roles,
        "topics": list(set(topics)),
        "framing": framing,
        "messages": messages,
        "validate": validate,
    }


def corruption_line(c: Any) -> str:
    return f"kseg: corrupt: {c.log}: at byte {c.position}: {c.kind}: {c.message}"


def _run_local(
    run: Run,
    paths: list[str],
    output: Destination,
    ranges: Any,
    decoded: tuple[Any, Any],
    on_corruption: str,
    split_bytes: int,
    limit: int,
    force: bool,
    committed: bool,
    topics: tuple[str, ...] = (),
    since: dict[str, int] | None = None,
    one_replica: bool = False,
    registry: tuple = (None, (), ".", "confluent", False, None),
) -> Any:
    from kseg.errors import KsegError
    from kseg.ops.export.export import plan, select_topics
    from kseg.render.export import CorruptionStop, write_parquet

    try:
        partitions = select_topics(partitions_or_fail(run, paths), topics)
    except KsegError as exc:
        run.fail(exc)
    if listing_code(partitions):  # an input not read is never "N records written": nothing is
        run.fail("nothing was written: a directory above could not be listed")
    if one_replica:
        from kseg.ops.diff.choose import one_replica as keep_one

        try:
            partitions, kept = keep_one(partitions)
        except KsegError as exc:
            run.fail(exc)
    typed = _typed(partitions, *registry)
    splits = plan(partitions, ranges, split_bytes, limit, since)
    progress, _ = reading_bar(run, "export", [], total=sum(split.bytes for split in splits))
    try:
        summary = write_parquet(
            splits,
            output,
            ranges=ranges,
            limit=limit,
            on_corruption=on_corruption,
            key_decoder=decoded[0],
            value_decoder=decoded[1],
            replace=force,
            on_corrupt=lambda c: run.say(corruption_line(c)),
            on_split=lambda _split: None,
            committed=committed,
            typed=typed,
        )
        summary.replicas = kept if one_replica else []
        return summary
    except CorruptionStop as stop:
        run.say(corruption_line(stop.corruption))
        run.say("kseg: export stopped (--on-corruption fail); nothing was written")
        return None
    finally:
        if progress is not None:
            progress.close()
