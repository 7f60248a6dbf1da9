"""One Spark session for every ``--spark`` path: started, probed, its failures mapped to one line, stopped.

Every command that runs on Spark (``verify-index``, ``export``, ``diff``, ``logdir``, ``tiered``) opens its
session with :func:`started`: pyspark looked for (:func:`require`), the session started (:func:`start_session`:
a standalone master checked first, :func:`startup_cause` naming why Spark could not start), Spark's own output
sent to a log file unless ``--verbose`` (:class:`SparkLog`), and the session stopped at the end.  Before work,
:meth:`Session.probe` runs one tiny task per core on every executor (can its Python import kseg, does it see the
local paths); inside :meth:`Session.job` a failed job becomes :class:`~kseg.errors.SparkSetupError` -- one line
naming the cause and the log (exit 2), never a Java/Python traceback or exit 1.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kseg.errors import SparkSetupError
from kseg.spark import INSTALL_HINT

IMPORT_FIX = (
    "install kseg in the Python the executors run (pip install kseg), point PYSPARK_PYTHON at a "
    "Python that has it, or ship it with spark-submit --py-files/--archives (see docs/spark.md)"
)


# kseg's dependencies that verification imports only when it meets them (pyproject.toml)
RUNTIME_MODULES = ("crc32c", "lz4", "zstandard", "snappy")


def settings(master: str | None, conf) -> list[tuple[str, str]]:
    """The session's Spark settings: kseg's defaults for ``master``, then ``--spark-conf`` (which wins)."""
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

    pairs = settings(master, conf)
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


def probe_executors(sc, visible: list[str] | tuple[str, ...] = ()) -> None:
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
                f"Spark's executors could not run a Python task: {cause(exc)}; "
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
    return cause(exc)


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
    (``Python worker exited unexpectedly (crashed)``, ``ExecutorLostFailure (...)``), else :func:`cause`."""
    m = _TASK_FAILED.search(str(exc))
    if not m:
        return cause(exc)
    times, last = m.groups()
    last = last.split(". Consider setting")[0].strip().rstrip(".")
    return f"its task failed {times} time{'s' * (times != '1')}, the last: {last[:300]}"


def cause(exc: BaseException) -> str:
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
    (:func:`check_master` first, then :func:`startup_cause`; a malformed ``--spark-conf`` says what it is)."""
    unreachable = check_master(master)
    if unreachable is not None:
        raise SparkSetupError(f"Spark could not start: {unreachable}")
    try:
        return session(master, conf, log.file)
    except ValueError as exc:  # a malformed --spark-conf (settings)
        raise SparkSetupError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - the JVM did not start, a bad master URL, a port in use, ...
        raise SparkSetupError(f"Spark could not start: {startup_cause(exc, log.path())}{log.see()}") from None


def require() -> None:
    """pyspark importable, or :class:`SparkSetupError` saying how to install it."""
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        raise SparkSetupError(INSTALL_HINT)


def under_spark_submit() -> bool:
    """This driver was started by ``spark-submit`` (whose master then stands when none is given)."""
    return "SPARK_SUBMIT_OPTS" in os.environ or os.environ.get("SPARK_ENV_LOADED") == "1"


class Session:
    """A command's Spark session (``spark``) and where Spark's own output goes (``log``): what
    :func:`started` yields."""

    def __init__(self, spark: Any, log: SparkLog) -> None:
        self.spark = spark
        self.log = log

    def probe(self, visible: list[str] | tuple[str, ...] = ()) -> None:
        """Before any work: every executor imports kseg and sees the local paths ``visible``
        (:func:`probe_executors`), else :class:`SparkSetupError` naming why (and the log)."""
        with self.job():
            probe_executors(self.spark.sparkContext, visible)

    @contextmanager
    def job(self) -> Iterator[None]:
        """Inside the ``with``, a failure of Spark's is :class:`SparkSetupError`: its one line with the log
        named (``the Spark job failed: <cause>`` for any other exception than kseg's own setup error)."""
        try:
            yield
        except (KeyboardInterrupt, BrokenPipeError):
            raise
        except Exception as exc:  # noqa: BLE001 - the master lost, a task that cannot run, ...: one line, exit 2
            raise self.failed(exc) from None

    def failed(self, exc: Exception) -> SparkSetupError:
        """``exc``, raised by Spark's job, as the one line (the log named, when there is one)."""
        if isinstance(exc, SparkSetupError):
            return SparkSetupError(f"{exc}{self.log.see()}")
        return SparkSetupError(f"the Spark job failed: {cause(exc)}{self.log.see()}")


@contextmanager
def started(
    app: str, master: str | None, conf: tuple[str, ...] | list[str], *, verbose: bool = False, given: Any = None
) -> Iterator[Session]:
    """The one lifecycle of a Spark session for ``kseg <app> --spark``: pyspark required, the session started
    (``master`` None: ``local[*]``, or the one ``spark-submit`` set), Spark's output in a log file unless
    ``verbose``, stopped when the ``with`` ends.  ``given``: a session the caller owns (a test's, a notebook's),
    used as it is and left running, its output where it goes.  A session that cannot start is
    :class:`SparkSetupError` with the one line saying why."""
    require()
    log = SparkLog(verbose or given is not None)
    try:
        spark = given
        if spark is None:
            if not master and not under_spark_submit():
                master = "local[*]"
            spark = start_session(master, (f"spark.app.name=kseg {app}", *conf), log)
        try:
            yield Session(spark, log)
        finally:
            if given is None:
                spark.stop()
    finally:
        log.close()
