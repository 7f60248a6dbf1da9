"""``kseg verify-index --spark`` on a real local[2] PySpark, and the spark-submit entry point.

Both must give exactly the local command's rows on a log root of 60 partition
directories (several segments each, some with index and CRC faults).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kseg.ops.verify.report import sort_key
from tests.conftest import CORPUS_DATA, Result, as_unprivileged_root, kseg_argv, run_cli, run_subprocess
from tests.spark.jvm_archive import properties_file
from tests.spark.shared import run_on_spark, shared_session
from tests.stores import local

pyspark = pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")

SOURCES = ["plain-v2-0", "idempotent-v2-0", "txn-v2-0", "large-v2-0", "v1-gzip-0", "follower-v2-0"]


@pytest.fixture(scope="module")
def log_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("brokers") / "data"
    root.mkdir()
    for i in range(60):
        src = SOURCES[i % len(SOURCES)]
        dst = root / f"topic{i // len(SOURCES)}-{i}"
        shutil.copytree(CORPUS_DATA / src, dst)
        log = sorted(dst.glob("*.log"))[0]
        if i % 9 == 4:  # CRC fault
            data = bytearray(log.read_bytes())
            data[200] ^= 0x5A
            log.write_bytes(bytes(data))
        if i % 11 == 7:  # index fault: an entry pointing inside a batch
            idx = log.with_suffix(".index")
            raw = bytearray(idx.read_bytes())
            if len(raw) >= 8:
                rel, pos = struct.unpack_from(">ii", raw, 0)
                struct.pack_into(">ii", raw, 0, rel, pos + 3)
                idx.write_bytes(bytes(raw))
    shutil.copytree(CORPUS_DATA / "plain-v2-0", root / "gone-0.0123456789abcdef0123456789abcdef-delete")
    return root


@pytest.fixture(scope="module")
def local_run(log_root: Path, tmp_path_factory) -> tuple[Result, list[dict]]:
    """The local ``verify-index --verbose --report`` of :func:`log_root` (notes inline): its result and its
    report's rows (the same with or without --verbose), for the runs on Spark to equal."""
    report = tmp_path_factory.mktemp("local-run") / "local.jsonl"
    r = run_cli(["verify-index", "--verbose", "--report", str(report), str(log_root)])
    assert r.exit_code == 1, r.errtext[-2000:]
    return r, _rows(report)


def _spark_verify(*args: str, tmp: Path, cwd: Path | None = None, **env: str) -> Result:
    """``kseg verify-index --spark --master local[2] ARGS`` as a real process, Spark's temporary files
    (and its log) under ``tmp``, ``env`` added to the environment."""
    return run_subprocess(
        ["verify-index", "--spark", "--master", "local[2]", *args],
        cwd=cwd,
        timeout=600,
        env={"TMPDIR": str(tmp), **env},
    )


def _rows(path: Path) -> list[dict]:
    from tests.cli.test_verify import _report_rows

    return sorted(_report_rows(path), key=sort_key)


def test_spark_gives_the_local_rows(log_root: Path, local_run, tmp_path: Path) -> None:
    spark = tmp_path / "spark.jsonl"
    r1, rows = local_run
    r2 = run_on_spark(
        [
            "verify-index",
            "--spark",
            "--verbose",
            "--master",
            "local[2]",
            "--spark-conf",
            "spark.sql.shuffle.partitions=2",
            "--report",
            str(spark),
            str(log_root),
        ]
    )
    assert r1.exit_code == r2.exit_code == 1, r2.errtext[-2000:]
    assert len([r for r in rows if r["type"] == "segment"]) >= 100
    assert {r["kind"] for r in rows if r["type"] == "problem"} >= {"crc", "index-boundary"}
    assert _rows(spark) == rows
    assert spark.is_dir() and (spark / "_SUCCESS").exists() and len(list(spark.glob("part-*.jsonl"))) > 1
    # with --verbose the printed lines are the local command's too (order of discovery)
    assert r2.text == r1.text


def test_spark_parquet_report(log_root: Path, tmp_path: Path) -> None:
    import io

    from kseg.runtime.run import Run
    from kseg.runtime.verify import VerifyRun
    from kseg.spark.driver import run_spark_cli
    from kseg.storage.stores.find import discover

    out = tmp_path / "report.parquet"
    spark = shared_session()
    buf, err = io.BytesIO(), io.BytesIO()
    parts = discover([str(log_root / "topic0-0"), str(log_root / "topic0-4")], [])
    code = run_spark_cli(
        VerifyRun(Run(buf, err), str(out)),
        parts,
        strict=True,
        master=None,
        spark_conf=(),
        max_message_size=5 << 20,
        output_format="text",
        spark=spark,
    )
    assert code == 1
    df = spark.read.parquet(str(out))
    kinds = {r["kind"] for r in df.where("type = 'problem'").collect()}
    assert "crc" in kinds
    assert df.where("type = 'segment'").count() == 3


def test_many_partitions_without_the_checkpoint_hold_only_what_is_printed(tmp_path: Path) -> None:
    """Each partition's first segment notes its absent ``leader-epoch-checkpoint``: on Spark the notes are the
    local run's grouped lines and every segment its line, and the driver holds the problem results and the
    note kinds with their first places -- the same for 30 partitions as for 150 (the clean segments' results
    on its disk, read back in order as they are printed)."""
    import io

    from kseg.spark import job
    from kseg.spark.driver import _render
    from kseg.storage.listing import Listed
    from kseg.storage.stores.find import discover_as
    from kseg.testing.bombs import write_many_partitions

    root = write_many_partitions(tmp_path / "root", 150)
    shutil.copytree(CORPUS_DATA / "corrupt-crc-0", root / "bad-0")
    local = run_cli(["verify-index", str(root)])
    assert local.exit_code == 1 and "note: 151 files: absent: the batches' leader epochs not checked" in local.text
    spark = shared_session()
    held = []
    for paths in ([str(root)], [str(root / "bad-0"), *(str(root / f"t-{n}") for n in range(30))]):
        outcome = job.run(spark, discover_as(paths, [], Listed), strict=False, max_message_size=5 << 20, keep_all=False)
        assert outcome.notes is not None and [r.partition for _, r in outcome.shown] == ["bad-0"]
        assert outcome.clean.count == outcome.report.clean > 0  # on the driver's disk, not held
        held.append(len(outcome.shown) + outcome.notes.held())
        if len(paths) == 1:
            out = io.BytesIO()
            _render(out, outcome, "text", full_names=False, verbose=False)
            assert out.getvalue().decode() == local.text  # every segment's line, the clean ones too
            quiet = run_cli(["verify-index", "--quiet", str(root)])
            out = io.BytesIO()
            again = job.run(
                spark, discover_as(paths, [], Listed), strict=False, max_message_size=5 << 20, keep_all=False
            )
            _render(out, again, "text", full_names=False, verbose=False, quiet=True)
            assert quiet.exit_code == 1 and out.getvalue().decode() == quiet.text
        else:
            outcome.close()
    assert held == [1 + 1 + 3] * 2


def test_spark_submit_entry_point(log_root: Path, local_run, tmp_path: Path) -> None:
    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    import kseg.spark.submit as entry

    report = tmp_path / "submit.jsonl"
    env = dict(
        os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1"
    )
    p = subprocess.run(
        [
            str(submit),
            "--master",
            "local[2]",
            "--conf",
            "spark.ui.enabled=false",
            "--properties-file",  # the tests' settings (SPARK_CONF_DIR may be empty: tests/spark/jvm_archive.py)
            str(properties_file()),
            entry.__file__,
            "--report",
            str(report),
            str(log_root),
        ],
        capture_output=True,
        env=env,
        timeout=600,
    )
    assert p.returncode == 1, p.stderr.decode()[-3000:]
    assert _rows(report) == local_run[1]


def test_missing_pyspark_says_how_to_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['pyspark'] = None\n"
        "from kseg.cli.main import main\n"
        f"sys.argv = ['kseg', 'verify-index', '--spark', {str(CORPUS_DATA / 'plain-v2-0')!r}]\n"
        "main()\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert p.returncode == 2
    assert b"pip install 'kseg[spark]'" in p.stderr and b"Traceback" not in p.stderr


def test_executor_that_cannot_see_a_path_reports_a_failed_segment(tmp_path: Path) -> None:
    """verify_bin runs on executors; a path they cannot read is a failed segment, never dropped."""
    from kseg.spark.bins import plan_bins
    from kseg.spark.job import verify_bin
    from kseg.storage.listing import Listed
    from kseg.storage.partition import Partition, Segment

    seg = Segment(0, log=str(tmp_path / "p-0" / "00000000000000000000.log"), log_bytes=10, store=local())
    ((index, res),) = list(
        verify_bin([(7, Listed(Partition(str(tmp_path / "p-0"), [seg], store=local())))], False, 5 << 20)
    )
    assert index == 7 and res.status == "failed" and "executor" in res.failed and "mount" in res.failed
    assert res.log_dir == str(tmp_path)
    bins = plan_bins(list(range(10)), 3, size=lambda i: i)
    assert sorted(i for b in bins for i in b) == list(range(10))


def test_two_brokers_on_spark(tmp_path: Path) -> None:
    """The same partitions under two log roots, one copy damaged: --spark local[2] reports exactly that
    problem with its log directory, in the lines and the report rows, as the local command and --jobs 2 do,
    and nothing on stderr (no progress).  (On the process's shared session: that a fresh ``kseg --spark``
    process keeps Spark's own log off stderr, and removes its file, is the unreadable-inputs test's.)"""
    from tests.cli.test_verify import _check_two_broker_run
    from tests.trees import two_brokers

    b1, b2 = two_brokers(tmp_path / "t")
    local, spark = tmp_path / "local.jsonl", tmp_path / "spark.jsonl"
    r1 = run_subprocess(["verify-index", "--jobs", "2", "--report", str(local), str(b1), str(b2)])
    r2 = run_on_spark(["verify-index", "--spark", "--master", "local[2]", "--report", str(spark), str(b1), str(b2)])
    _check_two_broker_run(r2, spark, b1, b2)
    assert r2.text == r1.text  # every segment's line (clean ones too), the problems, the notes, the summary
    assert _rows(spark) == _rows(local)
    assert r2.stderr == b"", r2.errtext[-2000:]  # no progress


def test_executors_that_cannot_import_kseg_give_one_line_exit_2(tmp_path: Path) -> None:
    """PYSPARK_PYTHON names a Python without kseg: one error line naming the cause and the fix, exit 2
    (not 1, "problems found"), no Java or Python traceback; Spark's log is kept in a file."""
    import kseg

    kseg_root = os.path.dirname(os.path.dirname(os.path.abspath(kseg.__file__)))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    wrapper = tmp_path / "python-without-kseg"
    # Spark passes the driver's PYTHONPATH on to its Python workers: drop kseg's directory from it
    wrapper.write_text(
        "#!/bin/sh\n"
        f"PYTHONPATH=$(printf %s \"$PYTHONPATH\" | tr : '\\n' | grep -vx '{kseg_root}' | paste -sd:)\n"
        "export PYTHONPATH\n"
        f'exec {venv}/bin/python "$@"\n'
    )
    wrapper.chmod(0o755)
    # (run from tmp_path: Spark starts workers with `python -m`, which puts the working directory on sys.path)
    p = _spark_verify(str(CORPUS_DATA / "plain-v2-0"), tmp=tmp_path, cwd=tmp_path, PYSPARK_PYTHON=str(wrapper))
    err = p.stderr.decode()
    assert p.exit_code == 2, err[-3000:]
    assert p.stdout == b""
    lines = err.splitlines()
    assert len(lines) == 1, err[-3000:]
    assert lines[0].startswith(
        "kseg: error: Spark's executors cannot import kseg (ModuleNotFoundError: "
        "No module named 'kseg') with their Python "
    )
    assert "PYSPARK_PYTHON" in lines[0] and "pip install kseg" in lines[0] and "Spark's log: " in lines[0]
    (log,) = tmp_path.glob("kseg-spark-*.log")  # what Spark said went there, not to stderr
    assert "log4j" in log.read_text()


def test_unreadable_inputs_on_spark_are_failed_rows_exit_2(tmp_path: Path) -> None:
    """What the local command says of a directory it cannot list and of an index it cannot read
    (tests/cli/test_verify.py), --spark says too: the same failed rows, exit 2, never "clean".  Its own
    ``kseg --spark`` process (the reads must lack root's capabilities) shows what only a fresh process
    does: without --verbose no line of Spark's own log reaches stderr, and its log file, named by no error
    line, is removed at the end."""

    root = tmp_path / "data"
    root.mkdir()
    for name in ("good-0", "locked-0", "p-0"):
        shutil.copytree(CORPUS_DATA / "plain-v2-0", root / name)
    (root / "locked-0").chmod(0)
    (root / "p-0" / "00000000000000000251.timeindex").chmod(0)
    local, spark = tmp_path / "local.jsonl", tmp_path / "spark.jsonl"
    env = dict(os.environ, TMPDIR=str(tmp_path))
    try:
        p1 = subprocess.run(
            as_unprivileged_root(kseg_argv("verify-index", "--report", str(local), str(root))),
            capture_output=True,
            env=env,
        )
        p2 = subprocess.run(
            as_unprivileged_root(
                kseg_argv("verify-index", "--spark", "--master", "local[2]", "--report", str(spark), str(root))
            ),
            capture_output=True,
            env=env,
            timeout=600,
        )
    finally:
        (root / "locked-0").chmod(0o755)
    assert p1.returncode == p2.returncode == 2, p2.stdout.decode() + p2.stderr.decode()[-2000:]
    assert p2.stderr == b"", p2.stderr.decode()[-2000:]  # no log4j WARN lines, no traceback, no progress
    assert not list(tmp_path.glob("kseg-spark-*.log"))  # Spark's log (TMPDIR) removed: no error line named it
    failed = [(r["partition"], r["segment"]) for r in _rows(spark) if r["status"] == "failed"]
    assert failed == [("locked-0", None), ("p-0", "00000000000000000251")]
    spark_rows, local_rows = _rows(spark), _rows(local)
    for srow, lrow in zip(spark_rows, local_rows, strict=True):  # an executor names itself and asks about mounts
        if srow.get("error") and srow["segment"] is not None:
            assert srow["error"].startswith("executor ") and lrow["error"] in srow["error"]
            assert srow["error"].endswith("(is the path on a mount every executor sees?)")
            srow["error"] = lrow["error"]
    assert spark_rows == local_rows
    out = p2.stdout.decode()
    assert f"locked-0: FAILED: {root}/locked-0: cannot list the directory: Permission denied" in out
    assert "p-0/00000000000000000251: FAILED: " in out and "permission denied" in out


def test_export_on_spark_an_unreadable_segment_fails_the_export_exit_2(tmp_path: Path) -> None:
    """An executor that cannot read a segment (here a FIFO named like one: opening it would block) fails
    the export with the file and the reason, exit 2, no _SUCCESS marker -- never a corruption row and
    exit 1 (docs/robustness.md, Outcomes: I/O errors are I/O errors, on Spark too)."""
    part = tmp_path / "f-0"
    part.mkdir()
    shutil.copy(CORPUS_DATA / "plain-v2-0" / "00000000000000000251.log", part)
    os.mkfifo(part / "00000000000000000000.log")
    out = tmp_path / "out"
    p = run_on_spark(["export", "--spark", "--master", "local[1]", str(part), "-o", str(out)])
    err = p.stderr.decode()
    assert p.exit_code == 2, err
    assert "Traceback" not in err and "corrupt" not in err
    assert f"{part}/00000000000000000000.log: not a regular file" in err, err
    assert not (out / "_SUCCESS").exists()
    assert b"written" not in p.stdout
    assert not out.exists()  # issue 39: staged files removed, and the directory this run made


def test_spark_resume_trusts_only_an_unchanged_identity(tmp_path: Path) -> None:
    """``verify-index --spark`` records each segment's identity (its executors take it); a segment whose byte
    was flipped with its size and mtime restored is verified again on resume, the other resumed."""
    import json
    import time

    part = tmp_path / "data" / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    report = tmp_path / "report"
    argv = ["verify-index", "--spark", "--master", "local[2]", str(tmp_path / "data")]
    first = run_on_spark([*argv, "--report", str(report)])
    assert first.exit_code == 0, first.errtext[-2000:]
    rows = [json.loads(line) for f in sorted(report.glob("part-*.jsonl")) for line in f.read_text().splitlines()]
    assert all(" ctime_ns=" in row["identity"] for row in rows if row["type"] == "segment")
    log = sorted(part.glob("*.log"))[-1]
    st = log.stat()
    time.sleep(0.01)
    data = bytearray(log.read_bytes())
    data[-3] ^= 0xFF
    log.write_bytes(bytes(data))
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
    again = run_on_spark([*argv, "--resume", str(report), "--report", str(tmp_path / "again")])
    assert again.exit_code == 1, again.errtext[-2000:]
    assert f"p-0/{log.stem}: 1 problem" in again.text and "1 of the segments resumed" in again.text
    assert f"{log}: verified again: changed since the report (ctime_ns " in again.errtext
