"""``kseg compaction``: tombstones and control batches still present, against ``delete.retention.ms``."""

from __future__ import annotations

import sys
import time

import click

from kseg.cli.options import (
    binary_streams,
    error,
    format_option,
    io_options,
    listing_code,
    max_message_size_option,
    partitions_or_fail,
    quiet_option,
    reading_bar,
    reference_time,
)
from kseg.cli.txn import Duration
from kseg.limits import decompression_limit


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False))
@click.option(
    "--delete-retention",
    "delete_retention",
    type=Duration(),
    default="1d",
    show_default=True,
    help="The topic's delete.retention.ms (Kafka's default: 1 day).",
)
@click.option(
    "--at",
    "at",
    default=None,
    metavar="TIME",
    help="Reference time for ages and horizons: epoch ms or ISO-8601 (default: now).",
)
@max_message_size_option
@format_option
@quiet_option
@io_options
def compaction(paths, delete_retention, at, max_message_size, output_format, quiet, max_rate, drop_cache) -> None:
    """Tombstones (key, null value) and control batches (transaction markers) still
    in partition directories, per segment: how many, how old against
    delete.retention.ms, and the delete horizon that v2 batches carry once the
    log cleaner has seen them (KIP-534): past it, the next cleaning removes them.

    \b
    Exit codes:
      0  every segment read to its end (docs/robustness.md: outcomes)
      1  a segment could not be read past a corrupt or partial batch
      2  usage error, or a file could not be read (the OS's reason)
    """
    from kseg.errors import KsegError
    from kseg.jsonlines import dumps
    from kseg.ops.compaction.compaction import analyse
    from kseg.render import compaction as render
    from kseg.storage.outcome import exit_code

    out, err = binary_streams()
    at_ms = reference_time(at)
    if at_ms is None:
        at_ms = int(time.time() * 1000)
    partitions = partitions_or_fail(err, paths)
    bar, out = reading_bar("compaction", partitions, out)
    code = listing_code(partitions)
    try:
        for part in partitions:
            if part.error is not None:
                continue
            try:
                report = analyse(part, at_ms, delete_retention, limit=decompression_limit(max_message_size))
            except KsegError as exc:
                code = error(err, exc)
                continue
            if output_format == "json":
                lines = [dumps(render.segment_row(report, s)) for s in report.segments]
                lines.append(dumps(render.summary_row(report)))
            else:
                lines = render.text_lines(report)
            for s in report.segments:
                if not s.read.complete:
                    error(err, s.read.describe())
            code = max(code, exit_code(s.read for s in report.segments))
            out.write(("\n".join(lines) + "\n").encode("utf-8", "replace"))
        out.flush()
    finally:
        if bar is not None:
            bar.close()
    sys.exit(code)
