"""The lookups' plain command lines, answered without click (kseg.cli.lookup_plain), say byte for byte what
click's commands say: the same stdout, stderr and exit code on every kind of partition and answer (found,
not found, below the log start, past its end, damaged, unreadable, no partition at all), in text and JSON,
with and without ``-q``; any other command line is click's (its errors included)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kseg.cli.lookup_plain import plain, run_plain
from tests.conftest import CORPUS_DATA, Result, run_cli

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "examples" / "orders-0"


def run_plain_in_process(args: list[str]) -> Result:
    """``kseg ARGS`` through the plain path, in this process, stdout and stderr captured as bytes."""
    line = plain(args)
    assert line is not None, args
    saved = sys.stdout, sys.stderr
    out, err = io.BytesIO(), io.BytesIO()
    sys.stdout, sys.stderr = stdout, stderr = io.TextIOWrapper(out), io.TextIOWrapper(err)
    try:
        run_plain(line)
        code = 0  # (not reached: a plain lookup always ends with its exit code)
    except SystemExit as ended:
        code = ended.code if isinstance(ended.code, int) else 1
    finally:
        sys.stdout, sys.stderr = saved
    stdout.flush()
    stderr.flush()
    return Result(code, out.getvalue(), err.getvalue())


def said(r: Result) -> tuple[int, bytes, bytes]:
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["lookup-offset", "3", "DIR"],
        ["lookup-offset", "007", "DIR"],
        ["lookup-offset", "9223372036854775807", "DIR"],
        ["lookup-offset", "-q", "3", "DIR"],
        ["lookup-offset", "3", "DIR", "--quiet"],
        ["lookup-offset", "--format", "json", "3", "DIR"],
        ["lookup-offset", "3", "DIR", "--format=text", "--format", "json"],
        ["lookup-time", "latest", "DIR"],
        ["lookup-time", "2024-10-27T03:33:20.100Z", "DIR", "-q"],
        ["lookup-time", "1730000000003", "DIR"],
    ],
)
def test_a_plain_lookup_is_recognized(args: list[str]) -> None:
    line = plain(args)
    assert line is not None
    assert line.directory == "DIR"
    assert line.output_format == ("json" if "json" in args else "text")
    assert line.quiet == any(a in ("-q", "--quiet") for a in args)


@pytest.mark.parametrize(
    "args",
    [
        ["lookup-offset", "-1", "DIR"],  # a negative number: click's (an argument, by the command's settings)
        ["lookup-offset", "9223372036854775808", "DIR"],  # past a long: click's error
        ["lookup-offset", "+3", "DIR"],
        ["lookup-offset", "3_000", "DIR"],
        ["lookup-offset", "1e3", "DIR"],
        ["lookup-offset", "\uff13", "DIR"],  # a full-width digit
        ["lookup-offset", "3"],
        ["lookup-offset", "3", "DIR", "more"],
        ["lookup-offset", "3", ""],
        ["lookup-offset", "3", "DIR", "-h"],
        ["lookup-offset", "3", "DIR", "--help"],
        ["lookup-offset", "3", "DIR", "--"],
        ["lookup-offset", "3", "s3://bucket/orders-0"],
        ["lookup-offset", "3", "DIR", "--format"],
        ["lookup-offset", "3", "DIR", "--format", "xml"],
        ["lookup-offset", "3", "DIR", "--format=xml"],
        ["lookup-offset", "--quiet=yes", "3", "DIR"],
        ["lookup-offset", "-qq", "3", "DIR"],
        ["lookup-offset", "3", "DIR", "--max-message-size", "100"],
        ["lookup-offset", "3", "DIR", "--value-decoder", "hex"],
        ["lookup-time", "-1", "DIR"],
        ["lookup-time", "yesterday", "DIR"],
        ["lookup-time", "2024-10-27T03:33:20", "DIR"],  # no zone
        ["dump", "3", "DIR"],
        ["--version"],
        [],
    ],
)
def test_any_other_command_line_is_click_s(args: list[str]) -> None:
    assert plain(args) is None


def _partitions(tmp_path: Path) -> dict[str, str]:
    not_a_partition = tmp_path / "loose"
    not_a_partition.mkdir()
    (not_a_partition / "notes.txt").write_text("no segments here\n")
    return {
        "orders": str(ORDERS),
        "plain": str(CORPUS_DATA / "plain-v2-0"),
        "v0": str(CORPUS_DATA / "v0-none-0"),
        "v1": str(CORPUS_DATA / "v1-gzip-0"),
        "zstd": str(CORPUS_DATA / "v2-zstd-0"),
        "txn": str(CORPUS_DATA / "txn-v2-0"),
        "metadata": str(CORPUS_DATA / "__cluster_metadata-0"),
        "crc": str(CORPUS_DATA / "corrupt-crc-0"),
        "index": str(CORPUS_DATA / "corrupt-index-0"),
        "truncated": str(CORPUS_DATA / "corrupt-truncated-0"),
        "empty": str(CORPUS_DATA / "empty-log-0"),
        "missing": str(tmp_path / "nowhere-0"),
        "a file": str(ORDERS / "00000000000000000000.log"),
        "no segments": str(not_a_partition),
    }


OFFSETS = ["0", "3", "250", "299", "420", "9223372036854775807"]
TIMES = ["earliest", "latest", "max-timestamp", "0", "1730000000003", "2024-10-27T03:33:20.100Z", "-2"]


def test_plain_lookups_say_what_click_s_commands_say(tmp_path: Path) -> None:
    """Every offset and time on every kind of partition, text and JSON, quiet or not: the plain path's
    stdout, stderr and exit code are click's, byte for byte."""
    checked = set()
    for name, directory in _partitions(tmp_path).items():
        runs = [["lookup-offset", offset, directory] for offset in OFFSETS]
        runs += [["lookup-time", t, directory] for t in TIMES if not t.startswith("-")]
        runs += [["lookup-offset", "--format", "json", "3", directory], ["lookup-time", "latest", directory, "-q"]]
        runs += [["lookup-time", "--format=json", "-q", "max-timestamp", directory]]
        for args in runs:
            expected = said(run_cli(args))
            assert said(run_plain_in_process(args)) == expected, (name, args)
            checked.add(expected[0])
    assert checked == {0, 1, 2}  # found, not found or damaged, unreadable: each answer was compared


def test_the_engine_asked_for_is_checked_as_click_s_group_checks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from kseg import engine

    monkeypatch.setenv("KSEG_ENGINE", "bogus")
    monkeypatch.setattr(engine, "_choice", "bogus")  # (the engine is chosen at import: as a process started so)
    monkeypatch.setattr(engine, "REASON", "KSEG_ENGINE='bogus' is not one of c, python")
    args = ["lookup-offset", "3", str(ORDERS)]
    expected = said(run_cli(args))
    assert expected[0] == 2 and b"KSEG_ENGINE" in expected[2]
    assert said(run_plain_in_process(args)) == expected


def _process(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "kseg", *args], env=env, timeout=120, **kwargs)


def test_the_console_entry_point_takes_the_plain_path_and_says_the_same() -> None:
    """A real process (``python -m kseg``, as the console script): the same bytes as click's command, and the
    plain path taken (click never imported: tests/test_startup_imports.py)."""
    for args in (["lookup-offset", "300", str(ORDERS)], ["lookup-time", "--format", "json", "latest", str(ORDERS)]):
        p = _process(args, capture_output=True)
        assert (p.returncode, p.stdout, p.stderr) == said(run_cli(args)), args


def test_a_closed_stdout_ends_a_plain_lookup_by_sigpipe_as_click_s() -> None:
    """stdout's reader gone before the answer is written: SIGPIPE, never an exit code read as a verdict."""
    for args in (
        ["lookup-offset", "300", str(ORDERS)],  # plain
        ["lookup-offset", "--max-message-size", "1000012", "300", str(ORDERS)],  # click's
    ):
        read, write = os.pipe()
        os.close(read)
        try:
            p = _process(args, stdout=write, stderr=subprocess.PIPE)
        finally:
            os.close(write)
        assert p.returncode == -signal.SIGPIPE, (args, p.returncode, p.stderr)
        assert p.stderr == b"", args
