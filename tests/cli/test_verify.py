"""``kseg verify-index`` through the real CLI: output, report, exit codes, jobs, log roots."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, as_unprivileged_root, assert_no_traceback, kseg_argv, run_cli, run_subprocess


def test_clean_directory_exits_0() -> None:
    r = run_cli(["verify-index", str(CORPUS_DATA / "plain-v2-0")])
    assert r.exit_code == 0
    assert r.text.splitlines() == [
        f"{CORPUS_DATA / 'plain-v2-0' / '00000000000000000000'}: clean (22 batches, 28637 bytes)",
        f"{CORPUS_DATA / 'plain-v2-0' / '00000000000000000251'}: clean (16 batches, 22265 bytes)",
        f"note: {CORPUS_DATA / 'plain-v2-0' / 'leader-epoch-checkpoint'}: absent: "
        "the batches' leader epochs not checked",
        "2 segments verified (50902 bytes), 2 clean.",
    ]


def test_every_line_names_a_segment_by_the_path_given(tmp_path: Path) -> None:
    """Issue 33: ``verify-index ci/ti-0`` named the segment ``ti-0/…`` and its problem ``ci/ti-0/….index``."""
    shutil.copytree(CORPUS_DATA / "corrupt-index-0", tmp_path / "ci" / "ti-0")
    r = run_cli(["verify-index", "ci/ti-0"], cwd=tmp_path)
    assert r.exit_code == 1
    lines = r.text.splitlines()
    assert lines[0].startswith("ci/ti-0/00000000000000000000: 1 problem")
    assert lines[1].startswith("  problem: ci/ti-0/00000000000000000000.index: entry 1")


def test_problems_exit_1_with_one_line_each() -> None:
    r = run_cli(["verify-index", str(CORPUS_DATA / "corrupt-index-0")])
    assert r.exit_code == 1
    lines = r.text.splitlines()
    assert lines[0].startswith(f"{CORPUS_DATA / 'corrupt-index-0' / '00000000000000000000'}: 1 problem")
    assert "entry 1" in lines[1] and "expected 103" in lines[1] and "found 106" in lines[1]


def test_strict_applies_kafkas_rule() -> None:
    follower = str(CORPUS_DATA / "follower-v2-0")
    assert run_cli(["verify-index", follower]).exit_code == 0
    r = run_cli(["verify-index", "--strict", follower])
    assert r.exit_code == 1 and r.text.count("index-mismatch") == 9


def test_log_root_with_report_and_jobs(tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir()
    for name in ("plain-v2-0", "corrupt-crc-0", "txn-v2-0"):
        shutil.copytree(CORPUS_DATA / name, root / name)
    shutil.copytree(CORPUS_DATA / "plain-v2-0", root / "old-0.0123456789abcdef0123456789abcdef-delete")
    report = tmp_path / "r.jsonl"
    r1 = run_subprocess(["verify-index", "--jobs", "2", "--report", str(report), str(root)])
    assert r1.exit_code == 1
    assert "skipped, a partition directory in transition" in r1.errtext
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    segments = [row for row in rows if row["type"] == "segment"]
    assert {row["partition"] for row in segments} == {"plain-v2-0", "corrupt-crc-0", "txn-v2-0"}
    assert [row["kind"] for row in rows if row["type"] == "problem"] == ["crc"]
    r2 = run_cli(["verify-index", "--format", "json", str(root)])
    objs = [json.loads(line) for line in r2.text.splitlines()]
    assert objs[-1]["type"] == "summary" and objs[-1]["problems"] == 1 and objs[-1]["exitCode"] == 1
    assert [o for o in objs if o["type"] != "summary"] == rows


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli(["verify-index", str(tmp_path / "nope")])
    assert r.exit_code == 2
    assert_no_traceback(r)


def test_single_segment_file() -> None:
    r = run_cli(["verify-index", str(CORPUS_DATA / "plain-v2-0" / "00000000000000000251.log")])
    assert r.exit_code == 0 and r.text.count("clean (") == 1


def test_unreadable_log_is_a_failed_segment_exit_2(tmp_path: Path) -> None:
    part = tmp_path / "p-0"
    part.mkdir()
    (part / "00000000000000000000.log").mkdir()  # a directory where the log should be
    shutil.copyfile(CORPUS_DATA / "plain-v2-0" / "00000000000000000000.index", part / "00000000000000000000.index")
    r = run_cli(["verify-index", str(part)])
    assert r.exit_code == 2 and "FAILED" in r.text


# --- replicas under two log directories are two logs (issue 10, section 2) ---


def _report_rows(path: Path) -> list[dict]:
    """A report's rows: one JSON Lines file, or (with --spark) a directory of part files."""
    if path.is_dir():  # PATH/part-*.jsonl (docs/spark.md, "The report")
        return [row for part in sorted(path.glob("part-*.jsonl")) for row in _report_rows(part)]
    return [json.loads(line) for line in path.read_text().splitlines()]


def _check_two_broker_run(r, report: Path, b1: Path, b2: Path) -> None:
    """Exactly the one damaged copy is reported, named by its log directory; no overlap between replicas."""
    from tests.trees import DAMAGED, REPLICATED

    assert r.exit_code == 1, r.errtext
    assert "segment-overlap" not in r.text
    lines = r.text.splitlines()
    bad = f"{b2}/{DAMAGED[0]}/{DAMAGED[1]}: 1 problem"
    assert [line for line in lines if ": clean (" not in line and not line.startswith(("  ", "note: "))][:-1] == [
        bad + " (16 batches, 22265 bytes)"
    ]
    assert f"{b1}/{DAMAGED[0]}/{DAMAGED[1]}: clean (16 batches, 22265 bytes)" in lines
    assert sum(line.startswith("  problem: ") for line in lines) == 1
    assert lines[-1] == "10 segments verified (160294 bytes), 9 clean, 1 with problems (1 problem)."
    rows = _report_rows(report)
    problems = [row for row in rows if row["type"] == "problem"]
    assert [(p["logDir"], p["partition"], p["segment"], p["kind"]) for p in problems] == [
        (str(b2), DAMAGED[0], DAMAGED[1], "crc")
    ]
    segments = [row for row in rows if row["type"] == "segment"]
    assert {(row["logDir"], row["partition"]) for row in segments} == {
        (str(b), name) for b in (b1, b2) for name in REPLICATED
    }
    assert len(segments) == 10


def test_two_brokers_replicas_are_two_logs(tmp_path: Path) -> None:
    """`verify-index b1/data b2/data`: the same partitions under two log roots; only b2's damage is
    reported (locally and with --jobs 2, in text and in the report), never segment-overlap."""
    from tests.trees import two_brokers

    b1, b2 = two_brokers(tmp_path)
    for jobs in ("1", "2"):
        report = tmp_path / f"r{jobs}.jsonl"
        r = run_subprocess(["verify-index", "--jobs", jobs, "--report", str(report), str(b1), str(b2)])
        _check_two_broker_run(r, report, b1, b2)
    # identical clean copies: clean, exit 0 (the README's /mnt/brokers/*/data)
    shutil.copyfile(b1 / "plain-v2-0" / "00000000000000000251.log", b2 / "plain-v2-0" / "00000000000000000251.log")
    r = run_cli(["verify-index", "--format", "json", str(b1), str(b2)])
    assert r.exit_code == 0, r.text
    assert json.loads(r.text.splitlines()[-1])["clean"] == 10


def test_the_same_directory_twice_is_verified_once(tmp_path: Path) -> None:
    from tests.trees import two_brokers

    b1, _ = two_brokers(tmp_path)
    once = run_cli(["verify-index", str(b1)])
    assert once.exit_code == 0 and once.text.splitlines()[-1].startswith("5 segments verified")
    for args in (
        [str(b1), str(b1)],
        [str(b1), str(b1 / "plain-v2-0")],
        [str(b1 / "txn-v2-0"), str(b1)],
        [str(b1) + "/", str(tmp_path / "b1" / ".." / "b1" / "data")],
        [str(b1 / "plain-v2-0" / "00000000000000000251.log"), str(b1)],
    ):
        r = run_cli(["verify-index", *args])
        assert r.exit_code == 0 and "segment-overlap" not in r.text, (args, r.text)
        assert r.text.splitlines()[-1] == once.text.splitlines()[-1], args
    # one partition given through two segment files: one partition, two segments
    r = run_cli(
        [
            "verify-index",
            str(b1 / "plain-v2-0" / "00000000000000000251.log"),
            str(b1 / "plain-v2-0" / "00000000000000000251.index"),
        ]
    )
    assert r.exit_code == 0 and r.text.splitlines()[-1].startswith("1 segment verified")


# --- nothing is passed that was not read (issue 10, section 3) ---


def test_an_unreadable_partition_directory_is_a_failed_row_exit_2(tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir()
    shutil.copytree(CORPUS_DATA / "plain-v2-0", root / "good-0")
    shutil.copytree(CORPUS_DATA / "plain-v2-0", root / "locked-0")
    (root / "locked-0").chmod(0)
    report = tmp_path / "r.jsonl"
    try:
        p = subprocess.run(
            as_unprivileged_root(kseg_argv("verify-index", "--report", str(report), str(root))), capture_output=True
        )
        out = p.stdout.decode()
        assert p.returncode == 2, out + p.stderr.decode()
        assert f"locked-0: FAILED: {root}/locked-0: cannot list the directory: Permission denied\n" in out
        assert out.splitlines()[-1] == "2 segments verified (50902 bytes), 2 clean; 1 directory could not be read."
        failed = [row for row in _report_rows(report) if row["status"] == "failed"]
        assert [(row["partition"], row["segment"], row["path"]) for row in failed] == [
            ("locked-0", None, str(root / "locked-0"))
        ]
        assert b"Traceback" not in p.stderr
        # --format json counts it in the summary
        p = subprocess.run(
            as_unprivileged_root(kseg_argv("verify-index", "--format", "json", str(root))), capture_output=True
        )
        summary = json.loads(p.stdout.decode().splitlines()[-1])
        assert p.returncode == 2 and summary["unreadableDirectories"] == 1 and summary["exitCode"] == 2
        # the directory given directly, and rebuild-index --check
        p = subprocess.run(as_unprivileged_root(kseg_argv("verify-index", str(root / "locked-0"))), capture_output=True)
        assert p.returncode == 2 and b"FAILED" in p.stdout and b"Traceback" not in p.stderr
        p = subprocess.run(as_unprivileged_root(kseg_argv("rebuild-index", "--check", str(root))), capture_output=True)
        out = p.stdout.decode()
        assert p.returncode == 2, out
        assert f"{root}/locked-0: cannot list the directory: Permission denied; nothing in it" in out
        assert out.splitlines()[-1].endswith("; 1 directory could not be read")
    finally:
        (root / "locked-0").chmod(0o755)


def test_an_unreadable_index_fails_the_segment_exit_2(tmp_path: Path) -> None:
    part = tmp_path / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    (part / "00000000000000000251.timeindex").chmod(0)
    p = subprocess.run(as_unprivileged_root(kseg_argv("verify-index", str(part))), capture_output=True)
    out = p.stdout.decode()
    assert p.returncode == 2, out
    assert "p-0/00000000000000000251: FAILED: " in out and "00000000000000000251.timeindex: permission denied" in out
    assert out.splitlines()[-1] == "2 segments verified (50902 bytes), 1 clean, 1 failed."


def test_a_log_that_vanished_after_listing_is_a_failed_segment(tmp_path: Path) -> None:
    """A dangling name (a file removed or a mount gone between listing and reading) is never clean."""
    part = tmp_path / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    (part / "00000000000000000251.log").unlink()
    (part / "00000000000000000251.log").symlink_to(tmp_path / "gone.log")
    r = run_cli(["verify-index", str(part)])
    assert r.exit_code == 2 and "p-0/00000000000000000251: FAILED: " in r.text and "no such file" in r.text


@pytest.mark.parametrize("command", ["verify-index", "rebuild-index"])
def test_a_path_with_nothing_to_verify_is_exit_2_with_a_hint(tmp_path: Path, command: str) -> None:
    (tmp_path / "empty").mkdir()
    brokers = tmp_path / "brokers"
    (brokers / "b1" / "data").mkdir(parents=True)
    shutil.copytree(CORPUS_DATA / "plain-v2-0", brokers / "b1" / "data" / "orders-0")
    (tmp_path / "deep" / "1" / "2" / "3").mkdir(parents=True)
    shutil.copytree(CORPUS_DATA / "plain-v2-0", tmp_path / "deep" / "1" / "2" / "3" / "4" / "orders-0")
    for path, why in (
        (tmp_path / "empty", "nothing to read here"),
        (tmp_path / "deep", "nor a log directory at most 3 levels below"),  # its log directory 4 levels down
        (brokers / "*" / "dat", "the shell passed the pattern as it is"),
    ):
        r = run_cli([command, "--check", str(path)] if command == "rebuild-index" else [command, str(path)])
        assert r.exit_code == 2, (path, r.text)
        assert r.text == "" and len(r.errtext.splitlines()) == 1 and why in r.errtext, r.errtext
        if "pattern" not in why:
            assert "log root holding partition directories" in r.errtext
    # a broker's log directory with no partitions yet is noted, not an error, beside one that has some
    (tmp_path / "b2").mkdir()
    (tmp_path / "b2" / "meta.properties").write_text("version=1\n")
    r = run_cli([command, str(tmp_path / "b2"), str(brokers / "b1" / "data")])
    assert r.exit_code == 0 and "a Kafka log directory holding no partitions" in r.errtext
    r = run_cli([command, str(tmp_path / "b2")])  # but a run with nothing at all to read is an error
    assert r.exit_code == 2 and "nothing to read" in r.errtext and r.text == ""


@pytest.mark.parametrize(
    "target, why",
    [
        ("/nonexistent/dir/r.jsonl", "/nonexistent/dir: cannot write the report: no such directory"),
        ("/proc/version", "/proc/version: cannot write the report"),
        ("{tmp}", "is a directory"),
        ("{tmp}/x.parquet", "x.parquet: a .parquet report needs --spark"),
    ],
)
def test_the_report_path_is_checked_before_any_work(tmp_path: Path, target: str, why: str) -> None:
    r = run_cli(["verify-index", "--report", target.format(tmp=tmp_path), str(CORPUS_DATA / "plain-v2-0")])
    assert r.exit_code == 2
    assert r.stdout == b""  # nothing was verified
    assert len(r.errtext.strip().splitlines()) == 1 and why in r.errtext, r.errtext
    assert_no_traceback(r)


def test_a_fifo_in_place_of_a_log_fails_instead_of_hanging(tmp_path: Path) -> None:
    """Opening a FIFO for reading blocks until a writer comes: kseg must not open one at all."""
    part = tmp_path / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    (part / "00000000000000000251.log").unlink()
    os.mkfifo(part / "00000000000000000251.log")
    r = run_subprocess(["verify-index", str(part)], timeout=60)
    assert r.exit_code == 2, r.errtext
    assert "p-0/00000000000000000251: FAILED: " in r.text and "not a regular file" in r.text
    d = run_subprocess(["dump", "--files", str(part / "00000000000000000251.log")], timeout=60)
    assert d.exit_code == 2 and "not a regular file" in d.errtext


def test_max_message_size_bounds_the_batches_read() -> None:
    """``--max-message-size`` was accepted and ignored: a batch larger is now a ``batch-too-large``
    problem, exit 1 (``--strict`` or not)."""
    part = CORPUS_DATA / "v2-snappy-0"
    assert run_cli(["verify-index", "--strict", str(part)]).exit_code == 0
    r = run_cli(["verify-index", "--strict", "--max-message-size", "1", str(part)])
    assert r.exit_code == 1
    assert (
        f"problem: {part}/00000000000000000000.log: byte 0: batch-too-large: batch larger than "
        "--max-message-size (expected <= 1 bytes, found "
    ) in r.text
    assert run_cli(["verify-index", "--max-message-size", str(1 << 20), str(part)]).exit_code == 0


def test_logs_whose_names_carry_no_base_offset_are_nothing_to_read(tmp_path: Path) -> None:
    """A tiered segment's ``<base>-<uuid>.log`` is skipped with a note; with nothing else the run is an
    error, exit 2 -- never "0 segments verified, 0 clean", exit 0."""
    part = tmp_path / "t-0"
    part.mkdir()
    shutil.copy(
        CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log", part / "00000000000000000000-Zm9vYmFyYmF6cXV4.log"
    )
    for command in (["verify-index"], ["rebuild-index", "--check"], ["txn"], ["compaction"]):
        r = run_cli([*command, str(part)])
        assert r.exit_code == 2 and r.text == "", (command, r.text)
        assert r.errtext.splitlines() == [
            f"kseg: note: {part}/00000000000000000000-Zm9vYmFyYmF6cXV4.log: skipped, the name carries no base offset",
            f"kseg: error: nothing to read: no segment files under {part} (hint: give a log root holding partition "
            "directories (data/orders-0/), a partition directory holding segment files "
            "(orders-0/00000000000000000000.log), or a segment file)",
        ], command


def test_missing_index_is_a_note_and_fails_strict(tmp_path: Path) -> None:
    """A backup without an index is incomplete: a note (exit 0), a missing-index problem with --strict."""
    part = tmp_path / "orders-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    (part / "00000000000000000000.index").unlink()
    r = run_cli(["verify-index", str(part)])
    assert r.exit_code == 0, r.text
    assert "00000000000000000000.index: no .index beside the .log (Kafka rebuilds it on start" in r.text
    strict = run_cli(["verify-index", "--strict", str(part)])
    assert strict.exit_code == 1 and "missing-index" in strict.text
