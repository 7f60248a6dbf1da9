"""Driver side of ``kseg verify-index --spark``: session, job, the local command's output."""

from __future__ import annotations

from kseg.spark import INSTALL_HINT


def session(master: str | None, conf: tuple[str, ...] | list[str]):
    """A SparkSession; ``master`` None keeps what spark-submit set (or ``local[*]``)."""
    import os

    from pyspark.sql import SparkSession

    if master and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.appName("kseg verify-index").config("spark.ui.showConsoleProgress", "false")
    if master:
        builder = builder.master(master)
        if master.startswith("local"):
            # a local run needs no UI, and binds to loopback whatever the host name resolves to
            builder = builder.config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1") \
                .config("spark.driver.bindAddress", "127.0.0.1")
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--spark-conf takes KEY=VALUE, got {item!r}")
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_spark_cli(partitions, *, strict: bool, report_path: str | None, master: str | None, spark_conf,
                  max_message_size: int, output_format: str, out, err, spark=None) -> int:
    """Run the job and print what the local command prints; return its exit code."""
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        err.write(f"kseg: error: {INSTALL_HINT}\n".encode())
        return 2
    from kseg.cli.verify import render_result, render_summary
    from kseg.spark import job
    from kseg.storage.report import rows
    from kseg.storage.verify_run import Report, collect

    own = spark is None
    try:
        if own:
            spark = session(master or "local[*]" if not _under_spark_submit() else master, spark_conf)
    except ValueError as exc:
        err.write(f"kseg: error: {exc}\n".encode())
        return 2
    try:
        results = job.run(spark, partitions, strict=strict, max_message_size=max_message_size)
        report = Report()
        collect(results, report, lambda res: render_result(out, res, output_format))
        render_summary(out, report, output_format)
        out.flush()
        if report_path:
            job.write_report(spark, report_path, rows(report.results))
        return report.exit_code
    finally:
        if own:
            spark.stop()


def _under_spark_submit() -> bool:
    import os

    return "SPARK_SUBMIT_OPTS" in os.environ or os.environ.get("SPARK_ENV_LOADED") == "1"
