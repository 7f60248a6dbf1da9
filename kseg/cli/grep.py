"""``kseg grep``: the records of segments, partitions, log directories or a fleet's root that match a key,
a value, headers, times, offsets or a producer."""

from __future__ import annotations

import base64
import binascii
import re
import sys
from typing import Any, NamedTuple

import click

from kseg.cli import parts
from kseg.cli.options import (
    HELP,
    Run,
    Spark,
    capped_jobs,
    decoder_options,
    format_option,
    jobs_option,
    listing_code,
    max_message_size_option,
    on_spark,
    partitions_or_fail,
    reading_bar,
    reword,
    rsm_key_option,
    run_options,
    schemas_options,
    spark_options,
)
from kseg.cli.params import Int, TimestampType, decoders, kraft_text, record_ranges, registry_decoders
from kseg.limits import INT32_MAX, INT64_MAX, INT64_MIN, decompression_limit
from kseg.storage.stores.discover import store_of

BYTES_HELP = "text (UTF-8), or hex:6b6579 or base64:a2V5 for any bytes (text:hex:... for text beginning so)"


def as_bytes(text: str, option: str) -> bytes:
    """The bytes a ``--key``/``--header`` value names: ``hex:``/``base64:`` spell any bytes, ``text:`` takes
    the rest as it is, anything else is UTF-8 text."""
    kind, sep, rest = text.partition(":")
    try:
        if sep and kind == "hex":
            return bytes.fromhex(rest)
        if sep and kind == "base64":
            return base64.b64decode(rest, validate=True)
    except (ValueError, binascii.Error) as exc:
        raise click.BadParameter(f"{text!r}: not {kind} ({exc})", param_hint=option) from None
    if sep and kind == "text":
        return rest.encode("utf-8", "surrogateescape")
    return text.encode("utf-8", "surrogateescape")


def _pattern(text: str, option: str, flags: int) -> re.Pattern[str]:
    try:
        return re.compile(text, flags)
    except re.error as exc:
        raise click.BadParameter(f"{text!r} is not a regular expression: {exc}", param_hint=option) from None


def _where(texts: tuple[str, ...], flags: int) -> Any:
    """``--where`` conditions read (all must hold), or None; a usage error saying where one goes wrong."""
    if not texts:
        return None
    from kseg.ops.grep.where import All, Condition, WhereError, parse

    read = []
    for text in texts:
        try:
            read.append(parse(text, flags))
        except WhereError as exc:
            raise click.BadParameter(
                f"{text!r}: at character {exc.position + 1}: {exc.message}", param_hint="--where"
            ) from None
    return read[0] if len(read) == 1 else Condition(" and ".join(texts), All(tuple(c.tree for c in read)))


def _header_tests(exact: tuple[str, ...], regex: tuple[str, ...], flags: int) -> tuple:
    from kseg.ops.grep.query import HeaderTest

    tests = []
    for given in exact:
        name, sep, value = given.partition("=")
        tests.append(HeaderTest(name.encode("utf-8"), as_bytes(value, "--header") if sep else None))
    for given in regex:
        name, sep, value = given.partition("=")
        if not sep:
            raise click.BadParameter(f"expected NAME=REGEX, found {given!r}", param_hint="--header-regex")
        tests.append(HeaderTest(name.encode("utf-8"), pattern=_pattern(value, "--header-regex", flags)))
    return tuple(tests)


@parts.command(context_settings=HELP)
@click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False))
@parts.option("--key", "key", metavar="KEY", help=f"Records whose key is exactly these bytes: {BYTES_HELP}.")
@parts.option("--key-regex", metavar="REGEX", help="Records whose key, as the key decoder prints it, matches.")
@parts.option("--value-regex", metavar="REGEX", help="Records whose value, as the value decoder prints it, matches.")
@parts.option(
    "--header",
    "headers",
    multiple=True,
    metavar="NAME[=VALUE]",
    help="Records with this header (and exactly this value; VALUE as --key's); repeatable, all must hold.",
)
@parts.option(
    "--header-regex",
    "header_regexes",
    multiple=True,
    metavar="NAME=REGEX",
    help="Records with a header NAME whose value (as UTF-8 text) matches REGEX; repeatable.",
)
@parts.option(
    "--where",
    "wheres",
    multiple=True,
    metavar="EXPR",
    help="Records whose decoded fields hold EXPR, e.g. 'value.order_id == 1234 and headers.trace =~ \"^t-\"' "
    "(paths, == != < <= > >= =~ !~, and or not; docs/grep.md); repeatable, all must hold.",
)
@parts.option("--ignore-case", "-i", is_flag=True, help="The regular expressions ignore case.")
@parts.option("--from-offset", type=Int(INT64_MIN, INT64_MAX), default=None, help="First offset (inclusive).")
@parts.option("--to-offset", type=Int(INT64_MIN, INT64_MAX), default=None, help="Last offset (inclusive).")
@parts.option(
    "--from-time", type=TimestampType(names=False), default=None, help="Earliest timestamp: epoch ms or ISO-8601."
)
@parts.option("--to-time", type=TimestampType(names=False), default=None, help="Timestamp to stop before (exclusive).")
@parts.option("--producer-id", type=Int(-1, INT64_MAX), default=None, help="Records of batches of this producer id.")
@parts.option("--transactional", is_flag=True, help="Records of transactional batches only.")
@parts.option("--control", is_flag=True, help="Control records (transaction markers) instead of data records.")
@parts.option("--tombstones", is_flag=True, help="Records with a null value (tombstones) only.")
@parts.option(
    "--topic", "topics", multiple=True, metavar="NAME", help="Only the partitions of this topic (repeatable)."
)
@parts.option(
    "--partitions",
    "partition_count",
    type=Int(1, INT32_MAX),
    default=None,
    metavar="N",
    help="With --key: the topics' partition count, to read only the key's partition (default: the cluster "
    "metadata's count, else the count the inputs show, when they hold partitions 0..N-1).",
)
@parts.option(
    "--metadata",
    "metadata",
    metavar="PATH",
    default=None,
    help="With --key: the __cluster_metadata-0 directory (or the log directory holding it) whose topics' "
    "partition counts are used (default: one found in PATHS).",
)
@parts.option(
    "--no-prune", is_flag=True, help="With --key: read every partition (keys placed by a custom partitioner)."
)
@parts.option("--limit", type=Int(1, INT64_MAX), default=None, metavar="N", help="Stop after N matches.")
@parts.option("--count", is_flag=True, help="Print the number of matches of each partition, not the records.")
@jobs_option
@decoder_options
@schemas_options
@max_message_size_option
@format_option
@run_options
@rsm_key_option
@spark_options
def grep(
    paths: tuple[str, ...],
    key: str | None,
    key_regex: str | None,
    value_regex: str | None,
    headers: tuple[str, ...],
    header_regexes: tuple[str, ...],
    wheres: tuple[str, ...],
    ignore_case: bool,
    from_offset: int | None,
    to_offset: int | None,
    from_time: int | None,
    to_time: int | None,
    producer_id: int | None,
    transactional: bool,
    control: bool,
    tombstones: bool,
    topics: tuple[str, ...],
    partition_count: int | None,
    metadata: str | None,
    no_prune: bool,
    limit: int | None,
    count: bool,
    jobs: int,
    key_decoder: str | None,
    value_decoder: str | None,
    schemas: str | None,
    schemas_context: str,
    framing: str,
    max_message_size: int,
    output_format: str,
    run: Run,
    spark: Spark,
) -> None:
    """Find the records matching every filter given in log roots, partition
    directories or segment files (local paths or URIs), and print them as
    kafka-dump-log.sh --print-data-log prints records, after the segment and
    the position of their batch.

    With --key, only the partition Kafka's default partitioner sends the key
    to is read (murmur2 of the key bytes mod the partition count: --partitions,
    or the count the inputs show); --no-prune reads every partition.  Offset
    and time ranges start at the indexes; batches whose header rules them out
    are skipped without decompressing.  See docs/grep.md.

    \b
    Exit codes:
      0  a record matched
      1  no record matched (data not read past corruption is said)
      2  usage error, or a file could not be opened or read
    """
    from kseg.ops.grep.query import Query

    spark.check(run)
    if spark.on:  # executors do not run in this directory: every local path absolute (docs/spark.md)
        from kseg.spark.paths import absolute_all

        if jobs > 1:
            raise click.UsageError("--jobs is for a local run (with --spark the executors search)")
        run, paths = run.shown_as(paths, absolute_all(paths)), tuple(absolute_all(paths))
    flags = re.IGNORECASE if ignore_case else 0
    ranges = record_ranges(from_offset, to_offset, from_time, to_time)
    names = (key_decoder, value_decoder)
    key_registry, value_registry, registry = registry_decoders(
        names, schemas, schemas_context, list(paths), run, framing=framing
    )
    key_fn, value_fn = decoders(
        None if key_registry else key_decoder or "string", None if value_registry else value_decoder or "string"
    )
    query = Query(
        key=None if key is None else as_bytes(key, "--key"),
        key_regex=None if key_regex is None else _pattern(key_regex, "--key-regex", flags),
        value_regex=None if value_regex is None else _pattern(value_regex, "--value-regex", flags),
        headers=_header_tests(headers, header_regexes, flags),
        ranges=ranges,
        producer_id=producer_id,
        transactional=transactional,
        control=control,
        tombstones=tombstones,
        key_decoder=key_registry or key_fn,
        value_decoder=value_registry or value_fn,
        where=_where(wheres, flags),
    )
    if query == Query(key_decoder=query.key_decoder, value_decoder=query.value_decoder):
        raise click.UsageError(
            "say what to look for: --key, --key-regex, --value-regex, --header, --header-regex, --where, an "
            "offset or time range, --producer-id, --transactional, --control or --tombstones"
        )
    if registry is not None and jobs > 1:  # its schemas, replayed once here, are not shipped to workers
        run.note("--jobs: the registry decoder decodes in this process only; searching in one process")
        jobs = 1
    if (partition_count is not None or no_prune or metadata is not None) and query.key is None:
        raise click.UsageError("--partitions, --metadata and --no-prune are for --key (the partition a key is sent to)")
    if no_prune and (partition_count is not None or metadata is not None):
        raise click.UsageError("--no-prune reads every partition: it cannot go with --partitions or --metadata")
    if partition_count is not None and metadata is not None:
        raise click.UsageError("give --partitions or --metadata, not both")
    prune = None if no_prune else Prune(partition_count, metadata, decompression_limit(max_message_size))
    code = _search(
        run, list(paths), query, topics, prune, limit, count, output_format, max_message_size, jobs, spark, registry
    )
    if registry is not None:
        for note in registry.notes():
            run.note(note)
    sys.exit(code)


class Prune(NamedTuple):
    """With ``--key``: where the topics' partition counts come from (``--partitions``, ``--metadata``)."""

    partitions: int | None
    metadata: str | None
    bytes_limit: int


def _partitions(run: Run, paths: list[str], query: Any, topics: tuple[str, ...], prune: Prune | None) -> tuple:
    """The partitions to search and how many were left out by ``--topic`` and the key's partition."""
    from kseg.ops.grep.partitioner import prune as key_partitions
    from kseg.ops.grep.search import of_topics
    from kseg.storage import files

    found = partitions_or_fail(run, paths)
    partitions = of_topics(found, topics)
    if topics and not any(p.error is None for p in partitions):
        run.fail(f"no partition of {', '.join(sorted(set(topics)))} in the inputs")
    if query.key is not None and prune is not None:
        named = {
            files.absolute(p, store=store_of(p)).rstrip("/") for p in paths
        }  # partitions named on the command line
        given = [p for p in partitions if files.absolute(p.path, store=p.store).rstrip("/") in named]
        known = None
        if prune.partitions is None:
            from kseg.runtime.grep_counts import metadata_counts

            known = metadata_counts(run, found, prune.metadata, prune.bytes_limit)
        partitions, notes = key_partitions(partitions, query.key, prune.partitions, given, known)
        if not run.quiet:
            from kseg.render.notes import NoteGroups

            topics_noted = NoteGroups("topic")  # forty topics pruned alike: one line
            for note in notes:
                topics_noted.add(note)
            for text in topics_noted.texts():
                run.note(text)
    return partitions, len(found) - len(partitions)


def _search(
    run: Run,
    paths: list[str],
    query: Any,
    topics: tuple[str, ...],
    prune: Prune | None,
    limit: int | None,
    count: bool,
    output_format: str,
    max_message_size: int,
    jobs: int,
    spark: Spark,
    registry: Any = None,
) -> int:
    from kseg.runtime.grep import Output, finish, search

    partitions, left_out = _partitions(run, paths, query, topics, prune)
    code = listing_code(partitions)
    jobs = capped_jobs(run, jobs)
    output = Output(output_format == "json", count, query.key_decoder, query.value_decoder, kraft_text)
    bar, out = reading_bar(run, "grep", partitions) if jobs == 1 and not spark.on else (None, run.out)
    cluster = None
    if spark.on:
        from kseg.spark import grep_job

        def cluster(tasks: list) -> list:
            dones = on_spark(spark, "grep", lambda session: list(grep_job.run(session, tasks)))
            for done in dones if registry is not None else ():
                if done.reasons:  # the registry decoder's store shipped in each task: their counts added here
                    registry.merge(done.reasons)
            return dones

    try:
        totals, spent, searched = search(
            run, partitions, query, output, out, limit, decompression_limit(max_message_size), jobs, cluster
        )
    finally:
        if bar is not None:
            bar.close()
    return finish(run, output, run.out, totals, left_out, limit, spent, max(code, searched))


reword(
    grep,
    jobs="Search in N processes, a large partition's segments shared among them (printed as one process "
    "prints); --max-rate is split between them.",
)
