"""``kseg lookup-offset`` and ``kseg lookup-time``: one record found along Kafka's own read path."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from kseg.cli import parts
from kseg.cli.ending import Finished
from kseg.cli.lookup_plain import Query, answer, offset_query, time_query
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
from kseg.cli.params import OffsetType, TimestampType, decoders, registry_decoders
from kseg.limits import EXIT_OK as EXIT_FOUND
from kseg.limits import EXIT_PROBLEMS as EXIT_INVALID
from kseg.timestamps import INT64_MAX, INT64_MIN, parse_timestamp  # noqa: F401 - re-exported

# A negative number is an argument (``lookup-time -1 DIR``: Kafka's "latest"), not an unknown option;
# -h and the command's own options are still options.
NUMBER_ARGS = {"help_option_names": ["-h", "--help"], "ignore_unknown_options": True}


def lookup_options(f: Callable[..., Query]) -> Callable[..., None]:
    """DIR, ``--format``, ``--max-message-size``, the decoders and :func:`run_options`: both lookups'.  The
    command returns its query (:data:`~kseg.cli.lookup_plain.Query`); this runs it on DIR
    (:func:`kseg.cli.lookup_plain.answer`) and exits with its code."""

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
        key, value = decoders(  # (None: Kafka's string decoder; the registry's decoders are given)
            None if chosen[0] else names[0] or "string", None if chosen[1] else names[1] or "string"
        )
        key, value = chosen[0] or key, chosen[1] or value
        code = answer(run, directory, output_format, max_message_size, key, value, query)
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

    return offset_query(offset)


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

    return time_query(timestamp)
