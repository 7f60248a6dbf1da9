"""Shared fixtures: the Kafka corpus copied into tests/data, and ways to run the real CLI."""

from __future__ import annotations

import csv
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner

TESTS = Path(__file__).resolve().parent
CORPUS = TESTS / "data" / "corpus"
CORPUS_DATA = CORPUS / "data"
CORPUS_GOLDEN = CORPUS / "golden"
# Java options for the Spark JVMs the tests start (drivers and executors): tests/spark/conf's
# spark-defaults.conf, read by spark-submit (in this process and in every ``kseg --spark`` child).
os.environ.setdefault("SPARK_CONF_DIR", str(TESTS / "spark" / "conf"))


def golden_rows() -> list[dict]:
    """Rows of golden/INDEX.tsv: partition, file, set, args, exit_code."""
    with open(CORPUS_GOLDEN / "INDEX.tsv", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    body = rows[1:]  # rows[0] is the header
    return [dict(zip(["partition", "file", "set", "args", "exit_code"], r[:5], strict=True)) for r in body]


class Result:
    def __init__(self, code: int, out: bytes, err: bytes) -> None:
        self.exit_code = code
        self.stdout = out
        self.stderr = err

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def errtext(self) -> str:
        return self.stderr.decode("utf-8", "replace")


def run_cli(args: list[str], cwd: Path | str | None = None, env: Mapping[str, str | None] | None = None) -> Result:
    """Run ``kseg ARGS`` in-process through click (the real command, real files), with ``env`` (if given)
    set in the environment for the run (a variable given as None removed for it)."""
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        from kseg.cli.main import cli

        r = CliRunner().invoke(cli, args, catch_exceptions=True, env=env)
    finally:
        os.chdir(old)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return Result(r.exit_code, r.stdout_bytes, r.stderr_bytes)


def run_subprocess(
    args: list[str], cwd: Path | str | None = None, timeout: float = 120, env: dict[str, str] | None = None
) -> Result:
    """Run ``python -m kseg ARGS`` as a real process, with ``env`` (if given) added to the environment."""
    full = None if env is None else {**os.environ, **env}
    p = subprocess.run([sys.executable, "-m", "kseg", *args], cwd=cwd, capture_output=True, timeout=timeout, env=full)
    return Result(p.returncode, p.stdout, p.stderr)


def run_cli_many(
    runs: list[list[str]],
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600,
) -> list[Result]:
    """Run each ``kseg ARGS`` of ``runs`` in turn as :func:`run_cli` does (click, the real command), in ONE
    child process with ``env`` added to its environment (``tests/cli_runs.py``): what the test process cannot
    run itself (``KSEG_ENGINE=python``: the engine is chosen at import) at one start-up for all the runs.
    An exception a run raises fails the test with its traceback."""
    fd, job = tempfile.mkstemp(prefix="kseg-runs-", suffix=".pickle")
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump([(list(args), None if cwd is None else str(cwd)) for args in runs], f)
        full = None if env is None else {**os.environ, **env}
        p = subprocess.run(
            [sys.executable, str(TESTS / "cli_runs.py"), job], capture_output=True, timeout=timeout, env=full
        )
        assert p.returncode == 0, p.stderr.decode("utf-8", "replace")[-3000:]
        with open(job, "rb") as f:
            done = pickle.load(f)
    finally:
        os.unlink(job)
    for r in done:
        if r[0] == "raised":
            raise AssertionError(f"kseg {' '.join(r[1])} raised:\n{r[2]}")
    return [Result(*r) for r in done]


def corpus_copy(tmp_path: Path, partition: str = "plain-v2-0", name: str = "p-0") -> Path:
    """A writable copy of a corpus partition directory, as ``tmp_path/name``."""
    part = tmp_path / name
    shutil.copytree(CORPUS_DATA / partition, part)
    return part


def overwrite(path: Path, at: int, data: bytes) -> None:
    """Write ``data`` over the bytes of ``path`` at position ``at`` (the file keeps its size)."""
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(data)


def kseg_argv(*args: str) -> list[str]:
    """The argv of ``python -m kseg ARGS``: the real CLI in a child process."""
    return [sys.executable, "-m", "kseg", *args]


def as_unprivileged_root(cmd: list[str]) -> list[str]:
    """``cmd`` as it is, or, for root (who reads any file), run by ``setpriv`` without the capabilities
    that let it read and list what the mode bits forbid (uid 0 kept); skips the test without setpriv."""
    if os.geteuid() != 0:
        return cmd
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot make a file or directory unreadable")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}", *cmd]


def pytest_configure(config: pytest.Config) -> None:
    """Compiled modules kept in ``__pycache__`` (git ignores it) even where PYTHONDONTWRITEBYTECODE is set
    (many CI machines and containers): Python then reads a ``.pyc`` but never writes one.

    - Before any test (in the controller, before pytest-xdist starts its workers), kseg's modules are
      compiled: every ``python -m kseg`` child a test starts would otherwise compile them again (~0.1 s of
      CPU each).  ``compileall`` writes them regardless of the setting, only those older than their source.
    - In each pytest process, the test modules pytest rewrites for its assertions are cached as it does
      by default (it writes them only while ``sys.dont_write_bytecode`` is false): each worker collects the
      whole suite, and compiling it costs each ~5 s of CPU.
    - Children (the workers, ``python -m kseg``, Spark's Python workers, moto's server) write what they
      import too: the README installs the ``test`` extra with ``pip --no-compile`` (compiling every module
      of ~1.2 GB of packages took the install ~25 s of CPU), so click, rich, pyarrow or pyspark are compiled
      by the first child that imports them instead of by every one (~0.15 s of CPU a ``python -m kseg``)."""
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if not hasattr(config, "workerinput"):
        import compileall
        import importlib.util

        spec = importlib.util.find_spec("kseg")
        if spec is not None and spec.origin is not None:
            compileall.compile_dir(Path(spec.origin).parent, quiet=1)


SUMMARY: list[str] = []  # lines a test wants shown at the end of the run (e.g. the fuzz counts)


def pytest_terminal_summary(terminalreporter) -> None:
    for line in SUMMARY:
        terminalreporter.write_line(line)


#: each test file's seconds in a whole run, longest first (``tests/durations.py`` writes it from the run's JUnit XML)
DURATIONS = TESTS / "durations.tsv"
#: what a file not in DURATIONS counts as: a Spark file starts JVM work, most others take a second or two
UNRECORDED = {"spark": 15.0, "other": 2.0}


def recorded_durations() -> dict[str, float]:
    """DURATIONS as ``{"tests/cli/test_x.py": seconds}``."""
    took = {}
    for line in DURATIONS.read_text().splitlines():
        if line and not line.startswith("#"):
            seconds, path = line.split("\t")
            took[path] = float(seconds)
    return took


#: the files of one scheduling unit, run on one pytest-xdist process: every Spark file, so the process's JVM,
#: its shared local[2] session and that session's first-query warm-up are started once in a run, not in both
SPARK_UNIT = "tests/spark"


def schedule_unit(path: str) -> str:
    """The unit a test file (``tests/cli/test_x.py``) is handed out in: its own file, or SPARK_UNIT."""
    return SPARK_UNIT if path.startswith(SPARK_UNIT + "/") else path


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile``, but the Spark files are one unit (:func:`schedule_unit`); another ``--dist``
    keeps pytest-xdist's own scheduler."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class UnitScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return schedule_unit(super()._split_scope(nodeid))

    return UnitScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker: the units (:func:`schedule_unit`) longest first, by the times of a whole run
    (DURATIONS).  The controller hands out whole units in this order (``--no-loadscope-reorder``: not by
    their number of tests, which would leave long units of few tests to run last with one process idle),
    so the short ones fill in at the end and the two processes finish together; a single process keeps the
    collection's order."""
    if hasattr(config, "workerinput"):
        took = recorded_durations()
        files: dict[Path, str] = {}
        units: dict[str, float] = {}
        for item in items:
            if item.path not in files:
                guess = UNRECORDED["spark" if TESTS / "spark" in item.path.parents else "other"]
                rel = item.path.relative_to(TESTS.parent).as_posix()
                files[item.path] = unit = schedule_unit(rel)
                units[unit] = units.get(unit, 0.0) + took.get(rel, guess)
        order = {unit: i for i, unit in enumerate(sorted(units, key=lambda u: -units[u]))}
        items.sort(key=lambda item: order[files[item.path]])  # stable: a unit's tests keep their order


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker: hand this process's SUMMARY lines to the controller, which prints them."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["kseg_summary"] = list(SUMMARY)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: called in the controller as each worker ends
def pytest_testnodedown(node, error) -> None:
    SUMMARY.extend(getattr(node, "workeroutput", {}).get("kseg_summary", []))


@pytest.fixture
def corpus_data() -> Path:
    return CORPUS_DATA


_IDENTITY = re.compile(r'"identity":(?:null|"(?:[^"\\]|\\.)*")')


def without_identity(text: str) -> str:
    """JSON Lines with each verify-index row's ``identity`` (a file's size, mtime and ctime, or an object's
    ETag: a copy's own) made one placeholder, so two copies' rows compare."""
    return _IDENTITY.sub('"identity":"@"', text)


def assert_no_traceback(result: Result) -> None:
    assert b"Traceback" not in result.stderr, result.errtext


# A real S3-protocol server on loopback, and the same two-broker tree on local disk (tests/s3server.py).
from tests.s3server import local_brokers, s3  # noqa: E402,F401 - fixtures, registered for every test


def _engines() -> list:
    """Both engines as pytest parameters: ``"c"`` skipped, with the reason, where the engine is not built."""
    from kseg import engine

    return [pytest.param("c", marks=pytest.mark.skipif(engine.C is None, reason="the C engine is not built")), "python"]


#: ``@pytest.mark.parametrize("eng", ENGINES)``: the tests that run a case on each engine.
ENGINES = _engines()
