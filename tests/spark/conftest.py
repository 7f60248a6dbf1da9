"""The real standalone cluster fixture (tests/spark/cluster.py), for the tests beside it, and the S3 server's
settings put in the environment before the first test here starts a JVM."""

import importlib.util
import os
import shutil

import pytest

from tests.conftest import SUMMARY
from tests.spark.cluster import spark_cluster  # noqa: F401 - a fixture, registered for tests/spark
from tests.spark.shared import shared_session


@pytest.fixture(scope="session", autouse=True)
def _jvm_archive() -> None:
    """Before the first JVM: every JVM the tests start loads Spark's classes from one class-data-sharing
    archive (tests/spark/jvm_archive.py), made first where it is not in the cache; where it cannot be, the
    reason is shown at the end of the run and the JVMs start as before."""
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not importlib.util.find_spec("pyspark") or not java or not os.access(java, os.X_OK):
        return
    from tests.spark.jvm_archive import use_archive

    why = use_archive(java)
    if why and why != "not asked for":
        SUMMARY.append(f"Spark JVMs without a class-data-sharing archive: {why}")


@pytest.fixture(scope="session", autouse=True)
def _store_settings_before_any_jvm(request: pytest.FixtureRequest) -> None:
    """A JVM keeps the environment it started with, and the Python workers it forks later get that one: a
    test that starts an in-process session (``SparkSession.builder...getOrCreate()``) before the ``s3``
    fixture has set ``AWS_ENDPOINT_URL`` & co. would leave every later session's workers talking to AWS.
    So the S3 server (a session fixture) is started before the first Spark test, where moto and pyarrow are
    installed; where they are not, the S3 tests skip with their own reason."""
    if importlib.util.find_spec("moto") and importlib.util.find_spec("pyarrow"):
        request.getfixturevalue("s3")


@pytest.fixture
def spark_session():
    """The test process's shared local[2] SparkSession (tests/spark/shared.py): started once, kept running."""
    pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")
    return shared_session()
