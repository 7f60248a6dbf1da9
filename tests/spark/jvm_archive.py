"""A class-data-sharing archive for the Spark JVMs the tests start: their classes loaded from a memory-mapped
archive, not parsed and verified again in each of them.

Each JVM of the tests (the process's local session, each fresh ``kseg --spark`` process, the cluster's master,
workers, driver and executors) spends most of its start loading Spark's ~11,000 classes; a dynamic archive of
the classes a small local job loads (Java 13 and later: ``-XX:ArchiveClassesAtExit``, then
``-XX:SharedArchiveFile``) takes ~40% of the CPU out of each start (a fresh ``kseg verify-index --spark`` of one
partition: ~11.5 -> ~7 CPU-s).  Java 17 refuses a non-empty directory on the class path of an archive, and
Spark puts ``SPARK_CONF_DIR`` first on every JVM's class path: with the archive, ``SPARK_CONF_DIR`` is an
empty directory and the tests' settings (tests/spark/conf/spark-defaults.conf, the archive added to its Java
options) reach the drivers pyspark starts as ``--properties-file`` (``PYSPARK_SUBMIT_ARGS``), the executors
from their driver, the cluster's daemons as ``SPARK_DAEMON_JAVA_OPTS`` (:func:`java_options`).

The archive is made once for a JDK, a Spark and these options (a local job, ~33 CPU-s with the dump) and
kept under ``$XDG_CACHE_HOME/kseg-tests`` (``~/.cache``); an archive a JVM cannot use (another class path) is
ignored by it, silently.  Not used where SPARK_CONF_DIR was set by the caller (their settings stand), where
``KSEG_TEST_JVM_ARCHIVE=off``, or where the JVM cannot make one (the tests then run as before).  Nothing a job
computes depends on it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

CONF = Path(__file__).resolve().parent / "conf"
DEFAULTS = CONF / "spark-defaults.conf"
#: the Java options that keep a JVM quiet about an archive it cannot use (another class path)
QUIET = "-Xlog:cds=off,cds+dynamic=off"
#: the small local job whose classes the archive holds: a local session's start and an RDD job in a Python worker
#: (a data source query too would add ~3,000 classes, ~15 CPU-s to the archive's making and ~1.5 CPU-s back to
#: each JVM that plans one: the shared session's, the cluster application's driver)
JOB = """
import sys
from pyspark import SparkContext
from kseg.spark.session import session
spark = session("local[2]", ["spark.sql.shuffle.partitions=2"])
assert spark.sparkContext.parallelize(range(4), 2).map(lambda x: x + 1).sum() == 10
proc = SparkContext._gateway.proc
spark.stop()
proc.stdin.close()  # the JVM exits on its stdin's end, writing the archive
sys.exit(proc.wait(timeout=600))
"""


def properties_file() -> Path:
    """The Spark settings file the tests' JVMs are started with (``--properties-file``): the generated one
    when the archive is used, else tests/spark/conf/spark-defaults.conf."""
    args = os.environ.get("PYSPARK_SUBMIT_ARGS", "").split()
    if "--properties-file" in args:
        return Path(args[args.index("--properties-file") + 1])
    return DEFAULTS


def java_options() -> str:
    """The tests' Java options for Spark's JVMs: ``spark.executor.extraJavaOptions`` of :func:`properties_file`
    (the drivers and executors read that file themselves)."""
    for line in properties_file().read_text().splitlines():
        key, _, value = line.partition(" ")
        if key == "spark.executor.extraJavaOptions":
            return value.strip()
    return ""


def _key(home: Path, java: str) -> str:
    """What an archive depends on: the JDK, Spark's jars, the tests' settings."""
    h = hashlib.sha256(f"{home}\n".encode())  # the jars' paths are the archive's class path
    real = os.path.realpath(java)
    st = os.stat(real)
    h.update(f"{real} {st.st_size} {st.st_mtime_ns}\n".encode())
    for jar in sorted((home / "jars").glob("*.jar")):  # the JVM checks each jar's size and time too
        st = jar.stat()
        h.update(f"{jar.name} {st.st_size} {st.st_mtime_ns}\n".encode())
    h.update("\n".join(line for line in DEFAULTS.read_text().splitlines() if not line.startswith("#")).encode())
    return h.hexdigest()[:16]


def _with_options(text: str, extra: str) -> str:
    """spark-defaults.conf's text with ``extra`` added to the drivers' and executors' Java options."""
    keys = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")
    lines = [f"{line} {extra}" if line.split(" ", 1)[0] in keys else line for line in text.splitlines()]
    return "\n".join(lines) + "\n"


def use_archive(java: str) -> str | None:
    """Point this process's environment (and so every JVM the tests start after this) at the archive, made
    first if it is not in the cache; None, or why not (the environment then unchanged)."""
    if os.environ.get("KSEG_TEST_JVM_ARCHIVE") == "off" or os.environ.get("SPARK_CONF_DIR") != str(CONF):
        return "not asked for"
    import pyspark

    home = Path(pyspark.__file__).parent
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kseg-tests"
    empty = cache / "spark-conf"  # on every JVM's class path: the same path for the archive and its users
    try:
        empty.mkdir(parents=True, exist_ok=True)
        if any(empty.iterdir()):
            return f"{empty} is not empty"
    except OSError as exc:
        return f"no cache directory: {exc}"
    key = _key(home, java)
    archive = cache / f"spark-{key}.jsa"
    settings = cache / f"spark-{key}.conf"
    root = str(Path(__file__).resolve().parents[2])  # kseg, for the job's Python (run from the cache)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, SPARK_CONF_DIR=str(empty), PYSPARK_PYTHON=sys.executable, PYTHONPATH=path)
    if not archive.exists():
        making = cache / f"spark-{key}.{os.getpid()}.making"
        dump = cache / f"spark-{key}.{os.getpid()}.conf"
        dump.write_text(_with_options(DEFAULTS.read_text(), f"-XX:ArchiveClassesAtExit={making} {QUIET}"))
        env["PYSPARK_SUBMIT_ARGS"] = f"--properties-file {dump} pyspark-shell"
        try:
            p = subprocess.run([sys.executable, "-c", JOB], env=env, capture_output=True, timeout=600, cwd=cache)
            if p.returncode != 0 or not making.exists():
                return f"making the archive failed ({p.returncode}): {p.stderr.decode(errors='replace')[-500:]}"
            for old in cache.glob("spark-*.jsa"):  # another JDK's, Spark's or settings': not used again
                if old != archive:
                    old.unlink()
            os.replace(making, archive)
        except subprocess.TimeoutExpired:
            return "making the archive took over 600 s"
        finally:
            dump.unlink(missing_ok=True)
            making.unlink(missing_ok=True)
    mine = cache / f"spark-{key}.{os.getpid()}.settings"
    mine.write_text(_with_options(DEFAULTS.read_text(), f"-XX:SharedArchiveFile={archive} {QUIET}"))
    os.replace(mine, settings)  # whole, for another test process reading it
    os.environ["SPARK_CONF_DIR"] = str(empty)
    os.environ["PYSPARK_SUBMIT_ARGS"] = f"--properties-file {settings} pyspark-shell"
    return None
