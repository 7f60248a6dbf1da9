"""``kseg tiered --remote --spark`` on a real local[2] PySpark: the store's prefixes listed by the executors give
the rows the local listing gives."""

from __future__ import annotations

import pytest

from kseg.storage.remote_keys import object_key
from kseg.testing import remote_metadata as rm
from tests.conftest import run_cli, run_subprocess
from tests.ops.tiered import scenario as sc
from tests.spark.shared import run_on_spark

pyspark = pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")


def test_spark_listing_gives_the_local_rows(tmp_path) -> None:
    cluster = sc.healthy()
    cluster.drop_objects = (object_key("aiven", "", sc.TOPIC, sc.TOPIC_ID, 0, 200, sc.IDS["b"], "log"),)
    cluster.values.append(rm.segment_metadata(sc.seg("new"), 400, 499, size=sc.SIZE))
    cluster.stored["new"] = 400
    meta, store, logdir = cluster.write(tmp_path)
    for topic in ("a", "b", "c"):  # more prefixes than tasks, and objects that are no segment's
        (store / f"{topic}-AAAAAAAAAAAAAAAAAAAAAA" / "0").mkdir(parents=True)
        (store / f"{topic}-AAAAAAAAAAAAAAAAAAAAAA" / "0" / "notes.txt").write_text("x")
    (store / "top.txt").write_text("at the root")
    for suffix in sc.AIVEN_SUFFIXES:  # a's objects copied under orders-7's prefix: orphans, found by full key
        src = store / object_key("aiven", "", sc.TOPIC, sc.TOPIC_ID, 0, 100, sc.IDS["a"], suffix)
        dst = store / object_key("aiven", "", sc.TOPIC, sc.TOPIC_ID, 7, 100, sc.IDS["a"], suffix)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
    (store / object_key("aiven", "", sc.TOPIC, sc.TOPIC_ID, 0, 300, sc.IDS["c"], "log")).write_bytes(b"")
    args = ["tiered", "--format", "json", "--metadata-partitions", "3", str(meta), "--remote", str(store)]
    local = run_cli([*args, "--logdir", str(logdir)])
    spark = run_on_spark([*args, "--logdir", str(logdir), "--spark", "--master", "local[2]"])
    assert local.exit_code == spark.exit_code == 1, spark.errtext[-2000:]
    assert spark.text == local.text
    assert '"otherObjects":4' in spark.text and '"kind":"missing"' in spark.text and '"orphanObjects":3' in spark.text
    assert '"partition":"orders-7"' in spark.text and "not the key the RSM fetches" in spark.text
    assert ": 0 bytes, expected 2048" in spark.text


def test_spark_needs_the_store(tmp_path) -> None:
    meta, _, _ = sc.healthy().write(tmp_path)
    r = run_subprocess(["tiered", str(meta), "--spark"])
    assert r.exit_code == 2 and "give it with --remote URI" in r.errtext
