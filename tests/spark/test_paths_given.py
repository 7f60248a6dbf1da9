"""A --spark run on local[2] names every path as the same run without --spark does: relative paths given
stay relative in what the driver prints (text and JSON; JSON's logDir absolute in both), though the
executors read them absolute (issue 33: the same path for a file in every line of a run)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, run_cli
from tests.spark.shared import run_on_spark

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")

LOCAL2 = ["--spark", "--master", "local[2]"]


def _run(args: list[str], cwd: Path) -> tuple[int, str, list[str]]:
    """``kseg ARGS`` in ``cwd`` (relative paths), a --spark job on the shared session (tests/spark/shared.py)."""
    r = run_on_spark(args, cwd=cwd) if "--spark" in args else run_cli(args, cwd=cwd)
    assert "Traceback" not in r.errtext, r.errtext[-3000:]
    return r.exit_code, r.text, [line for line in r.errtext.splitlines() if line.startswith("kseg: ")]


def _no_absolute(text: str, root: Path) -> None:
    """No path under ``root`` is shown absolute, but for JSON's logDir (absolute by the schema)."""
    for line in text.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            row.pop("logDir", None)
            line = json.dumps(row)
        assert str(root) not in line, line


@pytest.fixture
def brokers(tmp_path: Path) -> Path:
    for broker in ("b1", "b2"):
        shutil.copytree(CORPUS_DATA / "txn-v2-0", tmp_path / "fleet" / broker / "data" / "orders-0")
    return tmp_path


def test_spark_names_paths_as_the_local_run_does(brokers: Path) -> None:
    cwd = brokers
    for args in (["logdir", "fleet"], ["diff", "--format", "json", "--roots", "fleet/b1", "fleet/b2"]):
        local = _run(args, cwd)
        spark = _run([*args, *LOCAL2], cwd)
        assert spark == local, args
        _no_absolute(spark[1] + "\n".join(spark[2]), cwd)
    # verify-index --spark prints the local run's lines: each segment's (clean ones too), the notes, the summary
    texts = []
    for args in (["verify-index", "fleet/b1/data"], ["verify-index", "--format", "json", "fleet"]):
        local = _run(args, cwd)
        spark = _run([*args[:1], *LOCAL2, *args[1:]], cwd)
        assert spark == local and local[0] == 0, (spark, local)
        _no_absolute(spark[1] + "\n".join(spark[2]), cwd)
        texts.append(spark[1])
    assert "orders-0/00000000000000000000: clean (" in texts[0]
    assert "note: fleet/b1/data/orders-0/leader-epoch-checkpoint: absent" in texts[0]
    segments = [json.loads(line) for line in texts[1].splitlines() if '"type":"segment"' in line]
    assert {row["logDir"][-7:] for row in segments} == {"b1/data", "b2/data"}  # every segment, both brokers'
    assert len(segments) == 2 * len(list((CORPUS_DATA / "txn-v2-0").glob("*.log")))
    exported = _run(["export", *LOCAL2, "-o", "out", "fleet/b1"], cwd)
    assert exported[0] == 0 and "written to out" in exported[1], exported
    _no_absolute(exported[1] + "\n".join(exported[2]), cwd)
