"""``kseg.ops.rebuild.run``: a segment's and a run's exit code, decided by ``kseg.storage.outcome.exit_code``."""

from __future__ import annotations

import json
import shutil

import pytest

from kseg.limits import EXIT_ERROR, EXIT_OK, EXIT_PROBLEMS
from kseg.ops.rebuild.rebuild import resolve
from kseg.ops.rebuild.run import Settings, Verdict, exit_code, rebuild_target
from kseg.ops.rebuild.write import (
    ABSENT,
    DIFFERS,
    FAILED,
    KEPT,
    MISSING,
    OLDER_RULE,
    REFUSED,
    REPLACED,
    SAME,
    SKIPPED,
    UNCHANGED,
    WRITTEN,
    FileOutcome,
)
from kseg.storage.partition import Partition
from tests.conftest import CORPUS_DATA, run_cli
from tests.stores import local

CHECK = Settings(check=True, force=False, index_interval_bytes=4096, max_index_bytes=10 << 20, limit=40 << 20)


def _done(name: str, tmp_path):
    shutil.copytree(CORPUS_DATA / name, tmp_path / name)
    (target,) = resolve([str(tmp_path / name)], [])
    return list(rebuild_target(target, None, CHECK))


@pytest.mark.parametrize(
    "statuses, code",
    [
        ((SAME, UNCHANGED, WRITTEN, REPLACED, KEPT, OLDER_RULE, ABSENT, SKIPPED), EXIT_OK),
        ((SAME, DIFFERS), EXIT_PROBLEMS),
        ((MISSING,), EXIT_PROBLEMS),
        ((DIFFERS, REFUSED), EXIT_ERROR),
        ((SAME, FAILED), EXIT_ERROR),
    ],
)
def test_a_segments_code_follows_its_files(tmp_path, statuses, code) -> None:
    done = _done("plain-v2-0", tmp_path)[0]
    assert not done.rec.damaged
    outcomes = [FileOutcome(".index", "x.index", 0, s) for s in statuses]
    assert exit_code(done.rec, outcomes) == code


@pytest.mark.parametrize("name", ["corrupt-crc-0", "corrupt-truncated-0", "corrupt-garbage-tail-0"])
def test_invalid_data_in_the_log_is_a_problem(tmp_path, name) -> None:
    codes = {exit_code(d.rec, d.outcomes) for d in _done(name, tmp_path)}
    assert EXIT_PROBLEMS in codes and EXIT_ERROR not in codes


def test_the_identity_of_the_partition_travels_with_the_segment(tmp_path) -> None:
    done = _done("plain-v2-0", tmp_path)[0]
    part = Partition(str(tmp_path / "plain-v2-0"), store=local())
    assert (done.rec.log_dir, done.rec.partition) == (part.log_dir, "plain-v2-0") == (str(tmp_path), part.name)


def test_a_runs_verdict_is_its_worst_segment_and_an_unlistable_directory_is_2(tmp_path) -> None:
    verdict = Verdict()
    assert verdict.code == EXIT_OK
    clean = _done("plain-v2-0", tmp_path)[0]
    assert verdict.segment(clean.rec, clean.outcomes) == EXIT_OK and verdict.code == EXIT_OK
    damaged = _done("corrupt-crc-0", tmp_path)[-1]
    assert verdict.segment(damaged.rec, damaged.outcomes) == EXIT_PROBLEMS and verdict.code == EXIT_PROBLEMS
    assert verdict.segment(clean.rec, clean.outcomes) == EXIT_OK and verdict.code == EXIT_PROBLEMS
    verdict.unreadable()
    assert verdict.code == EXIT_ERROR


@pytest.mark.parametrize("how", ["directory", "log", "bare log in its directory"])
def test_json_rows_name_the_partition_from_the_values_handed_over(tmp_path, how) -> None:
    """render builds the ``logDir``/``partition`` of a row from the segment's values, not a Partition."""
    shutil.copytree(CORPUS_DATA / "plain-v2-0", tmp_path / "plain-v2-0")
    part = tmp_path / "plain-v2-0"
    log = "00000000000000000000.log"
    arg, cwd = {
        "directory": (str(part), None),
        "log": (str(part / log), None),
        "bare log in its directory": (log, part),
    }[how]
    r = run_cli(["rebuild-index", "--check", "--format", "json", arg], cwd=cwd)
    rows = [json.loads(line) for line in r.text.splitlines()]
    segments = [row for row in rows if row["type"] == "segment"]
    assert r.exit_code == EXIT_OK and segments
    assert {(row["logDir"], row["partition"]) for row in segments} == {(str(tmp_path), "plain-v2-0")}
