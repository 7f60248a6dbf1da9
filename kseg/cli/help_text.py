"""``kseg --help``'s text as click renders it on a terminal of 80 columns or more (or no terminal).

``kseg --help`` is answered from here without importing click and the command group (about a third of
its start-up); any other command line, and ``--help`` on a narrower terminal, where click wraps to
its width, goes through click.  ``tests/cli/test_help_cache.py`` renders the help with click in a
real process and fails on any difference; ``python3 -m kseg.cli.help_text`` writes this file again.
"""

from __future__ import annotations

#: the narrowest terminal that click renders this text for (click.formatting: ``min(columns, 80) - 2``)
COLUMNS = 80

TEXT = """\
Usage: kseg [OPTIONS] COMMAND [ARGS]...

  Read Apache Kafka log segments: dump them as Kafka's tool does, verify and
  rebuild their indexes, and find records by offset or time.

  Exit codes: dump 0 (every file read to its end), 1 (a file could not be read
  past corruption), 2 (usage error or unreadable file); verification commands
  0 clean, 1 problems found, 2 usage or I/O error.  Every command: 130 when
  interrupted (Ctrl-C); killed by SIGPIPE (the shell shows 141) when stdout is
  closed early, e.g. by `| head`.

Options:
  --version   Show the version and which engine runs, and exit.
  -h, --help  Show this message and exit.

Commands:
  compaction     Tombstones and control batches left, against
                 delete.retention.ms.
  coordinator    The __consumer_offsets / __transaction_state partition of a
                 group or transactional id.
  diff           Compare replicas of a partition: first divergent offset, what
                 each lacks.
  dump           Dump segment, index and snapshot files like
                 kafka-dump-log.sh.
  export         Export the records of segments as Parquet (locally or on
                 Spark).
  grep           Find records by key, value, header, time or producer
                 (key-pruned).
  logdir         A broker's log directories: checkpoints, topic IDs, leader
                 epochs.
  lookup-offset  Find the record at an offset, showing Kafka's read path.
  lookup-time    Find the first record at or after a timestamp.
  metadata       The cluster metadata image from __cluster_metadata-0, at any
                 offset.
  rebuild-index  Rebuild .index/.timeindex/.txnindex as Kafka's recovery.
  salvage        Every intact batch past a partition's damage, into a new
                 partition directory.
  tiered         Remote segments from __remote_log_metadata, reconciled with
                 the store and a local log.
  txn            Transactions, last stable offset, hanging transactions,
                 .txnindex audit.
  verify-index   Verify indexes and batches of partition directories.
"""


def rendered() -> str:
    """What click prints for ``kseg --help`` in this process (stdout captured, the terminal's width as
    ``shutil.get_terminal_size`` gives it)."""
    import contextlib
    import io
    import sys

    from kseg.cli.main import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            cli.main(["--help"], prog_name="kseg")
        except SystemExit:
            pass
    sys.stdout.flush()
    return out.getvalue()


if __name__ == "__main__":  # pragma: no cover - rewrites this file from click's rendering
    import os

    text = rendered()
    here = os.path.abspath(__file__)
    with open(here, encoding="utf-8") as f:
        source = f.read()
    start = source.index('TEXT = """\\\n') + len('TEXT = """\\\n')
    end = source.index('"""\n', start)
    with open(here, "w", encoding="utf-8") as f:
        f.write(source[:start] + text.replace("\\", "\\\\") + source[end:])
