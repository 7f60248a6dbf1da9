"""kseg.spark.paths: local paths made absolute on the driver; what executors wrote looked for."""

from __future__ import annotations

import os
from pathlib import Path

from kseg.spark.paths import absolute, absolute_all, local_roots, missing_line, not_here
from kseg.storage.stores.discover import store_of
from tests.stores import local


def test_local_paths_become_absolute_and_uris_pass(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert absolute("data/b1/data") == str(tmp_path / "data" / "b1" / "data")
    assert absolute("./out/../out/r") == str(tmp_path / "out" / "r")
    assert absolute("file:///mnt/kafka/x") == "/mnt/kafka/x"
    assert absolute("s3://bucket/prefix/") == "s3://bucket/prefix/"
    assert absolute_all(["a", "/b", "gs://c/d"]) == [str(tmp_path / "a"), "/b", "gs://c/d"]
    assert local_roots(["a", "s3://b/c"]) == [str(tmp_path / "a")]


def test_files_the_driver_does_not_see_are_named(tmp_path: Path) -> None:
    there = tmp_path / "p-0" / "part-1.parquet"
    there.parent.mkdir()
    there.write_bytes(b"x")
    elsewhere = str(tmp_path / "p-1" / "part-2.parquet")  # written on an executor's own disk
    assert not_here([str(there), elsewhere], local()) == [elsewhere]
    assert not_here(["s3://bucket/out/part-3.parquet"], store_of("s3://bucket/out")) == []  # a store's: not checked
    line = missing_line([elsewhere], 3, "out/exp", "Parquet files")
    assert line.startswith("1 of the 3 Parquet files the executors wrote are not in out/exp")
    assert elsewhere in line and "mount every executor sees" in line
    assert os.path.exists(there)
