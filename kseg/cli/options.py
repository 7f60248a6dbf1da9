"""Reusable click option bundles (as sqlite-utils does) shared by kseg's commands, and :func:`start`, which makes
each command's :class:`~kseg.runtime.run.Run` (streams, ``--quiet``, the read policy) instead of module globals."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import click

from kseg.cli import parts
from kseg.cli.params import Int, RateType
from kseg.errors import KsegError
from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE, EXIT_ERROR, INT32_MAX
from kseg.runtime.run import Run, start
from kseg.valueclass import FrozenValue

if TYPE_CHECKING:
    from kseg.storage.outputs import Destination

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

format_option = parts.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: human/Kafka-compatible lines; json: one JSON object per line (JSON Lines).",
)

QUIET_HELP = "No progress display and no notes on stderr (errors still print)."
quiet_option = parts.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)

JOBS_HELP = (
    "Work on segments (partitions, where their state is carried across segments) in N processes; "
    "--max-rate is split between them."
)
jobs_option = parts.option("--jobs", "-j", type=Int(min=1), default=1, show_default=True, help=JOBS_HELP)

paths_argument = click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False))

DECODER_HELP = (
    "How {what} print: string (Kafka's default), hex, base64, json, registry (dump, lookups, export, grep: "
    "docs/schemas.md), or module:function; "
    "Kafka's {kafka} spelling works too."
)


def decoder_options(f: F) -> F:
    """``--key-decoder``/``--key-decoder-class`` and ``--value-decoder``/``--value-decoder-class``
    (Kafka's DumpLogSegments spellings), default None: each command says what "not given" means."""
    for name, what in (("value", "values (payloads)"), ("key", "keys")):
        f = parts.option(
            f"--{name}-decoder",
            f"--{name}-decoder-class",
            f"{name}_decoder",
            default=None,
            metavar="DECODER",
            help=DECODER_HELP.format(what=what, kafka=f"--{name}-decoder-class"),
        )(f)
    return f


#: ``--framing``: kseg.decoders.registry.framing.FRAMINGS' names (kept here: the CLI starts without it)
FRAMING_NAMES = ("confluent", "apicurio", "apicurio-content", "apicurio4", "apicurio4-content")


def schemas_options(f: F) -> F:
    """``--schemas SOURCE``, ``--schemas-context NAME`` and ``--framing NAME``: where ``--key-decoder
    registry`` / ``--value-decoder registry`` find their schemas and how the payloads name them
    (``kseg.decoders.registry``, docs/schemas.md)."""
    f = parts.option(
        "--framing",
        "framing",
        type=click.Choice(FRAMING_NAMES),
        default="confluent",
        metavar="NAME",
        help="With the registry decoder: how payloads carry their schema id: confluent (magic 0 + 4-byte "
        "id, magic 1 + GUID, __value_schema_id headers), or Apicurio's apicurio (apicurio.*.globalId "
        "headers, else magic 0 + 8-byte globalId), apicurio-content (contentId), apicurio4, "
        "apicurio4-content (4-byte ids) (docs/schemas.md).",
    )(f)
    f = parts.option(
        "--schemas-context",
        "schemas_context",
        default=".",
        metavar="NAME",
        help="The registry context whose schema ids the payloads carry (default: the default context, .).",
    )(f)
    return parts.option(
        "--schemas",
        "schemas",
        default=None,
        metavar="SOURCE",
        help="With the registry decoder: the registry's _schemas partition directory, a log dir holding "
        "_schemas-0, a directory of schema files, or a registry URL (http://...: read-only GETs) "
        "(default: _schemas-0 in or beside the data, if there).",
    )(f)


def validate_option(f: F) -> F:
    """``--validate`` (dump, the lookups, export): with the registry decoder, a key or payload not decoded,
    or a JSON Schema one not matching its schema, is a problem (docs/schemas.md)."""
    return parts.option(
        "--validate",
        is_flag=True,
        help="With the registry decoder: a key or payload not decoded, or a JSON one not matching its JSON "
        "Schema, is a problem (exit 1).",
    )(f)


MAX_RATE_HELP = "Read segments at most this fast, in MB/s (10^6 bytes)."
DROP_CACHE_HELP = (
    "Evict from the page cache the pages kseg's reads brought in (pages already cached stay): polite on a live broker."
)


def _needs_fadvise(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value and not hasattr(os, "posix_fadvise"):
        raise click.BadParameter("needs posix_fadvise (Linux)", param_hint="--drop-cache")
    return value


def io_options(f: F) -> F:
    """``--max-rate MB/s`` and ``--drop-cache`` (kseg.storage.read_policy), applied to every segment read."""
    f = parts.option("--drop-cache", is_flag=True, help=DROP_CACHE_HELP, callback=_needs_fadvise)(f)
    return parts.option("--max-rate", type=RateType(), default=None, metavar="MB/S", help=MAX_RATE_HELP)(f)


def run_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``-q``, ``--max-rate`` and ``--drop-cache`` (every command), handed to the command as one ``run``
    (:class:`Run`): no command takes an option it could ignore, and none reads a global."""

    @functools.wraps(f)
    def command(*args: Any, quiet: bool, max_rate: float | None, drop_cache: bool, **kwargs: Any) -> Any:
        from kseg.storage.context import reading

        run = start(quiet, max_rate, drop_cache)
        with reading(run.context):
            return f(*args, run=run, **kwargs)

    return quiet_option(io_options(command))


RSM_KEY_HELP = (
    "KEYPAIRID=FILE: the PEM private key (PKCS#8) of an RSA key pair of Aiven's tiered-storage plugin, for "
    "reading the segments it encrypted; repeatable (docs/tiered.md)."
)


def _rsm_keys(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    keys: dict[str, str] = {}
    for value in values:
        pair, sep, path = value.partition("=")
        if not sep or not pair or not path:
            raise click.BadParameter(f"expected KEYPAIRID=FILE, found {value!r}", param_hint="--rsm-key")
        keys[pair] = path
    return keys


def rsm_key_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--rsm-key KEYPAIRID=FILE`` (repeatable), read into the run's read context (under
    :func:`run_options`): the option of every command that reads segments' records."""

    @functools.wraps(f)
    def command(*args: Any, rsm_key: dict[str, str], run: Run, **kwargs: Any) -> Any:
        if not rsm_key:  # the run's context holds no keys already (and the key reader stays unloaded)
            return f(*args, run=run, **kwargs)
        from kseg.storage.context import reading
        from kseg.storage.private_keys import read_keys

        try:  # read now, once, through the bounded reader: exit 2 before anything runs (--spark ships it)
            keys = read_keys(rsm_key)
        except KsegError as exc:
            raise click.BadParameter(str(exc), param_hint="--rsm-key") from None
        with reading(run.context.with_keys(keys)) as context:
            return f(*args, run=run.replace(context=context), **kwargs)

    return parts.option("--rsm-key", multiple=True, metavar="KEYPAIRID=FILE", callback=_rsm_keys, help=RSM_KEY_HELP)(
        command
    )


SPARK_HELP = {
    "--spark": "Run as a PySpark job (pip install 'kseg[spark]').",
    "--master": "Spark master URL (default local[*]); only with --spark.",
    "--spark-conf": "Spark configuration, repeatable; only with --spark.",
    "--verbose": "With --spark: Spark's own log on stderr.",
}


def reword(command: click.Command, **helps: str) -> click.Command:
    """``command`` with the help of its options named in ``helps`` (by parameter name) replaced: a shared
    option whose meaning differs in this command says what it does here."""
    for param in command.params:
        if param.name in helps and isinstance(param, click.Option):
            param.help = helps[param.name]
    command.reworded = frozenset(helps)  # type: ignore[attr-defined]  # (tests/cli/test_options.py)
    return command


class Spark(FrozenValue):
    """``--spark``, ``--master``, ``--spark-conf``, ``--verbose`` as one value (:func:`spark_options`)."""

    _fields = ("on", "master", "conf", "verbose")
    on: bool
    master: str | None
    conf: tuple[str, ...]
    verbose: bool

    def __init__(
        self, on: bool = False, master: str | None = None, conf: tuple[str, ...] = (), verbose: bool = False
    ) -> None:
        self._set(on=on, master=master, conf=conf, verbose=verbose)

    def check(self, run: Run, *, local_verbose: bool = False) -> None:
        """An option that would do nothing is a usage error: the one error line, exit 2 -- not silence.
        ``local_verbose``: the command gives ``--verbose`` a meaning without ``--spark`` too."""
        if self.on:
            if run.max_rate or run.drop_cache:
                run.fail(
                    "--max-rate and --drop-cache pace this machine's reads; on Spark the "
                    "executors read (give them without --spark)"
                )
            return
        given = [
            name
            for name, value in (
                ("--master", self.master),
                ("--spark-conf", self.conf),
                ("--verbose", self.verbose and not local_verbose),
            )
            if value
        ]
        if given:
            run.fail(f"{' and '.join(given)} take{'s' * (len(given) == 1)} effect only with --spark")


def on_spark(spark: Spark, app: str, work: Callable[[Any], T]) -> T:
    """``work(session)`` on the Spark session started for ``--spark`` (``kseg.spark.session.started``, named
    ``kseg <app>``), stopped after; no pyspark or a session that cannot start is its one line, exit 2
    (``SparkSetupError``, a :class:`~kseg.errors.KsegError`: ``kseg.cli.ending.fatal``) (diff --roots, tiered)."""
    from kseg.spark.session import started

    with started(app, spark.master, spark.conf, verbose=spark.verbose) as session:
        return work(session.spark)


def spark_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--spark``, ``--master``, ``--spark-conf``, ``--verbose``: the one Spark bundle (verify-index,
    export, diff, logdir), handed to the command as one ``spark`` (:class:`Spark`; check it with
    :meth:`Spark.check`)."""

    @functools.wraps(f)
    def command(*args: Any, spark: bool, master: str | None, spark_conf: tuple, verbose: bool, **kwargs: Any) -> Any:
        return f(*args, spark=Spark(bool(spark), master, tuple(spark_conf), bool(verbose)), **kwargs)

    g: Callable[..., Any] = command
    g = parts.option("--verbose", is_flag=True, help=SPARK_HELP["--verbose"])(g)
    g = parts.option("--spark-conf", multiple=True, metavar="KEY=VALUE", help=SPARK_HELP["--spark-conf"])(g)
    g = parts.option("--master", default=None, help=SPARK_HELP["--master"])(g)
    return parts.option("--spark", is_flag=True, help=SPARK_HELP["--spark"])(g)


def int32_option(name: str, default: int, help: str, minimum: int = 0) -> Callable[[F], F]:
    """An option holding one of Kafka's ``int`` settings (``--max-bytes``, ``--index-interval-bytes``, ...)."""
    return parts.option(name, type=Int(min=minimum, max=INT32_MAX), default=default, show_default=True, help=help)


max_message_size_option = parts.option(
    "--max-message-size",
    type=Int(min=1, max=INT32_MAX),  # Kafka's message.max.bytes is an int
    default=DEFAULT_MAX_MESSAGE_SIZE,
    show_default=True,
    help="Size of the largest batch; also bounds decompression (8x this).",
)


def reading_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--max-message-size``, ``--format``, then :func:`run_options`: the bundle of the commands that read
    partitions' batches (txn, compaction), with ``--rsm-key`` (:func:`rsm_key_option`)."""
    return max_message_size_option(format_option(run_options(rsm_key_option(f))))


def json_report_options(rows: str) -> Callable[[F], F]:
    """``--report FILE`` (the JSON Lines ``rows`` also written to a local file) and ``--force``: the pair of
    the commands that print text and keep their rows (logdir, tiered)."""

    def decorate(f: F) -> F:
        report = parts.option(
            "--report",
            "report_path",
            type=click.Path(),
            help=f"Also write the JSON Lines rows ({rows}) to this local file, atomically.  Checked before any "
            "work; never inside an input.",
        )
        force = parts.option("--force", is_flag=True, help="Replace an existing --report file (atomically).")
        return report(force(f))

    return decorate


HELP = {"help_option_names": ["-h", "--help"]}  # every command's context settings


def capped_jobs(run: Run, requested: int) -> int:
    """``--jobs`` bounded by the CPU count and the descriptor limit (:func:`kseg.storage.workers.cap_jobs`),
    with a note when lowered."""
    if requested <= 1:
        return requested
    from kseg.storage.workers import cap_jobs

    jobs, why = cap_jobs(requested)
    if why is not None:
        run.note(f"--jobs {requested} lowered to {jobs}: {why}")
    return jobs


def clean_stale_output(run: Run, output: Destination) -> None:
    """Remove, with a note, the temporary files of ``output`` (``.<name>.<hex>.kseg-tmp`` beside it) a killed
    run left between the link and the rename of its atomic write (local paths only)."""
    from kseg.storage import location
    from kseg.storage.atomic import clean_stale

    if output.store.remote:
        return
    local = os.path.abspath(location.local_path(output.path))
    name = os.path.basename(local)
    run.removed(clean_stale(os.path.dirname(local), lambda target: target == name))


def reading_bar(run: Run, label: str, partitions: Iterable[Any], total: int | None = None) -> tuple[Any, BinaryIO]:
    """``(bar, out)``: a progress bar following the bytes the reader reads, inside each segment
    (``kseg.render.progress``: on a terminal's stderr unless ``--quiet``; None otherwise), and the stream
    that prints results above it.  ``total``: the bytes to read (default: every log of ``partitions``)."""
    from kseg.render import progress

    bar = progress.make(run.quiet, screen=True)
    if bar is None:
        return None, run.out
    if total is None:
        total = sum(seg.log_size() for part in partitions for seg in part.segments if seg.log)
    bar.reads(label, total, run.context.observers)
    return bar, bar.writer(run.out)


@contextmanager
def listing_status(run: Run, paths: Iterable[str]) -> Iterator[None]:
    """Inside the ``with``, the listing of ``paths`` shows its progress on stderr
    (:class:`kseg.render.progress.ListingStatus`, told by :mod:`kseg.storage.watch`): on a terminal's
    stderr unless ``--quiet``, removed when the listing ends; never on stdout."""
    from kseg.render import progress

    status = progress.listing(run.quiet, list(paths), screen=True)
    observers = run.context.observers
    before, observers.watcher = observers.watcher, status
    try:
        yield
    finally:
        observers.watcher = before
        if status is not None:
            status.close()


def partitions_or_fail(run: Run, paths: Iterable[str]) -> list[Any]:
    """The partitions under ``paths`` (:func:`kseg.storage.stores.find.discover`), its notes printed;
    nothing to read, or a path that cannot be read, is the one error line and exit 2.  A directory
    that cannot be listed is returned with ``error`` set, its error line printed: the caller skips it
    and exits 2 (:func:`listing_code`)."""
    from kseg.storage.partition import nothing_found, nothing_in
    from kseg.storage.stores.find import discover

    notes: list[str] = []
    try:
        with listing_status(run, paths):
            partitions = discover(list(paths), notes, run.context)
        if nothing_in(partitions):
            raise nothing_found(list(paths))
    except KsegError as exc:
        for text in notes:  # what was skipped, and why, before the error that nothing was read
            run.note(text)
        run.fail(exc)
    run.notes(notes)
    for part in partitions:
        if part.error is not None:  # a directory that cannot be listed: nothing of it is read (exit 2)
            run.error(part.error)
    return partitions


NOTE_IN_BLOCK = "  note: "  # a partition's note in its block of text


def each_partition(
    run: Run,
    paths: Iterable[str],
    label: str,
    analyse: Callable[[Any, Callable[[str], None]], Any],
    show: Callable[[Any, Callable[[str], None]], int],
) -> int:
    """Analyse each partition under ``paths`` (:func:`partitions_or_fail`) under a progress bar: ``analyse(part,
    write)`` -> a report (a :class:`KsegError` is that partition's error line, exit 2), ``show(report, write)``
    prints it and returns its exit code; ``write`` prints one line on stdout.  The run's exit code: the worst.

    A partition's notes (its text lines ``  note: ...``) print in its block when it is the only one; with
    more, each kind prints once after the last partition, with its count (:class:`kseg.render.notes.NoteGroups`:
    forty partitions of one log directory without a checkpoint are one line, not forty)."""
    from kseg.render.notes import NoteGroups
    from kseg.storage import files

    partitions = partitions_or_fail(run, paths)
    bar, out = reading_bar(run, label, partitions)
    notes = NoteGroups("partition") if len(partitions) > 1 else None
    current = [""]  # the partition being shown: the place of its notes

    def write(line: str) -> None:
        if notes is not None and line.startswith(NOTE_IN_BLOCK):
            notes.add(f"{current[0]}: {line[len(NOTE_IN_BLOCK) :]}")
            return
        out.write((line + "\n").encode("utf-8", "replace"))

    code = listing_code(partitions)
    try:
        for part in partitions:
            if part.error is not None:
                continue
            current[0] = files.display(part.path, store=part.store)
            try:
                report = analyse(part, write)
            except KsegError as exc:
                code = run.error(exc)
                continue
            code = max(code, show(report, write))
        if notes is not None:
            notes.write(out)
        out.flush()
    finally:
        if bar is not None:
            bar.close()
    return code


def listing_code(partitions: Iterable[Any]) -> int:
    """2 when a directory among ``partitions`` could not be listed (its error line printed by
    :func:`partitions_or_fail`), else 0: the exit code a run starts from."""
    return EXIT_ERROR if any(p.error is not None for p in partitions) else 0
