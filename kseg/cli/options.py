"""Reusable click option bundles (as sqlite-utils does) shared by kseg's commands."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from kseg.errors import KsegError, error_line
from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE, EXIT_ERROR, INT32_MAX

format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: human/Kafka-compatible lines; json: one JSON object per line (JSON Lines).",
)

QUIET_HELP = "No progress display and no notes on stderr (errors still print)."
_quiet = [False]


def _set_quiet(ctx, param, value):
    _quiet[0] = bool(value)
    return value


quiet_option = click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP, callback=_set_quiet)


def is_quiet() -> bool:
    """Was ``--quiet`` given to the command running?"""
    return _quiet[0]


JOBS_HELP = "Work on segments (partitions, where their state is carried across segments) in N processes."
jobs_option = click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True, help=JOBS_HELP)


def capped_jobs(err, requested: int) -> int:
    """``--jobs`` bounded by the CPU count and the descriptor limit (:func:`kseg.storage.workers.cap_jobs`),
    with a note when lowered."""
    if requested <= 1:
        return requested
    from kseg.storage.workers import cap_jobs

    jobs, why = cap_jobs(requested)
    if why is not None:
        note(err, f"--jobs {requested} lowered to {jobs}: {why}")
    return jobs


def clean_stale_output(err, path: str) -> None:
    """Remove, with a note, the temporary files of ``path`` (``.<name>.<hex>.kseg-tmp`` beside it) a killed
    run left between the link and the rename of its atomic write (local paths only)."""
    import os

    from kseg.storage import location
    from kseg.storage.atomic import clean_stale

    if location.is_remote(path):
        return
    local = os.path.abspath(location.local_path(path))
    name = os.path.basename(local)
    removed = clean_stale(os.path.dirname(local), lambda target: target == name)
    if removed:
        note(
            err,
            f"removed {len(removed)} temporary file{'s' * (len(removed) != 1)} an interrupted kseg run "
            f"left: {', '.join(removed)}",
        )


DECODER_HELP = (
    "How {what} print: string (Kafka's default), hex, base64, json, or module:function; "
    "Kafka's {kafka} spelling works too."
)


def decoder_options(f):
    """``--key-decoder``/``--key-decoder-class`` and ``--value-decoder``/``--value-decoder-class``
    (Kafka's DumpLogSegments spellings), default None: each command says what "not given" means."""
    f = click.option(
        "--value-decoder",
        "--value-decoder-class",
        "value_decoder",
        default=None,
        metavar="DECODER",
        help=DECODER_HELP.format(what="values (payloads)", kafka="--value-decoder-class"),
    )(f)
    f = click.option(
        "--key-decoder",
        "--key-decoder-class",
        "key_decoder",
        default=None,
        metavar="DECODER",
        help=DECODER_HELP.format(what="keys", kafka="--key-decoder-class"),
    )(f)
    return f


MAX_RATE_HELP = (
    "Read segments at most this fast, in MB/s (10^6 bytes; split between --jobs processes); 0.01 to 1000000."
)
MIN_RATE, MAX_RATE = 0.01, 1e6  # 10 kB/s (an 8 MiB read window then takes 14 min) .. 1 TB/s


class RateType(click.FloatRange):
    """``--max-rate``: a finite number of MB/s within [MIN_RATE, MAX_RATE] (FloatRange lets nan through)."""

    def __init__(self) -> None:
        super().__init__(min=MIN_RATE, max=MAX_RATE)

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if rv != rv:
            self.fail(f"{value!r} is not a number", param, ctx)
        return rv


DROP_CACHE_HELP = (
    "Evict from the page cache the pages kseg's reads brought in (pages already cached stay): polite on a live broker."
)
_io = {"max_rate": None, "drop_cache": False}


def _set_io(ctx, param, value):
    _io[param.name] = value
    if param.name == "drop_cache" and value and not hasattr(__import__("os"), "posix_fadvise"):
        raise click.BadParameter("needs posix_fadvise (Linux)", param_hint="--drop-cache")
    from kseg.storage import read_policy

    read_policy.configure(_io["max_rate"] and _io["max_rate"] * 1e6, bool(_io["drop_cache"]))
    return value


def io_options(f):
    """``--max-rate MB/s`` and ``--drop-cache`` (kseg.storage.read_policy), applied to every segment read."""
    f = click.option("--drop-cache", is_flag=True, help=DROP_CACHE_HELP, callback=_set_io)(f)
    f = click.option("--max-rate", type=RateType(), default=None, metavar="MB/S", help=MAX_RATE_HELP, callback=_set_io)(
        f
    )
    return f


SPARK_HELP = {
    "--spark": "Run as a PySpark job (pip install 'kseg[spark]').",
    "--master": "Spark master URL (default local[*]); only with --spark.",
    "--spark-conf": "Spark configuration, repeatable; only with --spark.",
    "--verbose": "With --spark: Spark's own log on stderr (and, for verify-index, clean segments too).  "
    "verify-index: every note under its segment (else one line per kind of note).",
}


def spark_options(f):
    """``--spark``, ``--master``, ``--spark-conf``, ``--verbose``: the one Spark bundle (verify-index,
    export, diff).  Check them with :func:`check_spark`."""
    f = click.option("--verbose", is_flag=True, help=SPARK_HELP["--verbose"])(f)
    f = click.option("--spark-conf", multiple=True, metavar="KEY=VALUE", help=SPARK_HELP["--spark-conf"])(f)
    f = click.option("--master", default=None, help=SPARK_HELP["--master"])(f)
    f = click.option("--spark", is_flag=True, help=SPARK_HELP["--spark"])(f)
    return f


def check_spark(spark: bool, master, spark_conf, verbose: bool, *, local_verbose: bool = False) -> None:
    """An option that would do nothing is a usage error: the one error line, exit 2 -- not silence.
    ``local_verbose``: the command gives ``--verbose`` a meaning without ``--spark`` too."""
    if spark:
        if _io["max_rate"] or _io["drop_cache"]:
            fail(
                binary_streams()[1],
                "--max-rate and --drop-cache pace this machine's reads; on Spark the "
                "executors read (give them without --spark)",
            )
        return
    given = [
        name
        for name, value in (
            ("--master", master),
            ("--spark-conf", spark_conf),
            ("--verbose", verbose and not local_verbose),
        )
        if value
    ]
    if given:
        fail(binary_streams()[1], f"{' and '.join(given)} take{'s' * (len(given) == 1)} effect only with --spark")


max_message_size_option = click.option(
    "--max-message-size",
    type=click.IntRange(min=1, max=INT32_MAX),  # Kafka's message.max.bytes is an int
    default=DEFAULT_MAX_MESSAGE_SIZE,
    show_default=True,
    help="Size of the largest batch; also bounds decompression (8x this).",
)


def fail(err, problem: "KsegError | str", code: int = EXIT_ERROR) -> NoReturn:
    """Print the one error line every command prints (``kseg: error: ...``) and exit (2: never a verdict)."""
    err.write((error_line(problem) + "\n").encode("utf-8", "replace"))
    err.flush()
    sys.exit(code)


def error(err, problem: "KsegError | str") -> int:
    """Print the one error line (``kseg: error: <file>: at byte N: <what>``) and go on; returns 2 (I/O)
    for the caller that counts it.  Every command's error lines come from here or :func:`fail`."""
    say(err, error_line(problem))
    return EXIT_ERROR


def say(err, text: str) -> None:
    """One line on stderr (a note, or an error the run goes on after)."""
    err.write((text + "\n").encode("utf-8", "replace"))
    err.flush()


def note(err, text: str) -> None:
    """``kseg: note: TEXT`` on stderr, unless ``--quiet``."""
    if not _quiet[0]:
        say(err, f"kseg: note: {text}")


def notes_grouped(err, notes: list[str]) -> None:
    """The notes on stderr, one line per kind (``kseg.render.notes``): forty ``*-delete`` directories
    skipped are one line with their count and the first few paths; nothing with ``--quiet``."""
    if _quiet[0] or not notes:
        return
    from kseg.render.notes import NoteGroups

    groups = NoteGroups("path")
    for text in notes:
        groups.add(text)
    for text in groups.texts():
        note(err, text)


def reading_bar(label: str, partitions, out, total: int | None = None):
    """``(bar, out)``: a progress bar following the bytes the reader reads, inside each segment
    (``kseg.render.progress``: on a terminal's stderr unless ``--quiet``; None otherwise), and ``out``
    as the stream that prints results above it.  ``total``: the bytes to read (default: every log of
    ``partitions``)."""
    from kseg.render import progress

    bar = progress.make(_quiet[0], screen=True)
    if bar is None:
        return None, out
    if total is None:
        total = sum(seg.log_size() for part in partitions for seg in part.segments if seg.log)
    bar.reads(label, total)
    return bar, bar.writer(out)


def partitions_or_fail(err, paths) -> list:
    """The partitions under ``paths`` (:func:`kseg.storage.partition.discover`), its notes printed;
    nothing to read, or a path that cannot be read, is the one error line and exit 2.  A directory
    that cannot be listed is returned with ``error`` set, its error line printed: the caller skips it
    and exits 2 (:func:`listing_code`)."""
    from kseg.storage.partition import discover, nothing_found, nothing_in

    notes: list[str] = []
    try:
        partitions = discover(list(paths), notes)
        if nothing_in(partitions):
            raise nothing_found(list(paths))
    except KsegError as exc:
        for text in notes:  # what was skipped, and why, before the error that nothing was read
            note(err, text)
        fail(err, exc)
    notes_grouped(err, notes)
    for part in partitions:
        if part.error is not None:  # a directory that cannot be listed: nothing of it is read (exit 2)
            error(err, part.error)
    return partitions


def listing_code(partitions) -> int:
    """2 when a directory among ``partitions`` could not be listed (its error line printed by
    :func:`partitions_or_fail`), else 0: the exit code a run starts from."""
    return EXIT_ERROR if any(p.error is not None for p in partitions) else 0


def binary_streams():
    """stdout and stderr as binary streams (the click-testing runner's too).

    ``sys.stdout.buffer`` rather than ``click.get_binary_stream`` (deprecated in click 8.5)."""
    return _binary(sys.stdout), _binary(sys.stderr)


def _binary(stream):
    return getattr(stream, "buffer", stream)


def reference_time(text: str | None) -> int | None:
    """``--at``: None (the latest batch timestamp), ``now``, epoch ms or ISO-8601."""
    if text is None:
        return None
    if text.strip().lower() == "now":
        import time

        return int(time.time() * 1000)
    from kseg.timestamps import parse_timestamp

    try:
        return parse_timestamp(text, names=False)
    except ValueError as exc:
        message = str(exc)
        if "give" in message:  # what is accepted: now too
            message = f"{text!r}: give epoch milliseconds, ISO-8601 with a zone (2024-10-27T03:33:20.100Z) or now"
        raise click.BadParameter(message, param_hint="--at") from None
