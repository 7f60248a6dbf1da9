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
from collections.abc import Iterator
from contextlib import contextmanager

from kseg.errors import error_line
from kseg.limits import EXIT_ERROR
from kseg.spark import INSTALL_HINT

IMPORT_FIX = (
    "install kseg in the Python the executors run (pip install kseg), point PYSPARK_PYTHON at a "
    "Python that has it, or ship it with spark-submit --py-files/--archives (see docs/spark.md)"
)


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
            pairs += [
                ("spark.ui.enabled", "false"),
                ("spark.driver.host", "127.0.0.1"),
                ("spark.driver.bindAddress", "127.0.0.1"),
            ]
        elif master.startswith("spark://") and not (
            os.environ.get("SPARK_LOCAL_IP") or os.environ.get("SPARK_LOCAL_HOSTNAME")
        ):
            host = driver_host(master)  # --spark-conf spark.driver.host=... (later) still wins
            if host:
                pairs.append(("spark.driver.host", host))
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--spark-conf takes KEY=VALUE, got {item!r}")
        pairs.append((key, value))
    return pairs


def driver_host(master: str) -> str | None:
    """For a standalone master ``spark://host:port[,...]``: this machine's address on the route to the
    (first) master -- the address its workers' executors can connect back to -- rather than Spark's
    guess from the host name (which may resolve to loopback, or to an interface the cluster cannot
    reach).  None when it cannot be found (Spark's own choice then stands)."""
    import socket

    host, _, port = master[len("spark://") :].split(",")[0].rpartition(":")
    if not host or not port.isdigit():
        return None
    try:
        family, _, _, _, address = socket.getaddrinfo(host.strip("[]"), int(port), type=socket.SOCK_DGRAM)[0]
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect(address)  # UDP: chooses the route, sends nothing
            return str(probe.getsockname()[0])
    except OSError:
        return None


def session(master: str | None, conf: tuple[str, ...] | list[str], log=None):
    """A SparkSession; ``master`` None keeps what spark-submit set (or ``local[*]``).

    ``log``: a file for the JVM's stdout and stderr (Spark's log4j output, Python worker
    tracebacks) when this process starts the JVM; None leaves them on the terminal."""
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    pairs = _settings(master, conf)
    python = dict(pairs).get("spark.pyspark.python")
    if python:  # pyspark reads only PYSPARK_PYTHON (spark-submit sets it from this conf; here nobody would)
        os.environ["PYSPARK_PYTHON"] = python
    if master and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark_conf = SparkConf().setAll(pairs)
    if log is not None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        from pyspark import SparkContext
        from pyspark.java_gateway import launch_gateway

        if not SparkContext._gateway:
            SparkContext._ensure_initialized(
                gateway=launch_gateway(spark_conf, popen_kwargs={"stdout": log, "stderr": log})
            )
    spark = SparkSession.builder.config(conf=spark_conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _probe_executors(sc, visible: list[str] | tuple[str, ...] = ()) -> None:
    """Before any work, one small task per core on **every executor** registered: can its Python import
    kseg, and does it see the local paths ``visible`` (the inputs, the report or output directory; made
    absolute by :mod:`kseg.spark.paths`)?  Raises :class:`SparkSetupError` with one line if not.

    Spark's scheduler hands out a job's tasks one per offer in turn (``TaskSchedulerImpl.resourceOffers``),
    so with a task per core every executor with a free core gets one; which executors answered is
    checked against those registered, and a path one of them does not see is refused naming it.

    The task function is nested so that it is shipped by value: unpickling it needs no kseg."""

    needed = RUNTIME_MODULES
    wanted = list(visible)[:PROBED_PATHS]

    def probe(_):
        import importlib
        import importlib.util
        import os
        import socket
        import sys

        try:
            for module in ("kseg.spark.job", "kseg.ops.verify.verify"):  # what the real tasks unpickle
                importlib.import_module(module)
            missing = [name for name in needed if importlib.util.find_spec(name) is None]
            error = f"ModuleNotFoundError: No module named {missing[0]!r}" if missing else None
        except Exception as exc:  # noqa: BLE001 - reported to the driver
            error = f"{type(exc).__name__}: {exc}"
        unseen = [path for path in wanted if not os.path.exists(path)]
        return [(error, sys.executable, socket.gethostname(), unseen, os.getcwd())]

    answers: list = []
    for _ in range(PROBE_ROUNDS):  # again while fewer executors answered than are registered now
        tasks = max(2, sc.defaultParallelism, registered_executors(sc))
        try:
            answers += sc.parallelize(range(tasks), tasks).mapPartitions(probe).collect()
        except Exception as exc:  # noqa: BLE001 - e.g. PYSPARK_PYTHON that cannot be run
            raise SparkSetupError(
                f"Spark's executors could not run a Python task: {_cause(exc)}; "
                "check PYSPARK_PYTHON (the Python the executors run)"
            ) from None
        if len({(host, cwd) for _, _, host, _, cwd in answers}) >= registered_executors(sc):
            break
    for error, python, host, _, _ in answers:
        if error is not None:
            raise SparkSetupError(
                f"Spark's executors cannot import kseg ({error}) with their Python {python} on {host}: {IMPORT_FIX}"
            )
    executors = {(host, cwd): unseen for _, _, host, unseen, cwd in answers}  # one working directory each
    blind = [(host, cwd, unseen) for (host, cwd), unseen in sorted(executors.items()) if unseen]
    if blind:
        raise SparkSetupError(unseen_line(blind, len(executors)))


def registered_executors(sc) -> int:
    """The executors registered with the driver now (the driver itself not counted, except in local
    mode, where it is the executor)."""
    try:
        infos = sc.statusTracker()._jtracker.getExecutorInfos()
    except Exception:  # noqa: BLE001 - no count: the probe runs one task per core
        return 1
    return max(1, len(infos) - (0 if sc.master.startswith("local") else 1))


def unseen_line(blind: list[tuple[str, str, list[str]]], answered: int) -> str:
    """The one line refusing paths some executors cannot see: the first path, the first executor that
    does not see it (its host and working directory), how many of those that answered do not either."""
    host, cwd, unseen = blind[0]
    others = sum(1 for *_, paths in blind if unseen[0] in paths)
    count = f"; {others} of the {answered} executors do not see it" if answered > 1 else ""
    return (
        f"{unseen[0]}: not visible from the executor on {host} (working in {cwd}){count}, though this machine "
        "sees it: local inputs and outputs must be on a mount every executor sees (or give a URI: s3://...)"
    )


#: Probe jobs at most, while executors registered have not all answered (a task per core each).
PROBE_ROUNDS = 3
#: How many local paths the probe task looks for (the first ones given): enough for the roots of a run.
PROBED_PATHS = 64


_PY_ERROR = re.compile(r"^[\s:]*([A-Za-z_][\w.$]*(?:Error|Exception)): (.+)$")

# Spark's own words for the failures a newcomer meets, in its exception or its log: (pattern, one line)
_STARTUP = (
    (
        re.compile(r"Failed to connect to master (\S+)"),
        'the Spark master {0} is unreachable (Spark: "Failed to connect to master {0}"{reason}); check --master '
        "and that the master is running",
    ),
    (
        re.compile(r"All masters are unresponsive"),
        'the Spark master is unreachable (Spark: "All masters are unresponsive! Giving up."); check --master and '
        "that the master is running",
    ),
    (
        re.compile(r"JAVA_HOME is not set"),
        "no Java: JAVA_HOME is not set and no java is on PATH (Spark needs Java 17 or later: install a JDK or set "
        "JAVA_HOME)",
    ),
    (
        re.compile(r"(\S*/bin/java): No such file or directory"),
        "no Java at {0} (from JAVA_HOME; Spark needs Java 17 or later: install a JDK or point JAVA_HOME at one)",
    ),
    (
        re.compile(r"UnsupportedClassVersionError"),
        "the Java found is too old for this Spark (UnsupportedClassVersionError): Spark 4 needs Java 17 or later; "
        "point JAVA_HOME at a newer JDK",
    ),
    (
        re.compile(r"Address already in use: Service '([^']+)' failed after (\d+) retries \(starting from (\d+)\)"),
        "port in use: Spark's {0} could not bind port {2} or the {1} after it (Address already in use); free the "
        "port, choose another (--spark-conf spark.driver.port=…, spark.ui.port=…) or raise spark.port.maxRetries",
    ),
    (
        re.compile(r"(Address already in use)"),
        "port in use: Spark could not bind a port ({0}); free it, choose another (--spark-conf spark.driver.port=…) "
        "or raise spark.port.maxRetries",
    ),
)
_REASON = re.compile(r"Connection refused|No route to host|Connection timed out|UnknownHostException: [^\s]+")


def startup_cause(exc: BaseException, log_path: str | None = None) -> str:
    """Why Spark could not start, in one line: the cause Spark's own exception states (the Java
    exception under Py4J's wrapper) or, when that only says "An error occurred while calling ...",
    what Spark's log says (a master it could not connect to, no Java, a port in use)."""
    texts = [str(exc)]
    if log_path:
        try:
            with open(log_path, "rb") as f:
                texts.append(f.read(4 << 20).decode("utf-8", "replace"))
        except OSError:
            pass
    for text in texts:
        for pattern, line in _STARTUP:
            m = pattern.search(text)
            if m:
                reason = _REASON.search(text[m.end() : m.end() + 4000])
                return line.format(*m.groups(), reason=f": {reason.group(0)}" if reason else "")
    return _cause(exc)


def check_master(master: str | None, timeout: float = 5.0) -> str | None:
    """For a standalone master URL (``spark://host:port[,host:port]``): None when one of its hosts
    accepts a connection, else why not -- before a JVM starts (Spark itself retries for a minute)."""
    if not master or not master.startswith("spark://"):
        return None
    import socket

    reasons = []
    for hostport in master[len("spark://") :].split(","):
        host, _, port = hostport.rpartition(":")
        if not host or not port.isdigit():
            return None  # Spark's own parser reports a malformed URL
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
            return None
        except OSError as exc:
            reasons.append(f"{hostport}: {exc.strerror or exc}")
    return (
        f"the Spark master {master} is unreachable ({'; '.join(reasons)}); check --master and that the "
        "master is running"
    )


_TASK_FAILED = re.compile(
    r"failed (\d+) times?, most recent failure: Lost task \S+ in stage \S+ \([^)]*\)(?: \([^)]*\))?: "
    r"(?:[\w.$]*(?:SparkException|Exception): )?([^\n]+)"
)


def task_failure(exc: BaseException) -> str:
    """Why a bin's job failed, in one line: how often its task failed and the last failure Spark names
    (``Python worker exited unexpectedly (crashed)``, ``ExecutorLostFailure (...)``), else :func:`_cause`."""
    m = _TASK_FAILED.search(str(exc))
    if not m:
        return _cause(exc)
    times, last = m.groups()
    last = last.split(". Consider setting")[0].strip().rstrip(".")
    return f"its task failed {times} time{'s' * (times != '1')}, the last: {last[:300]}"


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

    def path(self) -> str | None:
        """The log file's path (flushed), for :func:`startup_cause`; None when Spark logs to stderr."""
        if self.file is None:
            return None
        self.file.flush()
        return self.file.name

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            if not self.kept:
                try:
                    os.unlink(self.file.name)
                except OSError:
                    pass


def start_session(master: str | None, conf, log: SparkLog):
    """:func:`session`, or :class:`SparkSetupError` with the one line saying why Spark could not start
    (:func:`check_master` first, then :func:`startup_cause`); a malformed ``--spark-conf`` is ValueError."""
    unreachable = check_master(master)
    if unreachable is not None:
        raise SparkSetupError(f"Spark could not start: {unreachable}")
    try:
        return session(master, conf, log.file)
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - the JVM did not start, a bad master URL, a port in use, ...
        raise SparkSetupError(f"Spark could not start: {startup_cause(exc, log.path())}{log.see()}") from None


def run_spark_cli(
    partitions,
    *,
    strict: bool,
    report_path: str | None,
    master: str | None,
    spark_conf,
    max_message_size: int,
    output_format: str,
    out,
    err,
    spark=None,
    verbose: bool = False,
    resume=None,
) -> int:
    """Run the job and print what the local command prints; return its exit code."""
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        err.write((error_line(INSTALL_HINT) + "\n").encode())
        return EXIT_ERROR
    from kseg.errors import KsegError
    from kseg.ops.verify.report import prepare_directory
    from kseg.ops.verify.run import several_log_dirs
    from kseg.spark import job

    def fail(message: str) -> int:
        err.write((error_line(message) + "\n").encode("utf-8", "replace"))
        err.flush()
        return EXIT_ERROR

    from kseg.ops.verify.run import Report

    prior, resumed_part = Report(), None
    try:
        with _carried(resume, prior) as carried:  # out of the old report before its part files go
            if report_path:
                prepare_directory(report_path)  # before Spark starts: a bad path fails before any work
                if carried is not None:
                    resumed_part = _write_carried(report_path, carried)
    except KsegError as exc:
        return fail(exc.describe())
    own = spark is None
    log = SparkLog(verbose or not own)
    see = log.see
    try:
        if own:
            try:
                spark = start_session(master or "local[*]" if not _under_spark_submit() else master, spark_conf, log)
            except ValueError as exc:
                return fail(str(exc))
            except SparkSetupError as exc:
                return fail(str(exc))
        try:
            _probe_executors(spark.sparkContext, _visible(partitions))
            outcome = job.run(
                spark,
                partitions,
                strict=strict,
                max_message_size=max_message_size,
                report=report_path,
                keep_all=verbose,
                describe=task_failure,
                before=resume.before if resume is not None else None,
            )
        except SparkSetupError as exc:
            return fail(f"{exc}{see()}")
        except Exception as exc:  # noqa: BLE001 - any job failure is one line, exit 2 (not "problems")
            return fail(f"the Spark job failed: {_cause(exc)}{see()}")
        outcome.report.merge(prior.counts())
        outcome.report.resumed = prior.resumed
        if resumed_part is not None:
            outcome.parts.append(resumed_part)
        _render(out, outcome, output_format, several_log_dirs(partitions), verbose)
        out.flush()
        problem = _complete_report(report_path, outcome.parts) if report_path else None
        return fail(problem) if problem else outcome.report.exit_code
    finally:
        if own and spark is not None:
            spark.stop()
        log.close()


def _render(out, outcome, output_format: str, full_names: bool, verbose: bool) -> None:
    """The results the job gave (problems and failures; every one with --verbose), the notes grouped by
    kind as the local run groups them (every result's, clean ones' too: folded by the job as they came),
    and the summary."""
    from kseg.render.verify import render_result, render_summary

    grouped = output_format == "text" and not verbose
    for res in outcome.shown:
        render_result(out, res, output_format, full_names, folded=grouped)
    if grouped and outcome.notes is not None:
        outcome.notes.write(out)
    render_summary(out, outcome.report, output_format)


def _complete_report(report_path: str, parts: list[str]) -> str | None:
    """Mark the report complete (``_SUCCESS``) once its part files are seen where it says; else why not."""
    from kseg.errors import KsegError
    from kseg.ops.verify.report import SUCCESS
    from kseg.spark.paths import missing_line, not_here
    from kseg.storage import files, location

    missing = not_here(parts)
    if missing:  # never a report called complete that is not where it says
        return missing_line(missing, len(parts), report_path, "report part files")
    try:
        files.write_stream(location.join(report_path, SUCCESS), lambda f: None, replace=True)
    except KsegError as exc:
        return exc.describe()
    return None


def _visible(partitions) -> list[str]:
    """The local paths the executors must see: the log directories read (the driver writes the report)."""
    from kseg.spark.paths import local_roots

    return local_roots(sorted({p.log_dir for p in partitions if p.log_dir}))


def _under_spark_submit() -> bool:
    return "SPARK_SUBMIT_OPTS" in os.environ or os.environ.get("SPARK_ENV_LOADED") == "1"


@contextmanager
def _carried(resume, prior) -> Iterator[str | None]:
    """``--resume``'s carried rows (:func:`kseg.ops.verify.resume.carried_rows`, counted in ``prior``)
    copied to a temporary JSON Lines file -- the report they come from may be the one about to be
    emptied -- removed after; None without ``--resume`` (``resume``: its
    :class:`~kseg.ops.verify.resume.Resumption`)."""
    if resume is None or not resume.skipped:
        yield None
        return
    from kseg.jsonlines import dumps
    from kseg.ops.verify.resume import carried_rows

    with tempfile.NamedTemporaryFile("w", prefix="kseg-resumed-", suffix=".jsonl", encoding="utf-8") as tmp:
        for row in carried_rows(resume.path, resume.skipped, prior):
            tmp.write(dumps(row) + "\n")
        tmp.flush()
        yield tmp.name


def _write_carried(report_path: str, carried: str) -> str:
    """The carried rows as the report's ``part-resumed`` file (its format); the part file's path."""
    import json

    from kseg.ops.verify.report import report_format, write_rows_part

    with open(carried, encoding="utf-8") as f:
        return write_rows_part(report_path, "resumed", (json.loads(line) for line in f), report_format(report_path))
