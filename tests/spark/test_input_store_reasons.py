"""An input on a store that fails says the store's reason (issue 39), on Spark too: a bucket that does not
exist is "no such bucket: NAME" for ``export --spark`` and ``verify-index --spark`` (found by the driver's
listing, before any job), and a bucket removed after the data source's ``load()`` is "no such bucket" in
the task's error and in an ``unreadable`` row -- never "no such file or directory", never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, assert_no_traceback
from tests.spark.shared import run_on_spark, shared_session

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")
pytest.importorskip("pyarrow", reason="URIs are read through pyarrow (the test extra installs it)")

GONE = "kseg-no-such-bucket"


@pytest.fixture(scope="module")
def spark(s3):  # the S3 variables must be set before the JVM (and its Python workers) start
    """The process's shared local[2] session (tests/spark/shared.py), kseg's data source registered."""
    return shared_session()


@pytest.mark.parametrize("command", [["export", "-o", "OUT"], ["verify-index"]])
def test_a_missing_input_bucket_on_spark_is_said_so(spark, tmp_path: Path, command: list[str]) -> None:
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    r = run_on_spark([*args, "--spark", f"s3://{GONE}/brokers/b1/data"])
    assert r.exit_code == 2, r.errtext[-2000:]
    assert_no_traceback(r)
    assert f"no such bucket: {GONE}" in r.errtext and "no such file or directory" not in r.errtext, r.errtext
    assert not (tmp_path / "out").exists()


def remove_bucket(s3, bucket: str) -> None:
    for page in s3.client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for obj in page.get("Contents", []):
            s3.client.delete_object(Bucket=bucket, Key=obj["Key"])
    s3.client.delete_bucket(Bucket=bucket)


def test_a_bucket_removed_after_load_is_no_such_bucket_in_the_tasks(spark, s3) -> None:
    bucket = "kseg-removed-after-load"
    s3.client.create_bucket(Bucket=bucket)
    for n in range(3):
        for f in sorted((CORPUS_DATA / "plain-v2-0").iterdir()):
            s3.client.upload_file(str(f), bucket, f"data/p-{n}/{f.name}")
    failing = spark.read.format("kseg").load(f"s3://{bucket}/data")
    marked = spark.read.format("kseg").option("onUnreadable", "rows").load(f"s3://{bucket}/data")
    remove_bucket(s3, bucket)
    with pytest.raises(Exception, match=f"no such bucket: {bucket}") as got:
        failing.count()
    assert "no such file or directory" not in str(got.value)
    with pytest.raises(Exception, match="stopped: the first 3 reads all failed the same way") as stopped:
        marked.count()
    assert f"no such bucket: {bucket}" in str(stopped.value)


def test_a_remote_file_in_a_removed_bucket_says_the_bucket(s3) -> None:
    """The storage layer's open, which every command's reads go through (export's local run included)."""
    from kseg.errors import InputError
    from kseg.storage.location import RemoteFile

    bucket = "kseg-removed-before-open"
    s3.client.create_bucket(Bucket=bucket)
    s3.client.put_object(Bucket=bucket, Key="d/t-0/00000000000000000000.log", Body=b"")
    remove_bucket(s3, bucket)
    with pytest.raises(InputError, match=f"no such bucket: {bucket}"):
        RemoteFile(f"s3://{bucket}/d/t-0/00000000000000000000.log")
