"""``kseg lookup-offset`` and ``kseg lookup-time``: one record found along Kafka's own read path."""

from __future__ import annotations

import sys

import click

from kseg.cli.options import (
    binary_streams,
    decoder_options,
    format_option,
    io_options,
    is_quiet,
    max_message_size_option,
    quiet_option,
    say,
)
from kseg.limits import EXIT_ERROR
from kseg.limits import EXIT_OK as EXIT_FOUND
from kseg.limits import EXIT_PROBLEMS as EXIT_NOT_FOUND
from kseg.timestamps import INT64_MAX, INT64_MIN, parse_timestamp  # noqa: F401 - re-exported

# A negative number is an argument (``lookup-time -1 DIR``: Kafka's "latest"), not an unknown option;
# -h and the command's own options are still options.
NUMBER_ARGS = {"help_option_names": ["-h", "--help"], "ignore_unknown_options": True}


def _not_an_option(value, param, ctx) -> None:
    """With unknown options passed through as arguments (for ``-1``), a misspelt ``--option`` says so."""
    if isinstance(value, str) and value.startswith("--"):
        raise click.NoSuchOption(value, ctx=ctx)


class OffsetType(click.IntRange):
    """OFFSET: a 64-bit integer, negative ones too."""

    def convert(self, value, param, ctx):
        _not_an_option(value, param, ctx)
        return super().convert(value, param, ctx)


class TimestampType(click.ParamType):
    """TIMESTAMP as :func:`parse_timestamp` reads it."""

    name = "timestamp"

    def __init__(self, names: bool = True) -> None:
        self.names = names  # earliest/latest/max-timestamp accepted (a lookup), or a time only (a range bound)

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        _not_an_option(value, param, ctx)
        try:
            return parse_timestamp(value, names=self.names)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _decoders(key_decoder: str | None, value_decoder: str | None) -> tuple:
    from kseg.cli.dump import kraft_text, resolve_decoder
    from kseg.errors import KsegError

    try:
        return resolve_decoder(key_decoder or "string"), resolve_decoder(value_decoder or "string"), kraft_text
    except KsegError as exc:
        raise click.UsageError(exc.describe()) from None


def _where(path: str) -> dict:
    """The fields naming a partition in every lookup row: its log directory (absolute), its directory
    name, and the path as given."""
    from kseg.storage.partition import Partition

    part = Partition(path)
    return {"logDir": part.log_dir, "partition": part.name, "path": path}


def _run(directory: str, output_format: str, max_message_size: int, decoders: tuple, query) -> int:
    """Open the partition, run ``query(log)`` -> (result, text writer, json maker, reason), print."""
    from kseg.errors import InputError, KsegError
    from kseg.limits import decompression_limit
    from kseg.ops.lookup.offset import PartitionLog
    from kseg.render.lookup import write_json
    from kseg.render.text import TextSink
    from kseg.storage import files

    out, err = binary_streams()
    sink = TextSink(out, err)
    partition = files.display(directory)
    try:
        with PartitionLog(directory, limit=decompression_limit(max_message_size)) as log:
            result, write_text, make_json, reason = query(log)
            notes = log.notes + [n for n in result.notes if n not in log.notes]
            result.notes = notes
            if output_format == "json":
                write_json(out, make_json(result, _where(partition), decoders))
            else:
                write_text(sink, result, partition, decoders)
                sink.flush()
    except InputError as exc:
        sink.error(exc)
        return EXIT_ERROR
    except KsegError as exc:
        sink.error(exc)
        return EXIT_NOT_FOUND
    sink.quiet = is_quiet()
    for note in notes:
        sink.note(note)
    why = reason(result)
    if why:
        say(err, f"kseg: not found: {why}")
        return EXIT_NOT_FOUND
    return EXIT_FOUND


@click.command(context_settings=NUMBER_ARGS)
@click.argument("offset", type=OffsetType(INT64_MIN, INT64_MAX))
@click.argument("directory", metavar="DIR", type=click.Path(readable=False))
@format_option
@max_message_size_option
@decoder_options
@quiet_option
@io_options
def lookup_offset(
    offset, directory, output_format, max_message_size, key_decoder, value_decoder, quiet, max_rate, drop_cache
) -> None:
    """Find the record at OFFSET in the partition directory DIR the way a
    Kafka broker serves a fetch, and show the path taken.

    \b
    Kafka's read path (LocalLog.read, LogSegment.translateOffset):
      1. the segment with the largest base offset <= OFFSET;
      2. in its .index the largest entry <= OFFSET (else the base offset, position 0);
      3. from that position, the first batch whose last offset >= OFFSET.
    Then the batch and the record print as kafka-dump-log.sh --print-data-log
    prints them.  In a compacted log where OFFSET is gone, the first record
    after it is returned, and the output says so.

    \b
    Exit codes:
      0  a record was found (OFFSET, or the next one in a compacted log)
      1  no record: below the log start, at or past the log end, or unreadable data
      2  usage error, or a file could not be opened or read
    """
    decoders = _decoders(key_decoder, value_decoder)

    def query(log):
        from kseg.ops.lookup.offset import lookup_offset as run
        from kseg.render.lookup import offset_json, offset_reason, write_offset_text

        return run(log, offset), write_offset_text, offset_json, offset_reason

    sys.exit(_run(directory, output_format, max_message_size, decoders, query))


@click.command(context_settings=NUMBER_ARGS)
@click.argument("timestamp", metavar="TIMESTAMP", type=TimestampType())
@click.argument("directory", metavar="DIR", type=click.Path(readable=False))
@format_option
@max_message_size_option
@decoder_options
@quiet_option
@io_options
def lookup_time(
    timestamp, directory, output_format, max_message_size, key_decoder, value_decoder, quiet, max_rate, drop_cache
) -> None:
    """Find the first record whose timestamp >= TIMESTAMP in the partition
    directory DIR, with the semantics of Kafka's ListOffsets, and show the
    path taken.

    TIMESTAMP is epoch milliseconds, ISO-8601 with a zone
    (2024-10-27T03:33:20.100Z), or earliest (the log start offset), latest
    (the log end offset) or max-timestamp (the record with the largest
    timestamp); -2, -1 and -3 are Kafka's codes for these (kseg lookup-time -1 DIR).

    \b
    Kafka's search (UnifiedLog.fetchOffsetByTimestamp):
      1. the first segment whose largest timestamp >= TIMESTAMP (its time
         index's last entry; without a usable one kseg scans its batches);
      2. in its .timeindex the largest entry <= TIMESTAMP;
      3. that entry's offset through the .index to a position;
      4. the first batch from there with max timestamp >= TIMESTAMP, and in
         it the first record with timestamp >= TIMESTAMP.

    \b
    Exit codes:
      0  Kafka answers an offset (earliest and latest always do)
      1  Kafka answers -1 (no such record), or unreadable data
      2  usage error, or a file could not be opened or read
    """
    decoders = _decoders(key_decoder, value_decoder)
    target = timestamp

    def query(log):
        from kseg.ops.lookup.time import lookup_time as run
        from kseg.render.lookup import time_json, time_reason, write_time_text

        return run(log, target), write_time_text, time_json, time_reason

    sys.exit(_run(directory, output_format, max_message_size, decoders, query))
