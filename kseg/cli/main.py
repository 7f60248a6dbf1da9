"""``kseg``: the command group.

Subcommands are imported only when run, so ``kseg --help`` and
``kseg --version`` load click and nothing heavier.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

import click

from kseg import __version__

# name -> (module, attribute, one-line help shown by `kseg --help`)
COMMANDS = {
    "dump": ("kseg.cli.dump", "dump", "Dump segment, index and snapshot files like kafka-dump-log.sh."),
    "verify-index": ("kseg.cli.verify", "verify_index", "Verify indexes and batches of partition directories."),
    "lookup-offset": ("kseg.cli.lookup", "lookup_offset", "Find the record at an offset, showing Kafka's read path."),
    "lookup-time": ("kseg.cli.lookup", "lookup_time", "Find the first record at or after a timestamp."),
    "export": ("kseg.cli.export", "export", "Export the records of segments as Parquet (locally or on Spark)."),
    "rebuild-index": ("kseg.cli.rebuild", "rebuild_index", "Rebuild .index/.timeindex/.txnindex as Kafka's recovery."),
    "txn": ("kseg.cli.txn", "txn", "Transactions, last stable offset, hanging transactions, .txnindex audit."),
    "compaction": ("kseg.cli.compaction", "compaction", "Tombstones and control batches left, against delete.retention.ms."),
    "diff": ("kseg.cli.diff", "diff", "Compare replicas of a partition: first divergent offset, what each lacks."),
}


class LazyGroup(click.Group):
    """A group whose commands are imported on first use; help lists them from ``COMMANDS``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str):
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        return getattr(importlib.import_module(spec[0]), spec[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][2]) for name in sorted(COMMANDS)])

    def invoke(self, ctx: click.Context):
        """Run the command; Ctrl-C and a closed stdout end the run here, before click turns them into
        ``Aborted!`` or an exit code that would read as a verdict."""
        if os.environ.get("KSEG_ENGINE"):  # kseg.engine is imported only when asked for (fast start)
            from kseg import engine
            from kseg.limits import EXIT_ERROR

            problem = engine.require()
            if problem is not None:
                click.echo(f"kseg: error: {problem}", err=True)
                sys.exit(EXIT_ERROR)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            interrupted()
        except BrokenPipeError:
            closed_stdout()


EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command ended by Ctrl-C


def interrupted() -> None:
    """Ctrl-C: one line on stderr, exit 130 -- never 1 ("problems found") or 0."""
    try:
        sys.stderr.write("kseg: interrupted\n")
        sys.stderr.flush()
    except OSError:
        pass
    _quiet_stdout()
    sys.exit(EXIT_INTERRUPTED)


def closed_stdout() -> None:
    """The reader of stdout went away (``kseg verify-index tree | head -1``): end quietly, killed by
    SIGPIPE as git and C tools are (the shell shows 141), so the exit status is never taken for a
    verdict.  Python ignores SIGPIPE (writes raise ``BrokenPipeError`` instead); restore the default
    and raise it (exit 141 should the signal not end the process)."""
    _quiet_stdout()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    sys.exit(128 + signal.SIGPIPE)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail with a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """``--version``: kseg's version, the Kafka releases whose dump output it reproduces
    (``dump --kafka-version``) and the engine that runs (``engine: c`` or ``engine: python (why)``)."""
    if not value or ctx.resilient_parsing:
        return
    from kseg import engine
    from kseg.format.releases import LATEST, supported_range

    click.echo(f"kseg, version {__version__}\n"
               f"kafka dump output: {supported_range()} (default {LATEST.lines[-1]})\n"
               f"engine: {engine.description()}")
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_version,
              help="Show the version and which engine runs, and exit.")
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
