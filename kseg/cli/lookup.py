"""``kseg lookup-offset`` and ``kseg lookup-time``: one record found along Kafka's own read path."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from kseg.cli import parts
from kseg.cli.options import (
    Run,
    decoder_options,
    format_option,
    max_message_size_option,
    rsm_key_option,
    run_options,
    schemas_options,
    validate_option,
)
from kseg.cli.params import OffsetType, TimestampType, decoders, kraft_text, registry_decoders
from kseg.cli.start import Finished
from kseg.limits import EXIT_ERROR
from kseg.limits import EXIT_OK as EXIT_FOUND
from kseg.limits import EXIT_PROBLEMS as EXIT_INVALID
from kseg.limits import EXIT_PROBLEMS as EXIT_NOT_FOUND
from kseg.timestamps import INT64_MAX, INT64_MIN, parse_timestamp  # noqa: F401 - re-exported

# A negative number is an argument (``lookup-time -1 DIR``: Kafka's "latest"), not an unknown option;
# -h and the command's own options are still options.
NUMBER_ARGS = {"help_option_names": ["-h", "--help"], "ignore_unknown_options": True}


Query = Callable[[Any], tuple]  # log -> (result, text writer, reason)


def lookup_options(f: Callable[..., Query]) -> Callable[..., None]:
    """DIR, ``--format``, ``--max-message-size``, the decoders and :func:`run_options`: both lookups'.  The
    command returns its query (:data:`Query`); this runs it on DIR (:func:`_run`) and exits with its code."""

    @functools.wraps(f)
    def command(
        *args: Any,
        directory: str,
        output_format: str,
        max_message_size: int,
        key_decoder: str | None,
        value_decoder: str | None,
        schemas: str | None,
        schemas_context: str,
        framing: str,
        validate: bool,
        run: Run,
        **kwargs: Any,
    ) -> None:
        query = f(*args, **kwargs)
        names = (key_decoder, value_decoder)
        chosen = registry_decoders(names, schemas, schemas_context, [directory], run, validate, framing)
        code = _run(run, directory, output_format, max_message_size, names, query, chosen[:2])
        if chosen[2] is not None:
            for note in chosen[2].notes():
                run.note(note)
            if chosen[2].problems() and code == EXIT_FOUND:
                code = EXIT_INVALID  # --validate: the record found was not decoded or does not match its schema
        raise Finished(code)  # (sys.exit: all the lookup writes is on stdout and stderr, flushed)

    g = run_options(rsm_key_option(command))
    g = validate_option(g)
    g = schemas_options(g)
    g = decoder_options(g)
    g = max_message_size_option(g)
    g = format_option(g)
    return click.argument("directory", metavar="DIR", type=click.Path(readable=False))(g)


def _where(path: str, store: Any) -> dict[str, str]:
    """The fields naming a partition in every lookup row: its log directory (absolute), its directory
    name, and the path as given (a path of ``store``)."""
    from kseg.storage.partition import Partition

    part = Partition(path, store=store)
    return {"logDir": part.log_dir, "partition": part.name, "path": path}


def _run(
    run: Run, directory: str, output_format: str, max_message_size: int, names: tuple, query: Any, given: tuple
) -> int:
    """Open the partition, run ``query(log)`` -> (result, text writer, reason), print; ``names``:
    the key and value decoders given (None: Kafka's string decoder); ``given``: the registry's decoder objects
    for those named ``registry`` (:func:`kseg.cli.params.registry_decoders`), else None."""
    from kseg.errors import InputError, KsegError
    from kseg.limits import decompression_limit
    from kseg.ops.lookup.log import PartitionLog
    from kseg.render.text import TextSink
    from kseg.storage import files
    from kseg.storage.stores.discover import store_of

    out, err = run.out, run.err
    key, value = decoders(
        None if given[0] else names[0] or "string", None if given[1] else names[1] or "string"
    )  # the registry's decoders are given
    key, value = given[0] or key, given[1] or value
    chosen = (key, value, kraft_text)
    sink = TextSink(out, err)
    store = store_of(directory)  # the directory given: its store, chosen once for what names it
    partition = files.display(directory, store=store)
    try:
        with PartitionLog(directory, limit=decompression_limit(max_message_size), store=store) as log:
            result, write_text, reason = query(log)
            notes = log.notes + [n for n in result.notes if n not in log.notes]
            result.notes = notes
            if output_format == "json":  # (the JSON renderer loaded only for JSON)
                from kseg.render.lookup_json import lookup_row, write_json

                write_json(out, lookup_row(result, _where(partition, store), chosen))
            else:
                write_text(sink, result, partition, chosen)
                sink.flush()
    except InputError as exc:
        sink.error(exc)
        return EXIT_ERROR
    except KsegError as exc:
        sink.error(exc)
        return EXIT_NOT_FOUND
    sink.quiet = run.quiet
    for note in notes:
        sink.note(note)
    why = reason(result)
    if why:
        run.say(f"kseg: not found: {why}")
        return EXIT_NOT_FOUND
    return EXIT_FOUND


@parts.command(context_settings=NUMBER_ARGS)
@click.argument("offset", type=OffsetType(INT64_MIN, INT64_MAX))
@lookup_options
def lookup_offset(offset: int) -> Query:
    """Find the record at OFFSET in the partition directory DIR the way a
    Kafka broker serves a fetch, and show the path taken.

    \b
    Kafka's read path (LocalLog.read, LogSegment.translateOffset):
      1. the segment with the largest base offset <= OFFSET;
      2. in its .index the largest entry <= OFFSET (else the base offset,
         position 0);
      3. from that position, the first batch whose last offset >= OFFSET.
    Then the batch and the record print as kafka-dump-log.sh --print-data-log
    prints them.  In a compacted log where OFFSET is gone, the first record
    after it is returned, and the output says so.

    \b
    Exit codes:
      0  a record was found (OFFSET, or the next one in a compacted log)
      1  no record: below the log start, at or past the log end, or
         unreadable data; with --validate, a record not decoded or not
         matching its schema
      2  usage error, or a file could not be opened or read
    """

    def query(log: Any) -> tuple:
        from kseg.ops.lookup.offset import lookup_offset as find
        from kseg.render.lookup import offset_reason, write_offset_text

        return find(log, offset), write_offset_text, offset_reason

    return query


@parts.command(context_settings=NUMBER_ARGS)
@click.argument("timestamp", metavar="TIMESTAMP", type=TimestampType())
@lookup_options
def lookup_time(timestamp: int) -> Query:
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
      1  Kafka answers -1 (no such record), or unreadable data; with
         --validate, a record not decoded or not matching its schema
      2  usage error, or a file could not be opened or read
    """

    def query(log: Any) -> tuple:
        from kseg.ops.lookup.time import lookup_time as find
        from kseg.render.lookup import time_reason, write_time_text

        return find(log, timestamp), write_time_text, time_reason

    return query
