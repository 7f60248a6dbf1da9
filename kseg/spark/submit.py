"""Entry point for ``spark-submit``: the same job as ``kseg verify-index --spark``.

    spark-submit --master yarn "$(python -c 'import kseg.spark.submit as m; print(m.__file__)')" \\
        [--strict] [--report s3a://bucket/report/ | out.jsonl | out.parquet] /mnt/kafka ...

Needs only the installed package on the driver and executors, or a zip of
``kseg/`` passed with ``--py-files kseg.zip``.  The master comes from
spark-submit.  Exit code as the local command: 0 clean, 1 problems, 2 error (a failed or
unreadable row, nothing to verify, a report path that cannot be written, a failed job).
"""

from __future__ import annotations

import argparse
import sys

from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="kseg-spark-verify", description="Verify Kafka partition directories on Spark.")
    ap.add_argument("paths", nargs="+", help="log roots, partition directories or segment files")
    ap.add_argument("--strict", action="store_true", help="Kafka's --verify-index-only rule")
    ap.add_argument("--report", help="JSON Lines or Parquet (by extension), local path or URI")
    ap.add_argument("--max-message-size", type=int, default=DEFAULT_MAX_MESSAGE_SIZE)
    ap.add_argument("--format", choices=["text", "json"], default="text")
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args(argv)
    from kseg.spark.paths import absolute, absolute_all

    args.paths = absolute_all(args.paths)  # executors do not run in this directory
    args.report = args.report and absolute(args.report)

    from kseg.errors import KsegError
    from kseg.ops.verify.report import open_report
    from kseg.runtime.run import Run
    from kseg.runtime.verify import VerifyRun
    from kseg.spark.driver import run_spark_cli
    from kseg.storage.listing import Listed
    from kseg.storage.partition import nothing_found
    from kseg.storage.stores.find import discover_as

    run = Run(sys.stdout.buffer, sys.stderr.buffer)
    notes: list[str] = []
    try:
        open_report(args.report, args.paths, spark=True, force=True)  # checked before any work
        partitions = discover_as(args.paths, notes, Listed)  # compact: the driver plans from it (kseg.spark.bins.plan)
        if not partitions:
            raise nothing_found(args.paths)
    except KsegError as exc:
        return run.error(exc)
    for note in notes:
        run.note(note)
    return run_spark_cli(
        VerifyRun(run, args.report),
        partitions,
        strict=args.strict,
        master=None,  # spark-submit's
        spark_conf=args.spark_conf,
        max_message_size=args.max_message_size,
        output_format=args.format,
    )


if __name__ == "__main__":
    sys.exit(main())
