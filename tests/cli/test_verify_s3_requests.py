"""``verify-index`` on S3 asks the store nothing the listing already answered: a partition without a
``leader-epoch-checkpoint`` costs no HEAD and no LIST for it (issue 39), one with it is still read and
checked.  Counted on moto's S3 server on loopback (tests/s3server.py)."""

from __future__ import annotations

import pytest

from tests.conftest import CORPUS_DATA, assert_no_traceback, run_cli
from tests.s3server import BUCKET, PARTITIONS, requests_logged

pytest.importorskip("pyarrow", reason="URIs are read through pyarrow (the test extra installs it)")


def test_an_absent_leader_epoch_checkpoint_costs_no_request(s3) -> None:
    uri = s3.uri("brokers/b1/data")
    with requests_logged() as log:
        r = run_cli(["verify-index", uri])
    assert r.exit_code in (1, 2), r.errtext  # the corpus holds corrupt partitions
    assert_no_traceback(r)
    counts = log.counts()
    # the listing: the level listings and the log directory's page; before, a HEAD and a LIST a partition
    # for its absent checkpoint (34 LISTs, 143 HEADs here)
    assert counts["LIST"] <= 4, counts
    assert not [line for line in log.lines if "leader-epoch-checkpoint" in line]
    assert r.text.count("absent: the batches' leader epochs not checked") + r.errtext.count("absent") >= 1
    # each object opened at most once, and each .log's identity (its ETag, for --resume: one HEAD) taken once
    logs = sum(1 for p in CORPUS_DATA.rglob("*.log"))
    assert counts["HEAD"] <= objects() + logs, counts


def objects() -> int:
    return sum(1 for name in PARTITIONS for f in (CORPUS_DATA / name).rglob("*") if f.is_file())


def test_a_listed_checkpoint_is_still_read_and_checked(s3) -> None:
    s3.upload_tree(CORPUS_DATA / "plain-v2-0", "epochs/data/plain-v2-0")
    # epoch 5 from offset 0: the batches' epoch 0 is older than the checkpoint says -- a problem
    s3.client.put_object(Bucket=BUCKET, Key="epochs/data/plain-v2-0/leader-epoch-checkpoint", Body=b"0\n1\n5 0\n")
    with requests_logged() as log:
        r = run_cli(["verify-index", s3.uri("epochs/data")])
    assert r.exit_code == 1, r.text + r.errtext
    assert "leader-epoch" in r.text
    assert log.counts()["LIST"] <= 3
