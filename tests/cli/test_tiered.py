"""``kseg tiered`` through the real CLI: text and JSON, exit codes, ``--report``, the store on local disk and on
moto's S3 server on loopback (the same answers), and a verdict only for what was read."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from kseg.format.strings import uuid_to_string
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
    assert lines[-1].endswith("; 0 problems: clean")
    assert "9 objects listed, 0 orphans" in lines[-1] and "(s)" not in r.text
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
    assert part["orphanObjects"] == 3 and part["orphanBytes"] == sc.OBJECT_BYTES
    segments = [row for row in rows if row["type"] == "segment"]
    assert [s["state"] for s in segments] == ["COPY_SEGMENT_FINISHED"] * 3 + ["COPY_SEGMENT_STARTED"]
    assert segments[1]["objects"] == 2 and segments[1]["objectKey"].endswith(f"{200:020d}-{sc.IDS['b']}.log")
    (orphan,) = [row for row in rows if row["type"] == "orphan"]
    assert orphan["state"] == "COPY_SEGMENT_STARTED" and orphan["judged"] is True
    assert rows[-1]["type"] == "summary" and rows[-1]["exitCode"] == 1 and rows[-1]["orphanBytes"] == sc.OBJECT_BYTES
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


def test_a_metadata_batch_failing_its_crc_stops_the_read_there(tmp_path: Path) -> None:
    """A byte of the third batch's records flipped (its framing holds): Kafka's consumer of the topic refuses
    the batch (``check.crcs``), so kseg folds none of its records -- before, they were decoded, and the one
    that no longer parsed was called undecodable, a wrong cause -- and gives no verdict for that partition."""
    meta, store, _ = sc.healthy().write(tmp_path)
    home = meta / f"__remote_log_metadata-{sc.metadata_partition(rm.uuid_bytes(sc.TOPIC_ID), 0, sc.PARTITIONS)}"
    log = home / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    third = list(iter_batch_infos(bytes(data)))[2].position
    data[third + 70] ^= 0xFF
    log.write_bytes(bytes(data))
    r = run_cli(["tiered", *PARTITIONS, str(meta), "--remote", str(store)])
    assert r.exit_code == 1, (r.text, r.errtext)
    assert "no verdict" in r.text.splitlines()[-1] and ": incomplete," in r.text.splitlines()[0]
    assert "undecodable" not in r.text, r.text
    assert f"{log}: at byte {third}: batch at offset " in r.errtext and ": CRC mismatch (stored " in r.errtext
    j = run_cli(["tiered", *PARTITIONS, str(meta), "--remote", str(store), "--format", "json"])
    summary = [json.loads(line) for line in j.text.splitlines() if '"summary"' in line][-1]
    (stop,) = summary["notRead"]
    assert (j.exit_code, stop["path"], stop["stop"], stop["bytesRead"]) == (1, str(log), "corrupt", third)
    assert stop["reason"].startswith("batch at offset ") and "CRC mismatch" in stop["reason"]


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


def test_stdout_closed_in_the_middle_of_the_output_is_death_by_sigpipe(tmp_path: Path) -> None:
    # the whole text went out in one write: a pipe whose reader left after the first line took 64 KiB of it,
    # BufferedWriter.write returned that count without an error, and the run exited 0 ("clean")
    values = []
    for i in range(1200):
        seg = rm.SegmentId(sc.TOPIC_ID, sc.TOPIC, 0, uuid_to_string((i + 1).to_bytes(16, "big")))
        values += [rm.segment_metadata(seg, i * 100, i * 100 + 99), rm.segment_update(seg, rm.COPY_SEGMENT_FINISHED)]
    meta = rm.write_metadata_log(tmp_path / "__remote_log_metadata-0", values)
    p = subprocess.Popen(
        [*kseg_argv(), "tiered", "-q", *PARTITIONS, str(meta)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    assert p.stdout is not None and p.stderr is not None
    assert p.stdout.readline().startswith(b"orders-0 (")
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=120) == -signal.SIGPIPE, err
    assert err == b""


def test_text_lists_the_problems_grouped_by_cause(tmp_path: Path) -> None:
    """Each problem under its topic-partition, then one line per cause with its count and first places;
    proper plurals throughout (the healthy twin: test_healthy_text)."""
    meta, store, logdir = faulty(tmp_path)
    r = run_cli(["tiered", *PARTITIONS, str(meta), "--remote", str(store), "--logdir", str(logdir)])
    assert r.exit_code == 1, r.errtext
    lines = r.text.splitlines()
    assert "(s)" not in r.text
    at = lines.index("problems by cause:")
    assert lines[at + 1 : -1] == [
        "  missing: 1 problem, finished segments whose objects are not at their keys: data loss: orders-0 (1)",
        "  orphan: 1 problem, objects at no key a finished segment is fetched from: orders-0 (1)",
        "  local-gap: 1 problem, offsets neither remote nor local: orders-0 (1)",
    ]
    assert any(line.startswith("  missing: segment ") for line in lines[:at])
    assert lines[-1].endswith("; 3 problems: problems") and "1 topic-partition, 4 remote segments" in lines[-1]


def test_a_copy_under_another_partition_is_found_by_the_cli(tmp_path: Path) -> None:
    meta, store, _ = sc.healthy().write(tmp_path)
    for suffix in sc.AIVEN_SUFFIXES:
        src = store / object_key("aiven", "", sc.TOPIC, sc.TOPIC_ID, 0, 100, sc.IDS["a"], suffix)
        dst = store / object_key("aiven", "", sc.TOPIC, sc.TOPIC_ID, 7, 100, sc.IDS["a"], suffix)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
    r = run_cli(["tiered", *PARTITIONS, str(meta), "--remote", str(store)])
    assert r.exit_code == 1, r.errtext
    assert "orders-0 (" in r.text and ": clean, 3 of 3 segments finished" in r.text
    assert "  orphan: 1 problem, objects at no key a finished segment is fetched from: orders-7 (1)" in r.text
    assert "12 objects listed, 3 orphans" in r.text.splitlines()[-1]


def test_a_missing_bucket_or_prefix_is_exit_2(s3, tmp_path: Path) -> None:
    """Never "missing: ... data loss" for every segment: a store that is not there is not read (exit 2), as a
    missing local directory is; the twin on the same server, uploaded, is clean."""
    meta, store, _ = sc.healthy().write(tmp_path)
    s3.upload_tree(store, "tiered/healthy")
    ok = run_cli(["tiered", *PARTITIONS, str(meta), "--remote", s3.uri("tiered/healthy")])
    assert ok.exit_code == 0, ok.errtext
    bucket = s3.uri("x").split("/")[2]
    nobucket = s3.uri("x").replace(f"//{bucket}/", "//nobucket/")
    for uri, said in ((nobucket, "no such bucket"), (s3.uri("tiered/nothing"), "no such bucket or prefix")):
        r = run_cli(["tiered", *PARTITIONS, str(meta), "--remote", uri])
        assert r.exit_code == 2, (uri, r.text, r.errtext)
        assert said in r.errtext and "Traceback" not in r.errtext
        assert "data loss" not in r.text
