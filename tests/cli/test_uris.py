"""Every command that takes paths reads URIs: the same output on S3 (a real S3 server on loopback)
as on a local copy of the same tree, the location prefix aside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import assert_no_traceback, run_cli, without_identity
from tests.s3server import broker_data_dirs


def both(s3, local_brokers: Path, args: list[str], rel: list[str]):
    """Run ``args + paths`` on S3 and on the local copy; outputs with each prefix replaced by ``@``."""
    remote = run_cli([*args, *(s3.uri(f"brokers/{r}") for r in rel)])
    here = run_cli([*args, *(str(local_brokers / r) for r in rel)])
    norm = lambda r, prefix: (r.exit_code, without_identity(r.text.replace(prefix, "@")))  # noqa: E731
    return norm(remote, s3.uri("brokers")), norm(here, str(local_brokers)), remote


@pytest.mark.parametrize(
    "args, rel",
    [
        (["verify-index"], ["b1/data", "b2/data"]),
        (["verify-index", "--format", "json"], ["b1/data/plain-v2-0"]),
        (["dump", "--deep-iteration", "--files"], ["b1/data/v1-gzip-0/00000000000000000000.log"]),
        (["lookup-offset", "268"], ["b2/data/plain-v2-0"]),
        (["lookup-time", "--format", "json", "1730000000100"], ["b2/data/plain-v2-0"]),
        (["rebuild-index", "--check"], ["b1/data"]),
        (["txn", "--from-start"], ["b1/data/txn-v2-0"]),
        (["diff"], ["b1/data/txn-v2-0", "b2/data/txn-v2-0"]),
        (["grep", "--key", "key-204-0"], ["b1/data", "b2/data"]),  # every partition of two brokers, corrupt ones too
        (["grep", "--format", "json", "--from-offset", "200", "--to-offset", "300"], ["b1/data/plain-v2-0"]),
    ],
)
def test_the_same_output_on_s3_as_on_disk(s3, local_brokers: Path, args: list[str], rel: list[str]) -> None:
    remote, here, raw = both(s3, local_brokers, args, rel)
    assert_no_traceback(raw)
    assert remote == here
    assert remote[0] in (0, 1) and remote[1]


@pytest.mark.parametrize(
    "rel", ["b1/data/v1-none-0/00000000000000000000.index", "b1/data/corrupt-index-0/00000000000000000000.index"]
)
def test_index_check_on_s3_equals_the_local_check(s3, local_brokers: Path, rel: str) -> None:
    """``dump`` of an ``.index`` reads a remote log's batch heads through the window, a local one's with
    one ``pread`` each: the same entries, mismatches and exit code."""
    remote = run_cli(["dump", "--files", s3.uri(f"brokers/{rel}")])
    here = run_cli(["dump", "--files", str(local_brokers / rel)])
    assert_no_traceback(remote)
    norm = lambda r, prefix: (r.exit_code, r.text.replace(prefix, "@"), r.errtext.replace(prefix, "@"))  # noqa: E731
    assert norm(remote, s3.uri("brokers")) == norm(here, str(local_brokers))
    assert "  Index offset: " in here.errtext and here.text.count("offset: ") > 1


def test_verify_index_report_rows_on_s3_equal_the_local_rows(s3, local_brokers: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "s3.jsonl", tmp_path / "local.jsonl"
    r1 = run_cli(["verify-index", "-q", "--report", str(a), s3.uri("brokers/b1/data"), s3.uri("brokers/b2/data")])
    r2 = run_cli(["verify-index", "-q", "--report", str(b), *broker_data_dirs(local_brokers)])
    assert r1.exit_code == r2.exit_code == 1  # corrupt-crc-0 on both brokers
    rows = lambda p, prefix: [json.loads(line.replace(prefix, "@")) for line in p.read_text().splitlines()]  # noqa: E731
    remote, local = rows(a, s3.uri("brokers")), rows(b, str(local_brokers))
    assert all(r["identity"].startswith("etag=") for r in remote if r["type"] == "segment")  # S3's ETag
    assert all(r["identity"].startswith("size=") for r in local if r["type"] == "segment")
    assert [{**r, "identity": None} for r in remote] == [{**r, "identity": None} for r in local]


def test_rebuild_index_does_not_write_beside_remote_logs(s3, tmp_path: Path) -> None:
    r = run_cli(["rebuild-index", s3.uri("brokers/b1/data/plain-v2-0")])
    assert r.exit_code == 2 and "only on local disk" in r.errtext and "--output-dir" in r.errtext
    out = tmp_path / "out"
    out.mkdir()
    r = run_cli(["rebuild-index", "--output-dir", str(out), s3.uri("brokers/b1/data/plain-v2-0")])
    assert r.exit_code == 0, r.errtext
    assert sorted(p.name for p in out.iterdir()) == [
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "00000000000000000251.index",
        "00000000000000000251.timeindex",
    ]


def test_missing_uri_is_exit_2(s3) -> None:
    for args in (
        ["verify-index", s3.uri("nope/data")],
        ["lookup-offset", "1", s3.uri("nope/p-0")],
        ["dump", "--files", s3.uri("nope/p-0/00000000000000000000.log")],
    ):
        r = run_cli(args)
        assert r.exit_code == 2, (args, r.errtext)
        assert_no_traceback(r)
