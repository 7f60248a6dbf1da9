"""``kseg logdir`` on a fleet root (the log directories below a directory) and on an object store
(moto's S3 server on loopback): the rows of the same log directories given one by one, locally."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kseg.ops.logdir.run import NOT_A_LOG_DIR, SKIPPED
from tests.conftest import as_unprivileged_root, kseg_argv, run_cli
from tests.ops.logdir.kafka_dir import TOPIC_IDS, log_dir

OLD_ORDERS_ID = "p5Cj7YkYQhOEiYvvxLZ2KA"  # broker 2 missed the topic's deletion and recreation


def fleet(root: Path) -> list[Path]:
    """``root/broker-N/data``: two brokers' log directories, broker 2's ``orders`` under the old topic ID."""
    return [
        log_dir(root / "broker-1" / "data"),
        log_dir(root / "broker-2" / "data", node_id=2, topic_ids={**TOPIC_IDS, "orders": OLD_ORDERS_ID}),
    ]


def json_rows(*args: str) -> tuple[int, list[dict]]:
    r = run_cli(["logdir", "--format", "json", *args])
    assert "Traceback" not in r.errtext, r.errtext
    return r.exit_code, [json.loads(line) for line in r.text.splitlines()]


def test_a_fleet_root_is_its_log_directories(tmp_path: Path) -> None:
    dirs = fleet(tmp_path / "fleet")
    (tmp_path / "fleet" / "README").write_text("not a log directory")  # beside the brokers: not read
    assert json_rows(str(tmp_path / "fleet")) == json_rows(*map(str, dirs))
    code, rows = json_rows(str(tmp_path / "fleet"))
    assert code == 1
    assert [r["logDir"] for r in rows if r["type"] == "logdir"] == list(map(str, dirs))
    orders = [r for r in rows if r.get("partition") == "orders-0"]
    assert all(r["problems"] and "topic ID differs between replicas" in r["problems"][0] for r in orders)


def test_a_fleet_directory_holding_no_log_directory_is_named_in_a_note(s3, tmp_path: Path) -> None:
    """Never dropped unsaid: ``broker-3`` holds nothing Kafka writes -- a note names it, locally and on S3."""
    fleet(tmp_path / "fleet")
    (tmp_path / "fleet" / "broker-3" / "empty").mkdir(parents=True)
    (tmp_path / "fleet" / "broker-3" / "empty" / "notes.txt").write_text("gone")  # (S3 keeps no empty prefix)
    s3.upload_tree(tmp_path / "fleet", "logdir-skipped")
    for root in (str(tmp_path / "fleet"), s3.uri("logdir-skipped")):
        r = run_cli(["logdir", root])
        assert r.exit_code == 1, r.errtext
        skipped = [line for line in r.errtext.splitlines() if "no log directory in it" in line]
        assert skipped == [f"kseg: note: {root}/broker-3: {SKIPPED}"], r.errtext


@pytest.mark.parametrize("quiet", [[], ["-q"]])
@pytest.mark.parametrize("content", ["empty", "foreign"])
def test_a_directory_holding_nothing_of_kafka_is_not_a_log_directory(s3, tmp_path: Path, content, quiet) -> None:
    """An unmounted data disk (empty), a wrong path (a directory of other things): exit 2, one line, never
    "0 partitions, clean" -- and -q does not hide it (an error, not a note).  The same on S3."""
    root = tmp_path / "disk"
    root.mkdir()
    if content == "foreign":
        (root / "x").mkdir()
        (root / "x" / "notes.txt").write_text("not Kafka's")
        (root / "README").write_text("hello")
    paths = [str(root)]
    if content == "foreign":  # (S3 keeps no empty prefix: an empty one is a missing path, tested elsewhere)
        s3.upload_tree(root, f"not-a-log-dir-{len(quiet)}")
        paths.append(s3.uri(f"not-a-log-dir-{len(quiet)}"))
    for path in paths:
        r = run_cli(["logdir", *quiet, path])
        assert r.exit_code == 2, (r.text, r.errtext)
        assert r.errtext.splitlines() == [f"kseg: error: {path}: {NOT_A_LOG_DIR}"], r.errtext
        assert r.text == ""


def test_a_log_directory_of_partitions_without_segments_is_read(tmp_path: Path) -> None:
    """The healthy twin of the above: no meta.properties, no checkpoint, no segment -- but a directory holding
    a partition's files (partition.metadata): a log directory whose partitions lost their segments."""
    d = log_dir(tmp_path / "b1")
    for name in [*(n for n in os.listdir(d) if not (d / n).is_dir())]:
        (d / name).unlink()
    for log in (d / "orders-0").glob("*"):
        if log.name != "partition.metadata":
            log.unlink()
    shutil.rmtree(d / "plain-0")
    code, rows = json_rows(str(d))
    assert code == 1
    (orders,) = [r for r in rows if r["type"] == "partition"]
    assert orders["segments"] == 0 and any(p.startswith("no segment: ") for p in orders["problems"])


def test_a_log_directory_that_cannot_be_listed_is_exit_2_with_the_os_reason(tmp_path: Path) -> None:
    import subprocess

    dirs = fleet(tmp_path / "fleet")
    dirs[1].chmod(0)
    try:
        p = subprocess.run(
            as_unprivileged_root(kseg_argv("logdir", str(tmp_path / "fleet"))), capture_output=True, text=True
        )
    finally:
        dirs[1].chmod(0o755)
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == [f"kseg: error: {dirs[1]}: cannot list the directory: Permission denied"]


def test_log_directories_on_s3_give_the_local_rows(s3, tmp_path: Path) -> None:
    dirs = fleet(tmp_path / "fleet")
    s3.upload_tree(tmp_path / "fleet", "logdir-fleet")
    local_code, local = json_rows(str(tmp_path / "fleet"))
    code, remote = json_rows(s3.uri("logdir-fleet"))
    assert code == local_code == 1
    text = json.dumps(remote).replace(s3.uri("logdir-fleet"), str(tmp_path / "fleet"))
    assert json.loads(text) == local
    assert len(dirs) == 2
