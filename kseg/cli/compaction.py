"""``kseg compaction``: tombstones and control batches still present, against ``delete.retention.ms``."""

from __future__ import annotations

import sys
import time
from typing import Any

from kseg.cli import parts
from kseg.cli.options import HELP, Run, each_partition, paths_argument, reading_options
from kseg.cli.params import Duration, reference_time
from kseg.limits import decompression_limit


@parts.command(context_settings=HELP)
@paths_argument
@parts.option(
    "--delete-retention",
    "delete_retention",
    type=Duration(),
    default="1d",
    show_default=True,
    help="The topic's delete.retention.ms (Kafka's default: 1 day).",
)
@parts.option(
    "--at",
    "at",
    default=None,
    metavar="TIME",
    help="Reference time for ages and horizons: epoch ms or ISO-8601 (default: now).",
)
@reading_options
def compaction(
    paths: tuple[str, ...], delete_retention: int, at: str | None, max_message_size: int, output_format: str, run: Run
) -> None:
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
    from kseg.jsonlines import dumps
    from kseg.ops.compaction.compaction import CompactionReport, analyse
    from kseg.render import compaction as render
    from kseg.storage.outcome import exit_code

    at_ms = reference_time(at)
    if at_ms is None:
        at_ms = int(time.time() * 1000)
    limit = decompression_limit(max_message_size)

    def show(report: CompactionReport, write: Any) -> int:
        if output_format == "json":
            lines = [dumps(render.segment_row(report, s)) for s in report.segments]
            lines.append(dumps(render.summary_row(report)))
        else:
            lines = render.text_lines(report)
        reads = [s.read for s in report.segments if s.read is not None]
        for read in reads:
            if not read.complete:
                run.error(read.describe())
        for line in lines:
            write(line)
        return exit_code(reads)

    code = each_partition(
        run, paths, "compaction", lambda part, _write: analyse(part, at_ms, delete_retention, limit=limit), show
    )
    sys.exit(code)
