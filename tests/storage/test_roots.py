"""One discovery rule for the paths every command takes (kseg/storage/roots.py): a partition directory, a
log directory, or a directory with log directories at most three levels below it (a broker's directory
holding ``data/``, a fleet root ``<root>/<broker>/<log dir>``), the same for each command, locally and on
an object store."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kseg.storage import roots
from tests.conftest import CORPUS_DATA, assert_no_traceback, run_cli

NOTE = f"fleet/b3: {roots.NO_LOG_DIR}"


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """``fleet/b1/data/orders-0``, ``fleet/b2/data/orders-0``, and ``fleet/b3`` holding no log directory."""
    for broker in ("b1", "b2"):
        shutil.copytree(CORPUS_DATA / "txn-v2-0", tmp_path / "fleet" / broker / "data" / "orders-0")
    (tmp_path / "fleet" / "b3" / "junk").mkdir(parents=True)
    (tmp_path / "fleet" / "b3" / "junk" / "readme").write_text("not kafka")
    return tmp_path


COMMANDS = [
    ["verify-index"],
    ["rebuild-index", "--check"],
    ["txn"],
    ["compaction"],
    ["logdir"],
    ["export", "-o", "out.parquet"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_fleet_root_is_read_by_every_command(fleet: Path, command: list[str]) -> None:
    r = run_cli([*command, "fleet"], cwd=fleet)
    assert r.exit_code == 0, (r.text, r.errtext)
    assert_no_traceback(r)
    assert f"kseg: note: {NOTE}" in r.errtext.splitlines()  # a directory with no log directory is named
    if command[0] == "export":
        assert "104 records from 4 splits written" in r.text  # both replicas' segments
    else:
        assert "fleet/b1/data" in r.text and "fleet/b2/data" in r.text, r.text


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_broker_directory_holding_its_log_directory_is_read(fleet: Path, command: list[str]) -> None:
    r = run_cli([*command, "fleet/b1"], cwd=fleet)
    assert r.exit_code == 0, (r.text, r.errtext)
    assert "fleet/b2" not in r.text + r.errtext
    if command[0] != "export":
        assert "fleet/b1/data" in r.text


def test_diff_roots_takes_broker_directories(fleet: Path) -> None:
    r = run_cli(["diff", "--roots", "fleet/b1", "fleet/b2"], cwd=fleet)
    assert r.exit_code == 0 and r.text.splitlines()[0] == "orders-0: 2 replicas, identical", r.text


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_log_directories_deeper_than_the_depth_are_an_error_naming_it(tmp_path: Path, command: list[str]) -> None:
    deep = tmp_path / "deep"
    shutil.copytree(CORPUS_DATA / "txn-v2-0", deep / "1" / "2" / "3" / "data" / "orders-0")  # log dir 4 down
    r = run_cli([*command, str(deep)], cwd=tmp_path)
    assert r.exit_code == 2 and r.text == ""
    assert str(deep) in r.errtext and ("3 levels" in r.errtext or "not a log directory" in r.errtext), r.errtext
    r = run_cli([*command, str(deep / "1")], cwd=tmp_path)  # three levels down: read
    assert r.exit_code == 0, r.errtext


def test_the_depth_is_documented() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "options.md").read_text()
    assert f"at most {roots.DEPTH} levels" in docs or "at most three levels" in docs


@pytest.mark.parametrize(
    "command, note",
    [
        (["txn"], "no replication-offset-checkpoint in fleet/b1/data: the log end offset stands in"),
        (["compaction"], "no cleaner-offset-checkpoint in fleet/b1/data: the dirty section is not known"),
    ],
)
def test_a_note_of_many_partitions_prints_once_with_its_count(fleet: Path, command: list[str], note: str) -> None:
    """Five partitions of one log directory without its checkpoint: one note line naming how many and the
    first three, after the partitions (one partition alone keeps its note in its block)."""
    for n in range(1, 5):
        shutil.copytree(CORPUS_DATA / "txn-v2-0", fleet / "fleet" / "b1" / "data" / f"orders-{n}")
    r = run_cli([*command, "fleet/b1/data"], cwd=fleet)
    assert r.exit_code == 0, r.errtext
    lines = [line for line in r.text.splitlines() if "note" in line and "checkpoint in" in line]
    assert len(lines) == 1 and lines[0].startswith(f"note: 5 partitions: {note}"), r.text
    assert lines[0].endswith("(fleet/b1/data/orders-0, fleet/b1/data/orders-1, fleet/b1/data/orders-2 and 2 more)")
    assert r.text.rstrip().splitlines()[-1] == lines[0]  # after the last partition
    alone = run_cli([*command, "fleet/b1/data/orders-3"], cwd=fleet)
    assert f"  note: {note}" in alone.text
