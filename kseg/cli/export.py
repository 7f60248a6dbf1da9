"""``kseg export``: the records of segments as Parquet, locally or on Spark."""

from __future__ import annotations

import sys

import click

from kseg.cli.lookup import TimestampType
from kseg.cli.options import (
    binary_streams,
    check_spark,
    clean_stale_output,
    decoder_options,
    fail,
    io_options,
    listing_code,
    max_message_size_option,
    partitions_or_fail,
    quiet_option,
    reading_bar,
    say,
    spark_options,
)
from kseg.limits import EXIT_OK, EXIT_PROBLEMS, INT64_MAX, INT64_MIN, decompression_limit
from kseg.ops.export.export import ON_CORRUPTION

EXIT_CORRUPT = EXIT_PROBLEMS  # corrupt batches met


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--output",
    "-o",
    required=True,
    metavar="PATH|URI",
    help="Where the Parquet goes: a file (local run) or a directory (--spark); s3://, gs://... too.",
)
@click.option(
    "--from-offset", type=click.IntRange(INT64_MIN, INT64_MAX), default=None, help="First offset to export (inclusive)."
)
@click.option(
    "--to-offset", type=click.IntRange(INT64_MIN, INT64_MAX), default=None, help="Last offset to export (inclusive)."
)
@click.option(
    "--from-time",
    type=TimestampType(names=False),
    default=None,
    help="Earliest timestamp to export (inclusive): epoch ms or ISO-8601 with a zone.",
)
@click.option("--to-time", type=TimestampType(names=False), default=None, help="Timestamp to stop before (exclusive).")
@decoder_options
@click.option(
    "--on-corruption",
    type=click.Choice(ON_CORRUPTION),
    default="skip",
    show_default=True,
    help="skip: a corrupt batch becomes one marked row; fail: stop, write nothing; keep: as skip, and "
    "records of a batch failing its CRC are written too (crcValid false).",
)
@click.option(
    "--split-bytes",
    type=click.IntRange(min=1 << 20, max=1 << 62),
    default=128 << 20,
    show_default=True,
    help="Segments larger than this are read by several tasks, cut at batch boundaries.",
)
@click.option("--force", is_flag=True, help="Replace an existing output.")
@max_message_size_option
@quiet_option
@io_options
@spark_options
def export(
    paths,
    output,
    from_offset,
    to_offset,
    from_time,
    to_time,
    key_decoder,
    value_decoder,
    on_corruption,
    split_bytes,
    force,
    max_message_size,
    quiet,
    spark,
    master,
    spark_conf,
    verbose,
    max_rate,
    drop_cache,
) -> None:
    """Export the records of log roots, partition directories or segment files
    (local paths or URIs) as Parquet: one row per record with its key, value,
    headers and batch fields, ready for SQL, DuckDB or pandas.  A key or
    value decoder adds the keyText or valueText column.

    \b
    Exit codes:
      0  every record in range was exported
      1  corrupt batches were met (skipped and marked, or --on-corruption fail)
      2  usage error, or an input or the output could not be read or written
    """
    from kseg.ops.export.export import Ranges

    try:  # Parquet is pyarrow's: without it, one line saying how to get it (exit 2), never a traceback
        import pyarrow.parquet  # noqa: F401
    except ImportError as exc:
        fail(
            binary_streams()[1],
            f"export writes Parquet with pyarrow, which cannot be imported ({exc}); "
            "install it with: pip install 'kseg[remote]'",
        )

    for name, value in (("--from-time", from_time), ("--to-time", to_time)):
        if value is not None and value < 0:
            raise click.UsageError(f"{name} takes a time (epoch ms or ISO-8601), not earliest/latest/max-timestamp")
    check_spark(spark, master, spark_conf, verbose)
    ranges = Ranges(
        INT64_MIN if from_offset is None else from_offset,
        INT64_MAX if to_offset is None else to_offset,
        INT64_MIN if from_time is None else from_time,
        INT64_MAX if to_time is None else to_time,
    )
    for lo, hi, what in ((ranges.from_offset, ranges.to_offset, "offset"), (ranges.from_time, ranges.to_time, "time")):
        if lo > hi:
            raise click.UsageError(f"--from-{what} is after --to-{what}")
    key_fn, value_fn = _decoders(key_decoder, value_decoder)
    out, err = binary_streams()
    # an input that cannot be read, or an output that would land on one, raises InputError: its one line,
    # exit 2, before anything is written (cli.main.fatal)
    from kseg.storage.outputs import check_file_target, refuse_on_inputs

    refuse_on_inputs(output, list(paths), "-o")  # before any work, --force or not
    if not spark:
        check_file_target(output, force=force, option="-o")
        clean_stale_output(err, output)
    if spark:
        from kseg.spark.export_job import run_export

        summary = run_export(
            list(paths),
            output,
            ranges=ranges,
            key_decoder=key_decoder,
            value_decoder=value_decoder,
            on_corruption=on_corruption,
            split_bytes=split_bytes,
            limit=decompression_limit(max_message_size),
            replace=force,
            master=master,
            spark_conf=spark_conf,
            err=err,
            verbose=verbose,
        )
    else:
        summary = _run_local(
            list(paths),
            output,
            ranges,
            key_fn,
            value_fn,
            on_corruption,
            split_bytes,
            decompression_limit(max_message_size),
            force,
            quiet,
            err,
        )
    if summary is None:  # --on-corruption fail stopped it
        sys.exit(EXIT_CORRUPT)
    out.write((summary.line(output) + "\n").encode("utf-8", "replace"))
    out.flush()
    sys.exit(EXIT_CORRUPT if summary.corrupt else EXIT_OK)


def _decoders(key_decoder: str | None, value_decoder: str | None) -> tuple:
    from kseg.cli.dump import resolve_decoder
    from kseg.errors import KsegError

    try:
        return tuple(None if name is None else resolve_decoder(name) for name in (key_decoder, value_decoder))
    except KsegError as exc:
        raise click.UsageError(exc.describe()) from None


def corruption_line(c) -> str:
    return f"kseg: corrupt: {c.log}: at byte {c.position}: {c.kind}: {c.message}"


def _run_local(paths, output, ranges, key_fn, value_fn, on_corruption, split_bytes, limit, force, quiet, err):
    from kseg.ops.export.export import plan
    from kseg.render.export import CorruptionStop, write_parquet

    partitions = partitions_or_fail(err, paths)
    if listing_code(partitions):  # an input not read is never "N records written": nothing is
        fail(err, "nothing was written: a directory above could not be listed")
    splits = plan(partitions, ranges, split_bytes, limit)
    progress, _ = reading_bar("export", [], None, total=sum(split.bytes for split in splits))

    def on_split(_split) -> None:
        pass

    try:
        return write_parquet(
            splits,
            output,
            ranges=ranges,
            limit=limit,
            on_corruption=on_corruption,
            key_decoder=key_fn,
            value_decoder=value_fn,
            replace=force,
            on_corrupt=lambda c: say(err, corruption_line(c)),
            on_split=on_split,
        )
    except CorruptionStop as stop:
        say(err, corruption_line(stop.corruption))
        say(err, "kseg: export stopped (--on-corruption fail); nothing was written")
        return None
    finally:
        if progress is not None:
            progress.close()
