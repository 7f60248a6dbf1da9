"""Driver side of ``kseg verify-index --spark``: session, job, the local command's output.

Spark's own output (the JVM's log4j lines, Python worker tracebacks) goes to a log
file, not to stderr, unless ``--verbose``; a failed job becomes one ``kseg: error:``
line naming the cause and the fix (exit 2), never a Java/Python traceback or exit 1.
Before the work, one tiny task checks that the executors' Python can import kseg.
"""

from __future__ import annotations

import os
import re
import tempfile

from kseg.errors import error_line
from kseg.limits import EXIT_ERROR
from kseg.spark import INSTALL_HINT

IMPORT_FIX = ("install kseg in the Python the executors run (pip install kseg), point PYSPARK_PYTHON at a "
              "Python that has it, or ship it with spark-submit --py-files/--archives (see docs/spark.md)")


# kseg's dependencies that verification imports only when it meets them (pyproject.toml)
RUNTIME_MODULES = ("crc32c", "lz4", "zstandard", "snappy")


class SparkSetupError(Exception):
    """Spark could not run the job: one line for the user (the cause and the fix)."""


def _settings(master: str | None, conf) -> list[tuple[str, str]]:
    pairs = [("spark.app.name", "kseg verify-index"), ("spark.ui.showConsoleProgress", "false")]
    if master:
        pairs.append(("spark.master", master))
        if master.startswith("local"):
            # a local run needs no UI, and binds to loopback whatever the host name resolves to
            pairs += [("spark.ui.enabled", "false"), ("spark.driver.host", "127.0.0.1"),
                      ("spark.driver.bindAddress", "127.0.0.1")]
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--spark-conf takes KEY=VALUE, got {item!r}")
        pairs.append((key, value))
    return pairs


def session(master: str | None, conf: tuple[str, ...] | list[str], log=None):
    """A SparkSession; ``master`` None keeps what spark-submit set (or ``local[*]``).

    ``log``: a file for the JVM's stdout and stderr (Spark's log4j output, Python worker
    tracebacks) when this process starts the JVM; None leaves them on the terminal."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    pairs = _settings(master, conf)
    if master and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark_conf = SparkConf().setAll(pairs)
    if log is not None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        from pyspark import SparkContext
        from pyspark.java_gateway import launch_gateway

        if not SparkContext._gateway:
            SparkContext._ensure_initialized(gateway=launch_gateway(spark_conf,
                                                                    popen_kwargs={"stdout": log, "stderr": log}))
    spark = SparkSession.builder.config(conf=spark_conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _probe_executors(sc) -> None:
    """One task: can the executors' Python import kseg?  Raises :class:`SparkSetupError` if not.

    The task function is nested so that it is shipped by value: unpickling it needs no kseg."""

    needed = RUNTIME_MODULES

    def probe(_):
        import importlib
        import importlib.util
        import socket
        import sys

        try:
            for module in ("kseg.spark.job", "kseg.ops.verify.verify"):  # what the real tasks unpickle
                importlib.import_module(module)
            missing = [name for name in needed if importlib.util.find_spec(name) is None]
            error = f"ModuleNotFoundError: No module named {missing[0]!r}" if missing else None
        except Exception as exc:  # noqa: BLE001 - reported to the driver
            error = f"{type(exc).__name__}: {exc}"
        return [(error, sys.executable, socket.gethostname())]

    try:
        ((error, python, host),) = sc.parallelize([0], 1).mapPartitions(probe).collect()
    except Exception as exc:  # noqa: BLE001 - e.g. PYSPARK_PYTHON that cannot be run
        raise SparkSetupError(f"Spark's executors could not run a Python task: {_cause(exc)}; "
                              "check PYSPARK_PYTHON (the Python the executors run)") from None
    if error is not None:
        raise SparkSetupError(f"Spark's executors cannot import kseg ({error}) with their Python {python} "
                              f"on {host}: {IMPORT_FIX}")


_PY_ERROR = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception)): (.+)$")


def _cause(exc: BaseException) -> str:
    """The line that says what went wrong, out of a Py4J/Java/Python traceback."""
    text = str(exc)
    found = None
    for line in text.splitlines():
        m = _PY_ERROR.match(line)
        if m and not m.group(1).startswith(("org.apache.spark", "py4j", "java.util.concurrent")):
            if "ModuleNotFoundError" in m.group(1) or "ImportError" in m.group(1):
                return f"{m.group(1).rsplit('.', 1)[-1]}: {m.group(2)}"
            if found is None or m.group(1).startswith("java.io"):
                found = f"{m.group(1).rsplit('.', 1)[-1]}: {m.group(2)}"
    if "Cannot run program" in text:
        m = re.search(r"Cannot run program \"([^\"]+)\"[^:]*: ([^\n]+)", text)
        if m:
            return f"cannot run {m.group(1)}: {m.group(2)}"
    if found is not None:
        return found
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return first[:300]


class SparkLog:
    """Where Spark's own output goes: a temporary file (unless ``verbose``, or a JVM already runs),
    removed at :meth:`close` unless an error line named it (:meth:`see`)."""

    def __init__(self, verbose: bool) -> None:
        self.file = None
        if not verbose and "PYSPARK_GATEWAY_PORT" not in os.environ:
            self.file = tempfile.NamedTemporaryFile(prefix="kseg-spark-", suffix=".log", delete=False)
        self.kept = False

    def see(self) -> str:
        """The words that name the log in an error line (and keep the file)."""
        if self.file is None:
            return ""
        self.kept = True
        return f" (Spark's log: {self.file.name}; --verbose shows it on stderr)"

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            if not self.kept:
                try:
                    os.unlink(self.file.name)
                except OSError:
                    pass


def run_spark_cli(partitions, *, strict: bool, report_path: str | None, master: str | None, spark_conf,
                  max_message_size: int, output_format: str, out, err, spark=None, verbose: bool = False) -> int:
    """Run the job and print what the local command prints; return its exit code."""
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        err.write((error_line(INSTALL_HINT) + "\n").encode())
        return EXIT_ERROR
    from kseg.errors import KsegError
    from kseg.render.verify import render_result, render_summary
    from kseg.spark import job
    from kseg.ops.verify.report import SUCCESS, prepare_directory
    from kseg.ops.verify.run import several_log_dirs

    def fail(message: str) -> int:
        err.write((error_line(message) + "\n").encode("utf-8", "replace"))
        err.flush()
        return EXIT_ERROR

    try:
        if report_path:
            prepare_directory(report_path)  # before Spark starts: executors write its part files
    except KsegError as exc:
        return fail(exc.describe())
    own = spark is None
    log = SparkLog(verbose or not own)
    see = log.see
    try:
        if own:
            try:
                spark = session(master or "local[*]" if not _under_spark_submit() else master, spark_conf,
                                log.file)
            except ValueError as exc:
                return fail(str(exc))
            except Exception as exc:  # noqa: BLE001 - the JVM did not start, a bad master URL, ...
                return fail(f"Spark could not start: {_cause(exc)}{see()}")
        try:
            _probe_executors(spark.sparkContext)
            outcome = job.run(spark, partitions, strict=strict, max_message_size=max_message_size,
                              report=report_path, keep_all=verbose)
        except SparkSetupError as exc:
            return fail(f"{exc}{see()}")
        except Exception as exc:  # noqa: BLE001 - any job failure is one line, exit 2 (not "problems")
            return fail(f"the Spark job failed: {_cause(exc)}{see()}")
        full_names = several_log_dirs(partitions)
        for res in outcome.shown:
            render_result(out, res, output_format, full_names)
        render_summary(out, outcome.report, output_format)
        out.flush()
        if report_path:
            from kseg.storage import files, location

            try:
                files.write_stream(location.join(report_path, SUCCESS), lambda f: None, replace=True)
            except KsegError as exc:
                return fail(exc.describe())
        return outcome.report.exit_code
    finally:
        if own and spark is not None:
            spark.stop()
        log.close()


def _under_spark_submit() -> bool:
    return "SPARK_SUBMIT_OPTS" in os.environ or os.environ.get("SPARK_ENV_LOADED") == "1"
