"""``export --since`` on Spark: the incremental export's second step as a --spark job gives, with the first
step's file, the rows of one full export (tests/cli/test_export_since.py has the local steps).  Here, under
tests/spark, so that the S3 server's settings are in the environment before this process's shared session
starts its JVM (tests/spark/conftest.py), whichever file the process ran before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_export_since import _two_steps

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")


def test_incremental_export_on_spark(tmp_path: Path) -> None:
    together, full, _ = _two_steps(tmp_path, ["--spark", "--master", "local[2]"])
    assert together == full and len(full) == 75
