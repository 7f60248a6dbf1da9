"""Nothing kseg writes can land on its input (issue 19): ``--report``, ``-o`` and ``--output-dir``
that resolve -- through symlinks and ``..`` -- to an input file or into an input directory are
refused before any work, with or without ``--force``; an existing report is replaced only with
``--force``."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, assert_no_traceback, run_subprocess


def _tree(tmp_path: Path) -> Path:
    part = tmp_path / "orders-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    (tmp_path / "link").symlink_to(part)
    return part


def _hashes(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


SEGMENT = "orders-0/00000000000000000000.log"


@pytest.mark.parametrize(
    "args, why",
    [
        (["verify-index", "--report", SEGMENT, "orders-0"], f"--report {SEGMENT} lies within the input orders-0"),
        (["verify-index", "--force", "--report", SEGMENT, "orders-0"], "lies within the input orders-0"),
        (["verify-index", "--force", "--report", SEGMENT, SEGMENT], f"--report {SEGMENT} is the input {SEGMENT}"),
        (["verify-index", "--force", "--report", "link/00000000000000000251.log", "orders-0"], "lies within the input"),
        (
            ["verify-index", "--force", "--report", "orders-0/../orders-0/new.jsonl", "orders-0"],
            "lies within the input",
        ),
        (["verify-index", "--force", "--report", "orders-0", "orders-0"], "--report orders-0 is the input orders-0"),
        (["export", "-o", SEGMENT, "--force", "orders-0"], f"-o {SEGMENT} lies within the input orders-0"),
        (["export", "-o", "link/x.parquet", "orders-0"], "-o link/x.parquet lies within the input orders-0"),
        (["export", "-o", SEGMENT, "--force", SEGMENT], "is the input"),
        (["rebuild-index", "--output-dir", "orders-0", "--force", "orders-0"], "--output-dir orders-0 is the input"),
        (["rebuild-index", "--output-dir", "link/sub", "orders-0"], "lies within the input orders-0"),
    ],
)
def test_an_output_on_an_input_is_refused_before_any_work(tmp_path: Path, args: list[str], why: str) -> None:
    part = _tree(tmp_path)
    before = _hashes(part)
    r = run_subprocess(args, cwd=tmp_path)
    assert r.exit_code == 2, r.errtext
    assert r.stdout == b""  # no work was done
    assert r.errtext.startswith("kseg: error: ") and len(r.errtext.splitlines()) == 1, r.errtext
    assert why in r.errtext and "never writes over what it reads" in r.errtext, r.errtext
    assert_no_traceback(r)
    assert _hashes(part) == before  # not one input byte changed, no file added


def test_an_existing_report_is_replaced_only_with_force(tmp_path: Path) -> None:
    part = _tree(tmp_path)
    report = tmp_path / "r.jsonl"
    report.write_text("an earlier report\n")
    r = run_subprocess(["verify-index", "--report", str(report), str(part)])
    assert r.exit_code == 2 and r.stdout == b""
    assert "the file exists; not replaced (give --force to replace it)" in r.errtext
    assert report.read_text() == "an earlier report\n"
    r = run_subprocess(["verify-index", "--force", "--report", str(report), str(part)])
    assert r.exit_code == 0, r.errtext
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert [row["status"] for row in rows] == ["clean", "clean"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".kseg-tmp")]


def test_force_without_a_report_is_a_usage_error(tmp_path: Path) -> None:
    r = run_subprocess(["verify-index", "--force", str(_tree(tmp_path))])
    assert r.exit_code == 2 and "--force replaces an existing --report file" in r.errtext


def test_export_to_an_existing_directory_is_one_clear_line(tmp_path: Path) -> None:
    part = _tree(tmp_path)
    (tmp_path / "out").mkdir()
    r = run_subprocess(["export", "-o", str(tmp_path / "out"), "--force", str(part)])
    assert r.exit_code == 2 and r.stdout == b""
    assert r.errtext == (
        f"kseg: error: {tmp_path / 'out'}: cannot write -o: is a directory (give a file path; "
        "a directory of part files is written only with --spark)\n"
    )
    assert list((tmp_path / "out").iterdir()) == []


def test_export_refuses_an_existing_file_before_reading(tmp_path: Path) -> None:
    part = _tree(tmp_path)
    out = tmp_path / "x.parquet"
    out.write_bytes(b"old")
    r = run_subprocess(["export", "-o", str(out), str(part)])
    assert r.exit_code == 2 and r.stdout == b"" and "exists; not replaced (give --force" in r.errtext
    assert out.read_bytes() == b"old"
    r = run_subprocess(["export", "-o", str(out), "--force", str(part)])
    assert r.exit_code == 0, r.errtext
    assert out.read_bytes()[:4] == b"PAR1"
