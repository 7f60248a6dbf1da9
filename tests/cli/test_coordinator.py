"""``kseg coordinator``: the real CLI, text and JSON, several ids, the rows against the schema."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from kseg.jsonlines import SCHEMA_VERSION
from tests.conftest import kseg_argv, run_cli


def test_text_one_line_per_id() -> None:
    r = run_cli(["coordinator", "--group", "my-group", "--transactional-id", "tx-1", "--group", "😀"])
    assert r.exit_code == 0, r.errtext
    assert r.text.splitlines() == [
        "group my-group: __consumer_offsets-12 (Utils.abs(hashCode -1906497762) % 50)",
        "group 😀: __consumer_offsets-49 (Utils.abs(hashCode 1772899) % 50)",
        "transactionalId tx-1: __transaction_state-20 (Utils.abs(hashCode 3572520) % 50)",
    ]


def test_partitions_and_an_id_that_needs_quoting() -> None:
    r = run_cli(["coordinator", "--group", "héllo wörld", "--partitions", "7"])
    assert r.exit_code == 0, r.errtext
    assert r.text == "group 'héllo wörld': __consumer_offsets-4 (Utils.abs(hashCode 1628148953) % 7)\n"


def test_json_rows() -> None:
    r = run_cli(["coordinator", "--format", "json", "--transactional-id", "polygenelubricants", "--group", "a"])
    assert r.exit_code == 0, r.errtext
    rows = [json.loads(line) for line in r.text.splitlines()]
    assert rows == [
        {
            "type": "coordinator",
            "v": SCHEMA_VERSION,
            "kind": "group",
            "id": "a",
            "topic": "__consumer_offsets",
            "partition": "__consumer_offsets-47",
            "partitionId": 47,
            "partitionCount": 50,
            "hashCode": 97,
        },
        {
            "type": "coordinator",
            "v": SCHEMA_VERSION,
            "kind": "transactionalId",
            "id": "polygenelubricants",
            "topic": "__transaction_state",
            "partition": "__transaction_state-0",
            "partitionId": 0,  # hashCode Integer.MIN_VALUE: Utils.abs gives 0
            "partitionCount": 50,
            "hashCode": -2147483648,
        },
    ]


def test_as_a_process_non_ascii_argv() -> None:
    """The id as the shell hands it (UTF-8 bytes in argv), through the console entry point."""
    p = subprocess.run(kseg_argv("coordinator", "--group", "日本語のグループ"), capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode() == "group 日本語のグループ: __consumer_offsets-11 (Utils.abs(hashCode -935085811) % 50)\n"
    assert p.stderr == b""


def test_the_docs_examples() -> None:
    """Every ``$ kseg coordinator`` line of docs/coordinator.md prints what the page shows."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "coordinator.md").read_text()
    examples = re.findall(r"^    \$ kseg (coordinator [^\n]*)\n((?:    [^$\n][^\n]*\n)+)", page, re.M)
    assert len(examples) == 2
    for command, shown in examples:
        r = run_cli(shlex.split(command))
        assert r.exit_code == 0, r.errtext
        assert r.text == "".join(line[4:] + "\n" for line in shown.splitlines())
