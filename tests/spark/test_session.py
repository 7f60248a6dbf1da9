"""The one lifecycle of a Spark session (:mod:`kseg.spark.session`), on a real local[2] PySpark: started and
named, probed, a failed job as one line, stopped; a session the caller owns left running."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")

from kseg.errors import KsegError, SparkSetupError  # noqa: E402
from kseg.spark.session import started  # noqa: E402


def _boom(_):
    raise ZeroDivisionError("a task that fails")


def test_a_session_is_started_named_probed_and_stopped(tmp_path: Path) -> None:
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()  # this process's shared session (tests/spark/shared.py), if any:
    if active is not None:  # stopped, so that kseg starts its own (the next shared use starts it again)
        active.stop()
    with started("verify-index", "local[2]", ("spark.task.maxFailures=1",)) as session:
        sc = session.spark.sparkContext
        assert sc.appName == "kseg verify-index" and sc.master == "local[2]"
        session.probe([str(tmp_path)])  # the executors import kseg and see this directory
        with session.job():
            assert sc.parallelize(range(4), 2).map(lambda x: x * 2).collect() == [0, 2, 4, 6]
        with pytest.raises(SparkSetupError) as failed, session.job():
            sc.parallelize([1], 1).map(_boom).collect()
        log = session.log.file
    assert isinstance(failed.value, KsegError)  # the CLI's one line, exit 2 (kseg.cli.main.fatal)
    message = failed.value.describe()
    assert message.startswith("the Spark job failed: ") and "ZeroDivisionError: a task that fails" in message
    assert "Traceback" not in message and "\n" not in message
    assert sc._jsc is None  # stopped when the ``with`` ended
    if log is not None:  # Spark's output went to a log file: named in the line, and so kept
        assert f"(Spark's log: {log.name};" in message and os.path.exists(log.name)
        os.unlink(log.name)


def test_a_path_the_executors_do_not_see_is_refused_by_the_probe(tmp_path: Path) -> None:
    unseen = str(tmp_path / "not-there")
    with started("logdir", "local[2]", (), verbose=True) as session:
        with pytest.raises(SparkSetupError) as refused:
            session.probe([unseen])
        assert session.log.file is None  # --verbose: Spark's own output on stderr, no log file
    assert refused.value.describe().startswith(f"{unseen}: not visible from the executor on ")


def test_a_session_the_caller_owns_is_used_and_left_running() -> None:
    """The caller's own session -- this process's shared one (tests/spark/shared.py), which the next tests
    use: left running is what is asserted -- is used, whatever master and settings are asked for."""
    from tests.spark.shared import shared_session

    own = shared_session()
    with started("export", "local[7]", ("spark.app.name=ignored",), given=own) as session:
        assert session.spark is own and session.log.file is None
    assert own.sparkContext._jsc is not None
    assert own.sparkContext.parallelize([1, 2], 2).count() == 2
    assert own.sparkContext.appName == "kseg tests" and own.sparkContext.master == "local[2]"


def test_a_malformed_setting_is_one_line_before_any_jvm_starts() -> None:
    with pytest.raises(SparkSetupError) as bad, started("diff", "local[2]", ("no-equals-sign",)):
        pytest.fail("no session is started with a malformed --spark-conf")
    assert bad.value.describe() == "--spark-conf takes KEY=VALUE, got 'no-equals-sign'"
