"""The lookups without click: their run, which both ways of starting one share, and their plain command lines.

``kseg lookup-offset OFFSET DIR`` and ``kseg lookup-time TIMESTAMP DIR`` -- with ``--format text|json`` and
``-q``/``--quiet`` at most, the way scripts run them in a loop -- are recognized by :func:`plain` and run here,
without importing click: click is about half of a lookup's start-up (~90 M of ~190 M instructions on
CPython 3.11).  They run as click's commands run them (:mod:`kseg.cli.lookup`): the same :func:`answer`, the
values click would have made (the offset as ``int()`` reads a plain decimal, the timestamp through
:func:`kseg.timestamps.parse_timestamp`, every other option's default), the same beginning and endings
(:mod:`kseg.cli.ending`).  Any other command line -- another option, ``-h``, a value that is not a plain
valid one, a URI, ``--`` -- is click's to parse, its errors included, so every message stays click's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE, EXIT_ERROR, INT64_MAX
from kseg.limits import EXIT_OK as EXIT_FOUND
from kseg.limits import EXIT_PROBLEMS as EXIT_NOT_FOUND

if TYPE_CHECKING:
    from kseg.runtime.run import Run

Query = Callable[[Any], tuple]  # log -> (result, text writer, reason)

#: the options a plain command line may carry, besides its two arguments
_FORMATS = ("text", "json")
_QUIET = ("-q", "--quiet")


class Plain(NamedTuple):
    """A plain lookup command line: the query and the options' values."""

    query: Query
    directory: str
    output_format: str
    quiet: bool


def plain(args: list[str]) -> Plain | None:
    """``args`` (the command line after ``kseg``) as a :class:`Plain` lookup, or None: click's to parse."""
    if not args or args[0] not in _QUERIES:
        return None
    positional: list[str] = []
    output_format, quiet = "text", False
    rest = iter(args[1:])
    for arg in rest:
        if arg in _QUIET:
            quiet = True
        elif arg == "--format":
            output_format = next(rest, "")
            if output_format not in _FORMATS:
                return None
        elif arg.startswith("--format="):
            output_format = arg[len("--format=") :]
            if output_format not in _FORMATS:
                return None
        elif arg.startswith("-") or not arg or "://" in arg:
            return None
        else:
            positional.append(arg)
    if len(positional) != 2:
        return None
    query = _QUERIES[args[0]](positional[0])
    return None if query is None else Plain(query, positional[1], output_format, quiet)


def run_plain(line: Plain) -> None:
    """Run a plain lookup as its click command would; raises ``Finished`` with the exit code."""
    from kseg.cli import ending
    from kseg.cli.decoder_names import resolve_decoder
    from kseg.cli.ending import Finished
    from kseg.runtime.run import start
    from kseg.storage.context import reading

    def command() -> int:
        run = start(line.quiet)
        with reading(run.context):
            string = resolve_decoder("string")  # (no --key-decoder, no --value-decoder: Kafka's default)
            return answer(run, line.directory, line.output_format, DEFAULT_MAX_MESSAGE_SIZE, string, string, line.query)

    code = ending.run_command(command)
    raise Finished(code)


def offset_query(offset: int) -> Query:
    """``lookup-offset OFFSET``'s query."""

    def query(log: Any) -> tuple:
        from kseg.ops.lookup.offset import lookup_offset as find
        from kseg.render.lookup import offset_reason, write_offset_text

        return find(log, offset), write_offset_text, offset_reason

    return query


def time_query(timestamp: int) -> Query:
    """``lookup-time TIMESTAMP``'s query."""

    def query(log: Any) -> tuple:
        from kseg.ops.lookup.time import lookup_time as find
        from kseg.render.lookup import time_reason, write_time_text

        return find(log, timestamp), write_time_text, time_reason

    return query


def _plain_offset(text: str) -> Query | None:
    """OFFSET written as plain decimal digits within a Java ``long`` (what ``int()`` reads alike), else None."""
    if not (text.isascii() and text.isdigit()) or len(text) > 19 or int(text) > INT64_MAX:
        return None
    return offset_query(int(text))


def _plain_time(text: str) -> Query | None:
    """TIMESTAMP as ``lookup-time`` reads it, else None (click says why)."""
    from kseg.timestamps import parse_timestamp

    try:
        return time_query(parse_timestamp(text, names=True))
    except ValueError:
        return None


_QUERIES: dict[str, Callable[[str], Query | None]] = {"lookup-offset": _plain_offset, "lookup-time": _plain_time}


def _where(path: str, store: Any) -> dict[str, str]:
    """The fields naming a partition in every lookup row: its log directory (absolute), its directory
    name, and the path as given (a path of ``store``)."""
    from kseg.storage.partition import Partition

    part = Partition(path, store=store)
    return {"logDir": part.log_dir, "partition": part.name, "path": path}


def answer(
    run: Run, directory: str, output_format: str, max_message_size: int, key: Any, value: Any, query: Query
) -> int:
    """Open the partition, run ``query(log)`` -> (result, text writer, reason), print; ``key`` and ``value``:
    the decoders of keys and payloads.  Returns the exit code."""
    from kseg.cli.decoder_names import kraft_text
    from kseg.errors import InputError, KsegError
    from kseg.limits import decompression_limit
    from kseg.ops.lookup.log import PartitionLog
    from kseg.render.text import TextSink
    from kseg.storage import files
    from kseg.storage.stores.discover import store_of

    out, err = run.out, run.err
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
