"""kseg on a real Spark standalone cluster on loopback (tests/spark/cluster.py): a master and two
workers, each its own JVM, executors in their own work directories -- what ``local[2]`` cannot show.

Every run here is compared with the local command on the same files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kseg.ops.verify.report import sort_key
from tests.cli.test_verify import _report_rows
from tests.conftest import CORPUS_DATA, run_subprocess

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")

DAMAGED = "plain-v2-0"  # one CRC fault, so that the rows compared hold a problem


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """``<workdir>/data/b1/data``: the Kafka-written corpus as one broker's log root, one batch damaged."""
    work = tmp_path_factory.mktemp("operator")
    root = work / "data" / "b1" / "data"
    shutil.copytree(CORPUS_DATA, root)
    log = sorted((root / DAMAGED).glob("*.log"))[0]
    data = bytearray(log.read_bytes())
    data[200] ^= 0x5A
    log.write_bytes(bytes(data))
    return work


def rows(path: Path) -> list[dict]:
    return sorted(_report_rows(path), key=sort_key)


def local_verify(workdir: Path, tmp_path: Path) -> tuple:
    report = tmp_path / "local.jsonl"
    r = run_subprocess(["verify-index", "--verbose", "--report", str(report), str(workdir / "data/b1/data")])
    assert r.exit_code == 1, r.errtext
    return r, rows(report)


def test_verify_on_the_cluster_equals_the_local_run(spark_cluster, workdir: Path, tmp_path: Path) -> None:
    local, expected = local_verify(workdir, tmp_path)
    report = tmp_path / "cluster-report"
    r = run_subprocess(
        ["verify-index", "--spark", "--verbose", *spark_cluster.conf(), "--report", str(report)]
        + [str(workdir / "data/b1/data")],
        timeout=600,
    )
    assert r.exit_code == 1, r.errtext[-3000:]
    assert {row["kind"] for row in expected if row["type"] == "problem"} >= {"crc"}
    assert rows(report) == expected
    assert (report / "_SUCCESS").exists()
    assert r.text == local.text
