"""``kseg grep --spark``: partitions searched on Spark's executors print what the local run prints -- text,
JSON Lines, counts, ``--limit`` cut at the same match, damage said and the exit code -- in the partitions'
order; a partition that cannot be read is its error line (exit 2), the others searched."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.cli.grep_data import TOPIC, write_topic
from tests.conftest import CORPUS_DATA, run_cli
from tests.spark.shared import run_on_spark

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")

LOCAL2 = ["--spark", "--master", "local[2]"]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("grep-spark")
    write_topic(base / "data")
    for name in ("corrupt-truncated-0", "v1-gzip-0", "txn-v2-0"):
        shutil.copytree(CORPUS_DATA / name, base / "data" / name)
    return base / "data"


@pytest.mark.parametrize(
    "args",
    [
        ["--value-regex", "red qty"],
        ["--format", "json", "--key", "order-123"],  # pruned to the key's partition on the driver
        ["--count", "--from-offset", "0"],  # the damaged partition's corrupt line, every count
        ["--format", "json", "--limit", "7", "--value-regex", "qty [12]"],
        ["--control", "--format", "json"],
        ["--value-regex", "no such value"],
    ],
)
def test_grep_on_spark_prints_what_the_local_run_prints(root: Path, args: list[str]) -> None:
    local = run_cli(["grep", *args, str(root)])
    spark = run_on_spark(["grep", *LOCAL2, *args, str(root)])
    assert "Traceback" not in spark.errtext, spark.errtext[-3000:]
    assert (spark.exit_code, spark.text) == (local.exit_code, local.text)
    assert [line for line in spark.errtext.splitlines() if line.startswith("kseg: ")] == [
        line for line in local.errtext.splitlines() if line.startswith("kseg: ")
    ]


def test_a_partition_that_cannot_be_read_on_spark(root: Path, tmp_path: Path) -> None:
    copy = tmp_path / "data"
    shutil.copytree(root, copy)
    log = sorted((copy / f"{TOPIC}-2").glob("*.log"))[0]
    log.unlink()
    os.mkfifo(log)
    r = run_on_spark(["grep", *LOCAL2, "--count", "--tombstones", str(copy)])
    assert r.exit_code == 2, r.errtext[-3000:]
    assert f"kseg: error: {log}: " in r.errtext and "not a regular file" in r.errtext
    assert f"{TOPIC}-3: " in r.text and f"{TOPIC}-2: " not in r.text


def test_usage_errors_of_spark(root: Path) -> None:
    r = run_cli(["grep", *LOCAL2, "-j", "2", "--key", "k", str(root)])
    assert r.exit_code == 2 and "--jobs is for a local run" in r.errtext
