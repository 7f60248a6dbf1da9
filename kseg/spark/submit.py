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

from kseg.errors import error_line
from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE, EXIT_ERROR


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
    from kseg.ops.verify.report import check_target
    from kseg.spark.driver import run_spark_cli, session
    from kseg.storage.listing import listed
    from kseg.storage.location import is_remote
    from kseg.storage.outputs import refuse_on_inputs
    from kseg.storage.partition import nothing_found

    notes: list[str] = []
    try:
        if args.report:  # before any work
            refuse_on_inputs(args.report, args.paths, "--report")
        if args.report and not is_remote(args.report):
            check_target(args.report, directory_ok=True)
        partitions = listed(args.paths, notes)  # compact: the driver plans from it (kseg.spark.bins.plan)
        if not partitions:
            raise nothing_found(args.paths)
    except KsegError as exc:
        sys.stderr.write(error_line(exc) + "\n")
        return EXIT_ERROR
    for note in notes:
        sys.stderr.write(f"kseg: note: {note}\n")
    spark = session(None, args.spark_conf)
    try:
        return run_spark_cli(
            partitions,
            strict=args.strict,
            report_path=args.report,
            master=None,
            spark_conf=(),
            max_message_size=args.max_message_size,
            output_format=args.format,
            out=sys.stdout.buffer,
            err=sys.stderr.buffer,
            spark=spark,
        )
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
