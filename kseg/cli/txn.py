"""``kseg txn``: transactions, last stable offset, hanging transactions and the ``.txnindex`` audit."""

from __future__ import annotations

import sys
from typing import Any

from kseg.cli import parts
from kseg.cli.options import HELP, Run, each_partition, paths_argument, reading_options
from kseg.cli.params import Duration, reference_time
from kseg.errors import KsegError
from kseg.limits import decompression_limit
from kseg.storage.stores.discover import store_of


@parts.command(context_settings=HELP)
@paths_argument
@parts.option(
    "--from-start",
    is_flag=True,
    help="Rebuild producer state from the first segment (default: from the latest valid .snapshot, "
    "as Kafka's recovery does); audits every .txnindex.",
)
@parts.option(
    "--hanging-after",
    type=Duration(),
    default="15m",
    show_default=True,
    help="An open transaction older than this against the partition's latest timestamp is hanging "
    "(default: Kafka's transaction.max.timeout.ms).",
)
@parts.option(
    "--at",
    "at",
    default=None,
    metavar="TIME",
    help="Measure ages against this time (epoch ms, ISO-8601 or 'now') instead of the partition's "
    "latest batch timestamp.",
)
@reading_options
def txn(
    paths: tuple[str, ...],
    from_start: bool,
    hanging_after: int,
    at: str | None,
    max_message_size: int,
    output_format: str,
    run: Run,
) -> None:
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
    from kseg.jsonlines import dumps
    from kseg.ops.txn.txn import TxnReport, analyse
    from kseg.render import txn as render
    from kseg.storage import files

    at_ms = reference_time(at)
    for path in paths:
        try:
            is_file = files.isfile(path, store=store_of(path))
        except KsegError as exc:
            run.fail(exc)
        if is_file:
            run.fail(f"{path}: a file; txn takes partition directories or log roots (transactions span segments)")
    json = output_format == "json"
    limit = decompression_limit(max_message_size)

    def txn_of(part: Any, write: Any) -> TxnReport:
        return analyse(
            part,
            from_start=from_start,
            hanging_after_ms=hanging_after,
            limit=limit,
            on_transaction=(
                (lambda t: write(dumps(render.transaction_row(part.name, t))))
                if json
                else (lambda t: write(render.transaction_line(t)))
            ),
            at=at_ms,
            on_start=None if json else (lambda r: write(render.header_line(r))),
        )

    def show(report: TxnReport, write: Any) -> int:
        for line in render.render_report_json(report) if json else render.render_report_text(report):
            write(line)
        for read in report.reads:
            if not read.complete:
                run.error(read.describe())
        return report.exit_code

    sys.exit(each_partition(run, paths, "txn", txn_of, show))
