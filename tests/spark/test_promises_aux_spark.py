"""The conformance rows of the files around the segments under ``--spark``, from the same table.

Every cell of ``tests/cli/test_promises_aux.py`` (an auxiliary file kind x a command that reads it) whose
command has ``--spark`` is run again with ``--spark --master local[2]`` on the shared session: a FIFO in the
file's place, the file one byte past its bound, the file truncated -- the same exit code, one line naming
the file and the cause, no traceback, no verdict after a refusal, inputs unchanged.  So are the stray ``²``
names, a partition directory named ``plain-²`` and ``verify-index --resume`` of a FIFO or ``/dev/zero``.
A kind or a command added to the table gets its Spark row here.  The permission cells stay local: they need
a real process without root's capabilities, and a JVM started for each (the reader refusing is the same).
"""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path

import pytest

from tests.cli.test_promises import ARGS, READING, Tree, _clean_stderr, _no_verdict
from tests.cli.test_promises_aux import (
    BOUNDED,
    CELLS,
    ODD_PARTITION,
    STRAY,
    STRAY_EXIT,
    TRUNCATED,
    Args,
    _args,
    _hashes,
    fifo_cell,
    huge_cell,
    truncated_cell,
)
from tests.conftest import CORPUS_DATA
from tests.spark.shared import run_on_spark

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")

LOCAL2 = ["--spark", "--master", "local[2]"]


def _has_spark(command: str) -> bool:
    from kseg.cli.main import COMMANDS

    module, attr, _ = COMMANDS[command]
    return any(p.name == "spark" for p in getattr(importlib.import_module(module), attr).params)


SPARK = {c for c in READING if _has_spark(c)}
#: the arguments of a command whose local ones --spark does not take: diff compares log roots (``--roots``),
#: tiered lists the store on the cluster (``--remote``)
ON_SPARK: dict[str, Args] = {
    **ARGS,
    "diff": lambda t: ["--roots", str(t.good.parent), str(t.bad.parent)],
    "tiered": lambda t: [*ARGS["tiered"](t), "--remote", str(t.good.parent)],
}


def _spark_args(t: Tree, kind: str, command: str) -> list[str]:
    return _args(t, kind, command, LOCAL2, ON_SPARK)


def test_the_spark_commands_are_those_the_table_knows() -> None:
    assert SPARK == {"diff", "export", "grep", "logdir", "tiered", "verify-index"}
    assert {c for _, c in CELLS} & SPARK == SPARK  # every Spark command reads one kind at least


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("kind,command", [cell for cell in CELLS if cell[1] in SPARK])
def test_fifo_on_spark(tmp_path: Path, kind: str, command: str) -> None:
    fifo_cell(tmp_path, kind, command, lambda t: run_on_spark(_spark_args(t, kind, command)))


@pytest.mark.parametrize("kind,command", [cell for cell in BOUNDED if cell[1] in SPARK])
def test_huge_on_spark(tmp_path: Path, kind: str, command: str) -> None:
    huge_cell(tmp_path, kind, command, lambda t: run_on_spark(_spark_args(t, kind, command)))


@pytest.mark.parametrize("kind,command", [cell for cell in TRUNCATED if cell[1] in SPARK])
def test_truncated_on_spark(tmp_path: Path, kind: str, command: str) -> None:
    truncated_cell(tmp_path, kind, command, lambda t: run_on_spark(_spark_args(t, kind, command)))


@pytest.mark.parametrize("command", sorted(SPARK))
def test_stray_names_on_spark(tmp_path: Path, command: str) -> None:
    t = Tree(tmp_path)
    for d in (t.bad, t.good):
        (d / STRAY).write_text("x")
        (d.parent / STRAY).mkdir()
    r = run_on_spark([command, *LOCAL2, *ON_SPARK[command](t)])
    assert "internal error" not in r.errtext, r.errtext
    _clean_stderr(command, r.errtext)
    assert r.exit_code == STRAY_EXIT[command], (r.exit_code, r.text[-3000:], r.errtext)


@pytest.mark.parametrize("command", sorted(set(ODD_PARTITION) & SPARK))
def test_partition_directory_named_with_a_superscript_on_spark(tmp_path: Path, command: str) -> None:
    d = tmp_path / f"plain-{STRAY}"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", d)
    r = run_on_spark([command, *LOCAL2, *ODD_PARTITION[command](d)])
    assert "internal error" not in r.errtext, r.errtext
    _clean_stderr(command, r.errtext)
    assert r.exit_code == 0, (r.exit_code, r.text[-3000:], r.errtext)


@pytest.mark.parametrize("what", ["fifo", "/dev/zero"])
def test_resume_from_a_fifo_or_a_device_on_spark(tmp_path: Path, what: str) -> None:
    t = Tree(tmp_path)
    path = tmp_path / "fifo" if what == "fifo" else Path(what)
    if what == "fifo":
        os.mkfifo(path)
    before = _hashes(t)
    r = run_on_spark(["verify-index", *LOCAL2, "--resume", str(path), "--report", str(t.out / "n.jsonl"), str(t.good)])
    assert r.exit_code == 2 and len(r.errtext.splitlines()) == 1, r.errtext
    assert f"{path}: cannot resume from it: a " in r.errtext and "not a report" in r.errtext
    _no_verdict(r.text, 2)
    assert _hashes(t) == before and not (t.out / "n.jsonl").exists()
