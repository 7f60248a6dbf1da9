"""``kseg tiered`` through the real CLI: text and JSON, exit codes, ``--report``, the store on local disk and on
moto's S3 server on loopback (the same answers), and a verdict only for what was read."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from kseg.storage.remote_keys import object_key
from kseg.testing import remote_metadata as rm
from kseg.testing.framing import iter_batch_infos
from tests.conftest import as_unprivileged_root, kseg_argv, run_cli
from tests.ops.tiered import scenario as sc

ROOT = str(Path(__file__).resolve().parents[2])
PARTITIONS = ["--metadata-partitions", str(sc.PARTITIONS)]


def faulty(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A cluster with one of each store fault: 200-299's .log lost, a copy that never finished, the local log
    starting past the remote end."""
    cluster = sc.healthy()
    cluster.drop_objects = (object_key("aiven", "", sc.TOPIC, sc.TOPIC_ID, 0, 200, sc.IDS["b"], "log"),)
    cluster.values.append(rm.segment_metadata(sc.seg("new"), 400, 499, size=sc.SIZE))
    cluster.stored["new"], cluster.local_start = 400, 500
    return cluster.write(tmp_path)


def test_healthy_text(tmp_path: Path) -> None:
    meta, store, logdir = sc.healthy().write(tmp_path)
    r = run_cli(["tiered", *PARTITIONS, str(meta), "--remote", str(store), "--logdir", str(logdir)])
    assert r.exit_code == 0, r.errtext
    lines = r.text.splitlines()
    assert lines[0].startswith(f"orders-0 ({sc.TOPIC_ID}, __remote_log_metadata-")
    assert "clean, 3 of 3 segments finished, offsets 100-399" in lines[0]
    assert lines[1].split()[:4] == [sc.IDS["a"], "COPY_SEGMENT_FINISHED", "100-199", "epochs"]
    assert lines[-1].endswith("0 problem(s): clean")
    assert "9 object(s) listed, 0 orphan(s)" in lines[-1]
    assert r.errtext == ""


def test_faults_json_and_report(tmp_path: Path) -> None:
    meta, store, logdir = faulty(tmp_path)
    report = tmp_path / "report.jsonl"
    args = ["tiered", *PARTITIONS, str(meta), "--remote", str(store), "--logdir", str(logdir)]
    r = run_cli([*args, "--format", "json", "--report", str(report)])
    assert r.exit_code == 1, r.errtext
    rows = [json.loads(line) for line in r.text.splitlines()]
    assert report.read_text() == r.text
    part = rows[0]
    assert part["type"] == "partition" and part["status"] == "problems"
    assert sorted(p["kind"] for p in part["problems"]) == ["local-gap", "missing", "orphan"]
    assert part["orphanObjects"] == 3 and part["orphanBytes"] == sc.SIZE + 128
    segments = [row for row in rows if row["type"] == "segment"]
    assert [s["state"] for s in segments] == ["COPY_SEGMENT_FINISHED"] * 3 + ["COPY_SEGMENT_STARTED"]
    assert segments[1]["objects"] == 2 and segments[1]["objectKey"].endswith(f"{200:020d}-{sc.IDS['b']}.log")
    (orphan,) = [row for row in rows if row["type"] == "orphan"]
    assert orphan["state"] == "COPY_SEGMENT_STARTED" and orphan["judged"] is True
    assert rows[-1]["type"] == "summary" and rows[-1]["exitCode"] == 1 and rows[-1]["orphanBytes"] == sc.SIZE + 128
    again = run_cli([*args, "--report", str(report)])
    assert again.exit_code == 2 and "--force" in again.errtext  # never over a file without --force


def test_store_on_s3_gives_the_local_answer(s3, tmp_path: Path) -> None:
    meta, store, logdir = faulty(tmp_path)
    s3.upload_tree(store, "tiered/faulty")
    s3.upload_tree(meta, "tiered/meta")  # the metadata partitions on S3 too
    args = ["tiered", "--format", "json", *PARTITIONS, "--logdir", str(logdir)]
    local = run_cli([*args, str(meta), "--remote", str(store)])
    remote = run_cli([*args, s3.uri("tiered/meta"), "--remote", s3.uri("tiered/faulty")])
    assert local.exit_code == remote.exit_code == 1, remote.errtext

    def comparable(text: str, root: str) -> list[dict]:
        rows = [json.loads(line) for line in text.replace(root, "ROOT").splitlines()]
        return rows

    assert comparable(remote.text, s3.uri("tiered/faulty")) == comparable(local.text, str(store))


def test_unreadable_metadata_partition_is_never_clean(tmp_path: Path) -> None:
    meta, store, _ = sc.healthy().write(tmp_path)
    home = meta / f"__remote_log_metadata-{sc.metadata_partition(rm.uuid_bytes(sc.TOPIC_ID), 0, sc.PARTITIONS)}"
    os.chmod(home, 0)
    try:
        argv = as_unprivileged_root(kseg_argv("tiered", *PARTITIONS, str(meta), "--remote", str(store)))
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": ROOT})
    finally:
        os.chmod(home, stat.S_IRWXU)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert str(home) in p.stderr and "Permission denied" in p.stderr
    assert "clean" not in p.stdout.replace("no verdict", "")  # the objects of its partitions are not judged
    assert "orphan" not in p.stdout.split("kseg tiered:")[0]


def test_corrupt_metadata_segment_gives_no_verdict(tmp_path: Path) -> None:
    meta, store, _ = sc.healthy().write(tmp_path)
    home = meta / f"__remote_log_metadata-{sc.metadata_partition(rm.uuid_bytes(sc.TOPIC_ID), 0, sc.PARTITIONS)}"
    log = home / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    third = list(iter_batch_infos(bytes(data)))[2].position
    data[third + 8 : third + 12] = b"\0\0\0\5"  # the third batch's length below Kafka's minimum
    log.write_bytes(bytes(data))
    r = run_cli(["tiered", *PARTITIONS, str(meta), "--remote", str(store)])
    assert r.exit_code == 1
    assert "no verdict" in r.text.splitlines()[-1] and ": incomplete," in r.text.splitlines()[0]
    assert str(log) in r.errtext


@pytest.mark.parametrize(
    "args,said",
    [
        (["{meta}", "--remote", "{tmp}/nowhere"], "nowhere: no such file or directory"),
        (["{tmp}/nothing"], "nothing: no such file or directory"),
        (["{tmp}/broker"], "no __remote_log_metadata partition"),
        (["{meta}", "--force"], "--force replaces an existing --report file"),
        (["{meta}", "--logdir", "{tmp}/gone"], "gone: no such file or directory"),
        (["{meta}", "--logdir", "{meta}/__remote_log_metadata-0/00000000000000000000.log"], "not a directory"),
    ],
)
def test_usage_and_input_errors(tmp_path: Path, args: list[str], said: str) -> None:
    meta, store, _ = sc.healthy().write(tmp_path)
    args = [a.format(meta=meta, store=store, tmp=tmp_path) for a in args]
    r = run_cli(["tiered", *args])
    assert r.exit_code == 2 and said in r.errtext, r.errtext
    assert "Traceback" not in r.errtext
