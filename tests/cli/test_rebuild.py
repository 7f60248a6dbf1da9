"""``kseg rebuild-index``: the real command on copies of corpus partitions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, as_unprivileged_root, assert_no_traceback, kseg_argv, run_cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def copy(tmp_path, name: str, as_name: str | None = None):
    dest = tmp_path / (as_name or name)
    shutil.copytree(CORPUS_DATA / name, dest)
    return dest


def snapshot(directory) -> dict:
    return {p: (directory / p).read_bytes() for p in sorted(os.listdir(directory))}


def test_check_on_clean_partitions_is_exit_0() -> None:
    r = run_cli(["rebuild-index", "--check", "plain-v2-0", "txn-v2-0", "large-v2-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 0, r.text
    assert r.text.splitlines()[-1] == (
        "5 segments; files: 12 same; 3 .txnindex files not needed (no aborted transaction)"
    )
    assert "txn-v2-0/00000000000000000036.txnindex: 2 entries: same as the existing file" in r.text


def test_check_on_the_whole_corpus_reports_what_differs_and_exit_1() -> None:
    before = snapshot(CORPUS_DATA / "corrupt-crc-0")
    r = run_cli(["rebuild-index", "--check", "--format", "json", "."], cwd=CORPUS_DATA)
    assert r.exit_code == 1
    objs = [json.loads(line) for line in r.text.splitlines()]
    summary = objs.pop()
    assert summary["type"] == "summary" and summary["exitCode"] == 1 and summary["damagedLogs"] == 4
    differs = sorted({os.path.dirname(f["file"]) for o in objs for f in o["files"] if f["status"] == "differs"})
    assert differs == ["./corrupt-compressed-0", "./corrupt-crc-0", "./corrupt-index-0", "./corrupt-timeindex-0"]
    # an active segment's preallocated index (as verify-index: healthy, noted): its used entries are the same
    tails = [f for o in objs for f in o["files"] if f["file"].startswith("./prealloc-index-0/") and f["rule"]]
    assert [(f["kind"], f["status"]) for f in tails] == [("index", "same"), ("timeindex", "same")]
    assert all("preallocated zero tail" in f["rule"] for f in tails)
    # healthy files written by the pre-KAFKA-806 rule (one entry per multi-batch append): valid, not a difference
    older = sorted({os.path.dirname(f["file"]) for o in objs for f in o["files"] if f["status"] == "older-rule"})
    assert older == ["./follower-v2-0", "./v0-none-0", "./v1-logappendtime-none-0", "./v1-none-0"]
    crc = next(o for o in objs if o["path"] == "./corrupt-crc-0/00000000000000000000.log")
    assert (crc["validBytes"], crc["truncateBytes"], crc["stop"]["position"]) == (3117, 25520, 3117)
    assert snapshot(CORPUS_DATA / "corrupt-crc-0") == before


def test_refuses_to_replace_without_force_then_replaces(tmp_path) -> None:
    d = copy(tmp_path, "corrupt-index-0")
    before = snapshot(d)
    r = run_cli(["rebuild-index", str(d)])
    assert r.exit_code == 2
    assert (
        "00000000000000000000.index: 5 entries: not written: the existing file differs (entry #1: existing "
        "(offset 106, position 10169), rebuilt (offset 103, position 10169)); give --force to replace it" in r.text
    )
    assert snapshot(d) == before
    r = run_cli(["rebuild-index", "--force", str(d)])
    assert r.exit_code == 0 and "replaced the existing file" in r.text
    assert (d / "00000000000000000000.index").read_bytes() == (
        CORPUS_DATA / "plain-v2-0" / "00000000000000000000.index"
    ).read_bytes()
    assert sorted(os.listdir(d)) == sorted(before)  # no stray files
    r = run_cli(["rebuild-index", str(d)])
    assert r.exit_code == 0 and "unchanged (the existing file is identical)" in r.text


def test_missing_indexes_are_written(tmp_path) -> None:
    d = copy(tmp_path, "txn-v2-0")
    originals = snapshot(d)
    for p in os.listdir(d):
        if p.endswith(("index",)):
            os.unlink(d / p)
    r = run_cli(["rebuild-index", str(d)])
    assert r.exit_code == 0, r.text
    assert snapshot(d) == originals


def test_output_dir_for_a_partition_and_for_a_log_root(tmp_path) -> None:
    out = tmp_path / "out"
    r = run_cli(["rebuild-index", "--output-dir", str(out), "plain-v2-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 0
    assert sorted(os.listdir(out)) == [
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "00000000000000000251.index",
        "00000000000000000251.timeindex",
    ]
    root = tmp_path / "root"
    root.mkdir()
    for name in ("plain-v2-0", "txn-v2-0"):
        copy(root, name)
    copy(root, "plain-v2-0", "plain-v2-0.0123456789abcdef0123456789abcdef-delete")
    out2 = tmp_path / "out2"
    r = run_cli(["rebuild-index", "--output-dir", str(out2), str(root)])
    assert r.exit_code == 0
    assert sorted(os.listdir(out2)) == ["plain-v2-0", "txn-v2-0"]
    assert "skipped, a partition directory in transition" in r.errtext
    assert (out2 / "txn-v2-0" / "00000000000000000036.txnindex").read_bytes() == (
        CORPUS_DATA / "txn-v2-0" / "00000000000000000036.txnindex"
    ).read_bytes()


def test_a_single_segment_and_the_interval_option(tmp_path) -> None:
    out = tmp_path / "out"
    r = run_cli(
        [
            "rebuild-index",
            "--output-dir",
            str(out),
            "--index-interval-bytes",
            "0",
            "plain-v2-0/00000000000000000251.log",
        ],
        cwd=CORPUS_DATA,
    )
    assert r.exit_code == 0
    assert sorted(os.listdir(out)) == ["00000000000000000251.index", "00000000000000000251.timeindex"]
    assert len((out / "00000000000000000251.index").read_bytes()) == 15 * 8  # every batch but the first


def test_a_damaged_log_is_reported_and_left_alone(tmp_path) -> None:
    d = copy(tmp_path, "corrupt-garbage-tail-0")
    log = (d / "00000000000000000000.log").read_bytes()
    r = run_cli(["rebuild-index", str(d)])
    assert r.exit_code == 1
    assert (
        "recovery stops at byte 28637: found record size 5 smaller than minimum record overhead (14); "
        "Kafka's recovery would truncate 20 bytes (kseg leaves the log as it is)"
    ) in r.text
    assert (d / "00000000000000000000.log").read_bytes() == log


@pytest.mark.parametrize(
    "args,text",
    [
        (["rebuild-index", "--check", "--force", "plain-v2-0"], "it takes neither --output-dir nor --force"),
        (["rebuild-index", "plain-v2-0/00000000000000000000.index"], "not a .log file"),
        (["rebuild-index", "nowhere"], "nowhere: no such file or directory"),
        (["rebuild-index"], "Missing argument"),
        (["rebuild-index", "--index-interval-bytes", "-1", "plain-v2-0"], "-1"),
    ],
)
def test_usage_errors(args, text: str) -> None:
    r = run_cli(args, cwd=CORPUS_DATA)
    assert_no_traceback(r)
    assert r.exit_code == 2 and text in r.errtext, r.errtext


def test_an_output_dir_that_cannot_be_made_is_exit_2(tmp_path) -> None:
    (tmp_path / "file").write_bytes(b"")
    r = run_cli(["rebuild-index", "--output-dir", str(tmp_path / "file" / "out"), "plain-v2-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 2 and "not written: " in r.text and "Not a directory" in r.text


ENOSPC = textwrap.dedent("""
    import errno, os, sys
    from kseg.storage import atomic
    real = os.write
    calls = []
    def write(fd, data):
        calls.append(fd)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)
    atomic.CHUNK = 8
    atomic.os.write = write
    sys.argv = ["kseg", "rebuild-index", "--force", sys.argv[1]]
    from kseg.cli.main import main
    main()
""")


def test_no_space_left_mid_file_in_a_real_process(tmp_path) -> None:
    d = copy(tmp_path, "corrupt-index-0")
    before = snapshot(d)
    p = subprocess.run([sys.executable, "-c", ENOSPC, str(d)], capture_output=True, cwd=ROOT, timeout=120)
    assert p.returncode == 2, p.stderr
    assert b"Traceback" not in p.stderr
    assert b"00000000000000000000.index: 5 entries: not written: " in p.stdout
    assert b"cannot write: No space left on device" in p.stdout
    assert snapshot(d) == before  # the old index, and no temporary file


def test_help() -> None:
    r = run_cli(["rebuild-index", "--help"])
    assert r.exit_code == 0 and "LogSegment.recover" in r.text and "Exit codes" in r.text


def test_an_index_without_its_log_is_noted(tmp_path) -> None:
    d = copy(tmp_path, "plain-v2-0")
    (d / "00000000000000000251.log").unlink()
    r = run_cli(["rebuild-index", "--check", str(d)])
    assert r.exit_code == 0 and r.text.splitlines()[-1].startswith("1 segment;")
    assert "00000000000000000251.index, 00000000000000000251.timeindex without 00000000000000000251.log" in r.errtext


def test_two_brokers_log_roots(tmp_path) -> None:
    """The same partitions under two log roots: each checked once, named by its path; writing both into
    one --output-dir would mix the replicas, so it is refused before any work."""
    from tests.trees import two_brokers

    b1, b2 = two_brokers(tmp_path)
    r = run_cli(["rebuild-index", "--check", str(b1), str(b2), str(b1), str(b2 / "txn-v2-0")])
    assert r.exit_code == 1, r.text  # b2's damaged log: recovery would truncate it
    assert r.text.splitlines()[-1].startswith("10 segments;")
    assert f"{b2}/plain-v2-0/00000000000000000251.log: 0 valid batches" in r.text
    assert f"{b1}/plain-v2-0/00000000000000000251.log: 16 batches, 22265 bytes, all valid" in r.text
    out = tmp_path / "out"
    r = run_cli(["rebuild-index", "--output-dir", str(out), str(b1), str(b2)])
    assert r.exit_code == 2 and r.text == "" and not out.exists()
    assert "would both be written to --output-dir subdirectory plain-v2-0/" in r.errtext


def test_a_note_recurring_per_segment_prints_once_with_its_count(tmp_path) -> None:
    """Segments after a truncated one: recovery would delete each; one note line names how many."""
    d = copy(tmp_path, "corrupt-truncated-0")
    later = CORPUS_DATA / "plain-v2-0" / "00000000000000000251.log"
    for base in (100, 200, 300, 400):
        shutil.copy(later, d / f"{base:020d}.log")
    r = run_cli(["rebuild-index", "--check", str(d)])
    notes = [line for line in r.text.splitlines() if line.startswith("note")]
    assert len(notes) == 1, notes
    assert notes[0].startswith("note: 4 segments: Kafka's recovery would delete this segment")
    assert notes[0].endswith("00000000000000000300.log and 1 more)")
    j = run_cli(["rebuild-index", "--check", "--format", "json", str(d)])
    rows = [json.loads(line) for line in j.text.splitlines()][:-1]
    assert sum(len(row["notes"]) for row in rows) == 4  # JSON keeps every note on its segment


def test_quiet_prints_only_segments_with_something_wrong_and_the_summary() -> None:
    r = run_cli(["rebuild-index", "-q", "--check", "plain-v2-0", "corrupt-index-0", "follower-v2-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 1
    lines = r.text.splitlines()
    assert lines[0] == "corrupt-index-0/00000000000000000000.log: 22 batches, 28637 bytes, all valid"
    assert not any(line.startswith(("plain-v2-0", "follower-v2-0")) for line in lines)
    assert lines[-1] == (
        "4 segments; files: 5 same, 2 older-rule, 1 differs; 4 .txnindex files not needed (no aborted transaction)"
    )


def test_check_never_says_written_of_a_file_it_cannot_read(tmp_path: Path) -> None:
    """``--check`` writes nothing: an existing index it cannot read is ``not compared`` (with the reason),
    exit 2 -- it said "not written"."""
    part = tmp_path / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    index = part / "00000000000000000000.index"
    index.chmod(0)
    p = subprocess.run(
        as_unprivileged_root(kseg_argv("rebuild-index", "--check", str(part))),
        capture_output=True,
    )
    out, err = p.stdout.decode(), p.stderr.decode()
    assert p.returncode == 2, err
    assert "not written" not in out + err
    assert f"  {index}: 5 entries: not compared: the existing file could not be read: permission denied" in out
    assert err == f"kseg: error: {index}: not compared: the existing file could not be read: permission denied\n"
