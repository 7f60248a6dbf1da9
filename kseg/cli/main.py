"""``kseg``: the command group.

Subcommands are imported only when run, so ``kseg --help`` and
``kseg --version`` load click and nothing heavier.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
from typing import Any

import click

from kseg import __version__
from kseg.cli import parts
from kseg.cli.ending import EXIT_INTERRUPTED, closed_stdout, error_exit, fatal, interrupted, run_command  # noqa: F401

# name -> (module, attribute, one-line help shown by `kseg --help`)
COMMANDS = {
    "dump": ("kseg.cli.dump", "dump", "Dump segment, index and snapshot files like kafka-dump-log.sh."),
    "verify-index": ("kseg.cli.verify", "verify_index", "Verify indexes and batches of partition directories."),
    "lookup-offset": ("kseg.cli.lookup", "lookup_offset", "Find the record at an offset, showing Kafka's read path."),
    "lookup-time": ("kseg.cli.lookup", "lookup_time", "Find the first record at or after a timestamp."),
    "grep": ("kseg.cli.grep", "grep", "Find records by key, value, header, time or producer (key-pruned)."),
    "export": ("kseg.cli.export", "export", "Export the records of segments as Parquet (locally or on Spark)."),
    "rebuild-index": ("kseg.cli.rebuild", "rebuild_index", "Rebuild .index/.timeindex/.txnindex as Kafka's recovery."),
    "salvage": (
        "kseg.cli.salvage",
        "salvage",
        "Every intact batch past a partition's damage, into a new partition directory.",
    ),
    "txn": ("kseg.cli.txn", "txn", "Transactions, last stable offset, hanging transactions, .txnindex audit."),
    "compaction": (
        "kseg.cli.compaction",
        "compaction",
        "Tombstones and control batches left, against delete.retention.ms.",
    ),
    "diff": ("kseg.cli.diff", "diff", "Compare replicas of a partition: first divergent offset, what each lacks."),
    "coordinator": (
        "kseg.cli.coordinator",
        "coordinator",
        "The __consumer_offsets / __transaction_state partition of a group or transactional id.",
    ),
    "metadata": (
        "kseg.cli.metadata",
        "metadata",
        "The cluster metadata image from __cluster_metadata-0, at any offset.",
    ),
    "logdir": ("kseg.cli.logdir", "logdir", "A broker's log directories: checkpoints, topic IDs, leader epochs."),
    "tiered": (
        "kseg.cli.tiered",
        "tiered",
        "Remote segments from __remote_log_metadata, reconciled with the store and a local log.",
    ),
}


@functools.cache  # (compiled for a help text only)
def _option_word() -> re.Pattern[str]:
    return re.compile(r"--?[A-Za-z0-9][A-Za-z0-9-]*")


_GLUE = "\u2011"  # a non-breaking hyphen, while a paragraph is wrapped


def _glued(text: str) -> str:
    return _option_word().sub(lambda m: m.group().replace("-", _GLUE), text)


class Formatter(click.HelpFormatter):
    """Click's help formatter, but an option named in a help text (``--value-decoder-class``) is never
    split at one of its hyphens when the text is wrapped."""

    def write_text(self, text: str) -> None:
        start = len(self.buffer)
        super().write_text(_glued(text))
        self._unglue(start)

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        start = len(self.buffer)
        from kseg.cli.params import named_bounds

        super().write_dl([(term, _glued(named_bounds(text))) for term, text in rows], col_max, col_spacing)
        self._unglue(start)

    def _unglue(self, start: int) -> None:
        self.buffer[start:] = [piece.replace(_GLUE, "-") for piece in self.buffer[start:]]


class Context(click.Context):
    """Every kseg command's context: help through :class:`Formatter`."""

    formatter_class = Formatter


class LazyGroup(parts.HelpOption, click.Group):
    """A group whose commands are imported on first use; help lists them from ``COMMANDS``."""

    context_class = Context

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str):
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        command = getattr(importlib.import_module(spec[0]), spec[1])
        command.context_class = Context
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][2]) for name in sorted(COMMANDS)])

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        """Parse the arguments; a Ctrl-C meanwhile is exit 130 as during the command (click would print
        ``Aborted!`` and exit 1)."""
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except KeyboardInterrupt:
            interrupted()
            raise  # not reached: interrupted() exits
        except click.UsageError as exc:  # kseg's own options (kseg --bogus)
            usage_error(exc, args)
            raise  # not reached unless click shows the help (``kseg`` alone)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        _check_uris(args)  # the whole command line, before any command runs
        ctx.meta[_ARGS] = list(args)  # for a usage error while the command's own options are parsed
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        """Run the command as every command runs (:func:`kseg.cli.ending.run_command`): Ctrl-C and a closed
        stdout end the run there, before click turns them into ``Aborted!`` or an exit code that would read
        as a verdict; click's own ends go on."""
        return run_command(
            lambda: self._parsed(ctx), (click.exceptions.Exit, click.exceptions.Abort, click.ClickException)
        )

    def _parsed(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # click's own: an unknown option or command, a missing argument, a bad value
            if exc.ctx is None or exc.ctx.command is self:  # the option parser's errors (a missing value)
                exc.ctx = _subcommand_context(ctx)  # name the group's context: the command's, which was parsed
            usage_error(exc)
            raise  # not reached unless click shows the help (``kseg`` alone)


_ARGS = "kseg.args"  # the command line after ``kseg``, kept in the group's context
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click 8.2+: a UsageError showing help


def usage_error(exc: click.UsageError, args: list[str] | None = None) -> None:
    """A usage error click found (every command's): one ``kseg: error:`` line on stderr naming the command
    and where its help is, exit 2 -- never click's multi-line ``Usage: ... Try ... Error: ...`` block.
    ``kseg`` alone (click's ``NoArgsIsHelpError``) returns: click shows the help, exit 2.  ``args``: the
    command line after ``kseg``, for an option given before its command (``kseg -q tiered``)."""
    if isinstance(exc, _NO_ARGS_IS_HELP):
        return
    path = exc.ctx.command_path if exc.ctx is not None else "kseg"
    what = " ".join(exc.format_message().split()).rstrip(".")  # (a suggestion list may span lines)
    if path != "kseg":
        error_exit(f"{path}: {what} (see '{path} --help')")
    command = _misplaced_option(exc, args or [])
    if command is None:
        error_exit(f"{what} (see 'kseg --help')")
    option = exc.option_name  # type: ignore[attr-defined]  # (a NoSuchOption: _misplaced_option)
    error_exit(f"{what}: options go after the command, 'kseg {command} {option} ...' (see 'kseg {command} --help')")


def _misplaced_option(exc: click.UsageError, args: list[str]) -> str | None:
    """The command named later in ``args`` that has the unknown option ``kseg`` was given, if any."""
    if not isinstance(exc, click.NoSuchOption):
        return None
    name = next((a for a in args if a in COMMANDS), None)
    if name is None:
        return None
    command = cli.get_command(click.Context(cli), name)
    has = command is not None and any(exc.option_name in (*p.opts, *p.secondary_opts) for p in command.params)
    return name if has else None


def _subcommand_context(ctx: click.Context) -> click.Context:
    """A context naming the command being parsed (``kseg dump``), for an error raised while parsing it."""
    name = next((w for w in ctx.meta.get(_ARGS, ()) if w in COMMANDS), None)
    if name is None:
        return ctx
    command = cli.get_command(ctx, name)
    return click.Context(command, info_name=name, parent=ctx) if command is not None else ctx


def _check_uris(args: list[str]) -> None:
    """Every URI on the command line (an argument or an option's value) checked before the command
    runs: one carrying credentials, or malformed, is the one error line and exit 2 -- before any output
    could echo it (``Dumping s3://KEY:SECRET@...``)."""
    values = [arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg for arg in args if "://" in arg]
    uris = [part for value in values for part in value.split(",")]  # dump --files A,B
    if not uris:  # (kseg --help loads no storage module)
        return
    from kseg.errors import KsegError, error_line
    from kseg.limits import EXIT_ERROR
    from kseg.storage import location
    from kseg.storage.stores.discover import store_of

    for value in uris:
        if store_of(value).remote:
            try:
                location.check_uri(value)
            except KsegError as exc:
                click.echo(error_line(exc), err=True)
                sys.exit(EXIT_ERROR)


def _version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """``--version``: kseg's version, the Kafka releases whose dump output it reproduces
    (``dump --kafka-version``), the registry decoder's Avro reader (``avro reader: c`` or ``avro reader:
    python (why)``) and the engine that runs (``engine: c`` or ``engine: python (why)``), last."""
    if not value or ctx.resilient_parsing:
        return
    from kseg import avro_engine, engine
    from kseg.format import v2_records  # noqa: F401 - compares the engine's constants (engine.check)
    from kseg.format.releases import LATEST, supported_range

    click.echo(
        f"kseg, version {__version__}\n"
        f"kafka dump output: {supported_range()} (default {LATEST.lines[-1]})\n"
        f"avro reader: {avro_engine.description()}\n"
        f"engine: {engine.description()}"
    )
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@parts.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_version,
    help="Show the version and which engine runs, and exit.",
)
def cli() -> None:
    """Read Apache Kafka log segments: dump them as Kafka's tool does, verify
    and rebuild their indexes, and find records by offset or time.

    Exit codes: dump 0 (every file read to its end), 1 (a file could not be
    read past corruption), 2 (usage error or unreadable file); verification
    commands 0 clean, 1 problems found, 2 usage or I/O error.  Every
    command: 130 when interrupted (Ctrl-C); killed by SIGPIPE (the shell
    shows 141) when stdout is closed early, e.g. by `| head`.
    """


def main() -> None:
    """Console-script entry point."""
    try:
        cli.main(prog_name="kseg")
    except KeyboardInterrupt:  # outside a command (while parsing arguments, or exiting)
        interrupted()
    except BrokenPipeError:
        closed_stdout()
