"""``kseg``: the command group.

Subcommands are imported only when run, so ``kseg --help`` and
``kseg --version`` load click and nothing heavier.
"""

from __future__ import annotations

import importlib
import sys

import click

from kseg import __version__

# name -> (module, attribute, one-line help shown by `kseg --help`)
COMMANDS = {
    "dump": ("kseg.cli.dump", "dump", "Dump segment, index and snapshot files like kafka-dump-log.sh."),
    "verify-index": ("kseg.cli.verify", "verify_index", "Verify indexes and batches of partition directories."),
    "lookup-offset": ("kseg.cli.lookup", "lookup_offset", "Find the record at an offset, showing Kafka's read path."),
    "lookup-time": ("kseg.cli.lookup", "lookup_time", "Find the first record at or after a timestamp."),
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


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kseg")
def cli() -> None:
    """Read Apache Kafka log segments: dump them as Kafka's tool does, verify
    and rebuild their indexes, and find records by offset or time.

    Exit codes: dump 0 (every file read to its end), 1 (a file could not be
    read past corruption), 2 (usage error or unreadable file); verification
    commands 0 clean, 1 problems found, 2 usage or I/O error.
    """


def main() -> None:
    """Console-script entry point."""
    try:
        cli.main(prog_name="kseg")
    except KeyboardInterrupt:  # pragma: no cover - interactive
        sys.stderr.write("kseg: interrupted\n")
        sys.exit(130)
