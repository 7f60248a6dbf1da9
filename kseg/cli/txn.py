"""``kseg txn``: transactions, last stable offset, hanging transactions and the ``.txnindex`` audit."""

from __future__ import annotations

import re
import sys

import click

from kseg.cli.options import (
    binary_streams,
    error,
    fail,
    format_option,
    io_options,
    listing_code,
    max_message_size_option,
    partitions_or_fail,
    quiet_option,
    reading_bar,
    reference_time,
)
from kseg.limits import INT64_MAX, decompression_limit

_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|min|h|d)?\s*\Z")
_UNIT_MS = {None: 1, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def parse_duration(text: str) -> int:
    """``900000``, ``900s``, ``15m``, ``1h``, ``2d`` to milliseconds (a bare number is milliseconds)."""
    m = _DURATION.match(text)
    if not m:
        raise click.BadParameter(f"{text!r} is not a duration (examples: 900000, 900s, 15m, 1h, 2d)")
    ms = float(m.group(1)) * _UNIT_MS[m.group(2)]
    if not ms <= INT64_MAX:  # Kafka's durations are longs (and inf/nan are none)
        raise click.BadParameter(f"{text!r} is beyond a 64-bit count of milliseconds")
    return int(ms)


class Duration(click.ParamType):
    name = "DURATION"

    def convert(self, value, param, ctx):
        return value if isinstance(value, int) else parse_duration(value)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True, type=click.Path(readable=False))
@click.option(
    "--from-start",
    is_flag=True,
    help="Rebuild producer state from the first segment (default: from the latest valid .snapshot, "
    "as Kafka's recovery does); audits every .txnindex.",
)
@click.option(
    "--hanging-after",
    type=Duration(),
    default="15m",
    show_default=True,
    help="An open transaction older than this against the partition's latest timestamp is hanging "
    "(default: Kafka's transaction.max.timeout.ms).",
)
@click.option(
    "--at",
    "at",
    default=None,
    metavar="TIME",
    help="Measure ages against this time (epoch ms, ISO-8601 or 'now') instead of the partition's "
    "latest batch timestamp.",
)
@max_message_size_option
@format_option
@quiet_option
@io_options
def txn(paths, from_start, hanging_after, at, max_message_size, output_format, quiet, max_rate, drop_cache) -> None:
    """Transactions of partition directories (or log roots): every transaction with its
    producer, offsets, records, outcome and marker; the last stable offset and what holds
    it; hanging transactions with the kafka-transactions.sh command that aborts them; and
    every .txnindex checked against the ABORT markers.

    \b
    Exit codes:
      0  no hanging transaction, every .txnindex checked is right
      1  a hanging transaction, a .txnindex problem, a snapshot that disagrees
         with the log, or a segment not read past a corrupt or partial batch
      2  usage error, or a file could not be read (the OS's reason)
    """
    from kseg.errors import KsegError
    from kseg.jsonlines import dumps
    from kseg.ops.txn.txn import analyse
    from kseg.render import txn as render

    out, err = binary_streams()
    at_ms = reference_time(at)

    def write(line: str) -> None:
        out.write((line + "\n").encode("utf-8", "replace"))

    from kseg.storage import files


    for path in paths:
        try:
            is_file = files.isfile(path)
        except KsegError as exc:
            fail(err, exc)
        if is_file:
            fail(err, f"{path}: a file; txn takes partition directories or log roots (transactions span segments)")
    partitions = partitions_or_fail(err, paths)
    bar, out = reading_bar("txn", partitions, out)
    code = listing_code(partitions)
    try:
        for part in partitions:
            if part.error is not None:
                continue
            if output_format == "json":

                def on_txn(t, name=part.name):
                    write(dumps(render.transaction_row(name, t)))
            else:

                def on_txn(t):
                    write(render.transaction_line(t))

            try:
                report = analyse(
                    part,
                    from_start=from_start,
                    hanging_after_ms=hanging_after,
                    limit=decompression_limit(max_message_size),
                    on_transaction=on_txn,
                    at=at_ms,
                    on_start=(lambda r: write(render.header_line(r))) if output_format == "text" else None,
                )
            except KsegError as exc:
                code = error(err, exc)
                continue
            if output_format == "json":
                lines = render.render_report_json(report)
            else:
                lines = render.render_report_text(report)
            for line in lines:
                write(line)
            for read in report.reads:
                if not read.complete:
                    error(err, read.describe())
            code = max(code, report.exit_code)
        out.flush()
    finally:
        if bar is not None:
            bar.close()
    sys.exit(code)
