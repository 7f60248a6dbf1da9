"""``kseg grep --jobs N`` deals the segments of a partition, not only partitions, to worker processes, and
prints exactly what one process prints: the same stdout and stderr bytes and exit code for text, JSON,
``--count`` and ``--limit`` (cut at the same match, with what was read until then), an offset range's
end, damage met on the way and a segment that cannot be read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.cli.grep_data import TOPIC, write_topic
from tests.conftest import run_cli, run_subprocess


@pytest.fixture(scope="module")
def topic(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("grep-jobs") / "data"
    write_topic(root)
    return root


def _same(args: list[str], path: Path) -> tuple[int, bytes, bytes]:
    """The run with one process (the CLI in this one) and with two (a real process dealing to a worker): the
    same exit code, stdout and stderr; the first's."""
    one = run_cli(["grep", "-j", "1", *args, str(path)])
    two = run_subprocess(["grep", "-j", "2", *args, str(path)])
    assert b"Traceback" not in two.stderr, two.stderr.decode()
    assert (two.exit_code, two.stdout, two.stderr) == (one.exit_code, one.stdout, one.stderr)
    return one.exit_code, one.stdout, one.stderr


def test_one_partitions_segments_are_dealt_to_several_tasks(topic: Path) -> None:
    """The premise of the tests below: with two processes, one partition's segments are several tasks."""
    from kseg.ops.grep.query import Query
    from kseg.runtime.grep_deal import deal, tasks_wanted
    from kseg.storage.stores.find import discover

    parts = discover([str(topic / f"{TOPIC}-1")], [])
    query = Query(tombstones=True)
    logs = [seg for seg in parts[0].segments if seg.log]
    assert len(logs) >= 4
    plans, tasks = deal(parts, query, None, 1 << 20, None, "", tasks_wanted(parts, query, 2))
    assert len(tasks) == len(logs)
    assert [[seg.base_offset for seg in t.partition.segments] for t in tasks] == [[s.base_offset] for s in logs]
    assert [piece.task for piece in plans[0][1]] == list(range(len(logs)))


ARGS = [
    ["--value-regex", "qty"],
    ["--format", "json", "--header", "tenant"],
    ["--count", "--value-regex", "red"],
    ["--format", "json", "--count", "--tombstones"],
    ["--limit", "1", "--value-regex", "qty"],
    ["--limit", "40", "--value-regex", "qty"],  # the cut in a later segment than the first
    ["--format", "json", "--limit", "33", "--value-regex", "qty"],
    ["--count", "--limit", "45", "--value-regex", "qty"],
    ["--format", "json", "--count", "--limit", "50", "--value-regex", "qty"],
    ["--format", "json", "--from-offset", "40", "--to-offset", "70", "--value-regex", "qty"],
    ["--value-regex", "no such value"],
]


@pytest.mark.parametrize("args", ARGS, ids=lambda a: " ".join(a))
def test_one_partition_in_two_processes_prints_what_one_prints(topic: Path, args: list[str]) -> None:
    code, out, _ = _same(args, topic / f"{TOPIC}-1")
    assert code in (0, 1) and (out or code == 1)
    if "--limit" in args and "--count" not in args:
        n = int(args[args.index("--limit") + 1])
        assert len(out.splitlines()) == n + ("json" in args)  # the matches (and the summary row)


@pytest.mark.parametrize("args", ARGS[:3] + ARGS[5:7])
def test_a_log_root_in_two_processes_prints_what_one_prints(topic: Path, args: list[str]) -> None:
    _same(args, topic)


@pytest.fixture(scope="module")
def damaged(topic: Path, tmp_path_factory) -> Path:
    """A partition whose second segment has a damaged batch and whose third ends in a partial batch."""
    part = tmp_path_factory.mktemp("grep-jobs-damaged") / f"{TOPIC}-1"
    shutil.copytree(topic / f"{TOPIC}-1", part)
    logs = sorted(part.glob("*.log"))
    with open(logs[1], "r+b") as f:  # a byte of the first batch's records: its CRC fails
        f.seek(70)
        byte = f.read(1)
        f.seek(70)
        f.write(bytes([byte[0] ^ 0xFF]))
    with open(logs[2], "r+b") as f:
        f.truncate(os.path.getsize(logs[2]) - 5)
    return part


@pytest.mark.parametrize("limit", [None, 1, 25, 40, 70, 90])
@pytest.mark.parametrize("form", ["text", "json"])
def test_damage_is_said_as_one_process_says_it(damaged: Path, limit: int | None, form: str) -> None:
    """The corrupt lines (stderr) and unread rows of the segments read, none of those after ``--limit``'s
    match."""
    args = ["--format", form, "--value-regex", "qty"] + ([] if limit is None else ["--limit", str(limit)])
    code, _, err = _same(args, damaged)
    assert code == 0
    if limit is None:
        assert err.count(b"kseg: corrupt: ") >= 2, err.decode()


def test_a_segment_that_cannot_be_read_ends_its_partition_as_in_one_process(topic: Path, tmp_path: Path) -> None:
    """The matches of the segments before it, its error line, no count for the partition, exit 2."""
    part = tmp_path / f"{TOPIC}-1"
    shutil.copytree(topic / f"{TOPIC}-1", part)
    log = sorted(part.glob("*.log"))[2]
    log.unlink()
    os.mkfifo(log)
    for args in (["--value-regex", "qty"], ["--format", "json", "--count", "--value-regex", "qty"]):
        code, out, err = _same(args, part)
        assert code == 2 and f"kseg: error: {log}: ".encode() in err and b"not a regular file" in err
    code, out, err = _same(["--value-regex", "qty"], part)
    assert out  # the first two segments' matches
