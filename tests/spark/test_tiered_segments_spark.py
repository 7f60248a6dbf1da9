"""Tiered segments (Aiven's layout, ``kseg.testing.aiven``) under ``--spark`` on a real local[2] PySpark:
``verify-index --spark``, ``export --spark`` and the data source give the rows of the local run, for a plain
copy and an encrypted one, locally and on moto's S3; ``--rsm-key`` (the option ``rsmKey`` of the data
source) reaches the executors, whose Python workers are other processes than the driver's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_tiered_aiven import Trees, partition_dir
from tests.conftest import run_cli
from tests.spark import test_datasource
from tests.spark.shared import run_on_spark
from tests.spark.test_datasource import rows_of

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")
pytest.importorskip("cryptography", reason="encrypted segments are read with cryptography (the test extra)")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (the test extra)")

VARIANTS = ("plain", "zstd+encrypted")
ORDER = ["logDir", "segment", "batchPosition", "offset"]


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Trees:
    return Trees(tmp_path_factory.mktemp("aiven-spark"))


spark = test_datasource.spark  # the fixture: the process's shared local[2] session


def inputs(trees: Trees) -> list[str]:
    """The tiered copies of two corpus partitions (one with transactions), plain and encrypted."""
    return [str(partition_dir(trees.base / v, p)) for v in VARIANTS for p in ("plain-v2-0", "txn-v2-0")]


def key(trees: Trees) -> list[str]:
    return ["--rsm-key", f"kp-2024={trees.key_file}"]


def sorted_rows(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: tuple((x is None, x) for x in (r[k] for k in ORDER)))


def _verify_on_spark(spark, paths: list[str], keys: dict[str, str]) -> tuple[int, str]:
    """The job of ``verify-index --spark`` (``run_spark_cli``) on the module's session, ``keys`` in the read
    context of this driver only (as ``--rsm-key`` gives them): the executors' Python workers are other
    processes."""
    import io

    from kseg.runtime.run import Run
    from kseg.runtime.verify import VerifyRun
    from kseg.spark.driver import run_spark_cli
    from kseg.storage.context import ReadContext
    from kseg.storage.private_keys import read_keys
    from kseg.storage.stores.find import discover

    out, err = io.BytesIO(), io.BytesIO()
    code = run_spark_cli(
        VerifyRun(Run(out, err)),
        discover(paths, [], ReadContext(keys=read_keys(keys))),
        strict=False,
        master=None,
        spark_conf=(),
        max_message_size=1 << 20,
        output_format="text",
        spark=spark,
        verbose=True,
    )
    return code, out.getvalue().decode()


def test_verify_index_on_spark_gives_the_local_rows(trees: Trees, spark) -> None:
    local = run_cli(["verify-index", "--verbose", *key(trees), *inputs(trees)])
    code, text = _verify_on_spark(spark, inputs(trees), {"kp-2024": str(trees.key_file)})
    assert local.exit_code == code == 0, text
    assert "clean" in local.text and text == local.text
    code, text = _verify_on_spark(spark, inputs(trees)[2:], {})  # no key on the driver: none on the executors
    assert code == 2 and "give its private key with --rsm-key kp-2024=FILE" in text
    assert "executor" in text and ": clean" not in text


def test_export_on_spark_and_the_data_source_give_the_local_rows(trees: Trees, spark, tmp_path: Path) -> None:
    want_file = tmp_path / "local.parquet"
    r = run_cli(["export", "-q", *key(trees), "-o", str(want_file), *inputs(trees)])
    assert r.exit_code == 0, r.errtext
    want = sorted_rows(pq.read_table(want_file).to_pylist())
    assert len(want) > 100
    out = tmp_path / "spark-out"
    r = run_on_spark(["export", "--spark", "--master", "local[2]", "-q", *key(trees), "-o", str(out), *inputs(trees)])
    assert r.exit_code == 0, r.errtext[-3000:]
    assert sorted_rows(pq.read_table(out).to_pylist()) == want
    df = spark.read.format("kseg").option("rsmKey", f"kp-2024={trees.key_file}").load(",".join(inputs(trees)))
    got = rows_of(df)
    assert len(got) == len(want) and [r["offset"] for r in sorted_rows(got)] == [r["offset"] for r in want]
    assert [r["value"] for r in sorted_rows(got)] == [r["value"] for r in want]
    with pytest.raises(Exception, match="--rsm-key kp-2024=FILE"):  # no key: the executor's error, not rows
        spark.read.format("kseg").option("onCorruption", "fail").load(inputs(trees)[2]).collect()


def test_data_source_on_s3_with_the_key(trees: Trees, spark, s3) -> None:
    s3.upload_tree(trees.base / "zstd+encrypted", "tiered-spark/zenc")
    uri = s3.uri("tiered-spark/zenc/" + str(partition_dir(Path(""), "plain-v2-0")))
    local = str(partition_dir(trees.base / "local", "plain-v2-0"))
    remote = rows_of_key(spark, uri, trees)
    plain = rows_of_key(spark, local, trees)
    assert len(remote) == len(plain) > 100
    assert [(r["offset"], r["value"]) for r in remote] == [(r["offset"], r["value"]) for r in plain]


def rows_of_key(spark, path: str, trees: Trees) -> list[dict]:
    rows = rows_of(spark.read.format("kseg").option("rsmKey", f"kp-2024={trees.key_file}").load(path))
    return sorted(rows, key=lambda r: r["offset"] if r["offset"] is not None else -1)


def test_diff_on_spark_of_a_local_and_an_encrypted_tiered_replica(trees: Trees, spark) -> None:
    """``diff --roots --spark``'s job (``kseg.spark.diff_job.run``) on the module's session: the key installed
    on the driver reaches the task; without it the set is an error naming the key pair, never identical."""
    from kseg.ops.diff.diff import replica_sets
    from kseg.spark import diff_job
    from kseg.storage.context import ReadContext, reading
    from kseg.storage.private_keys import read_keys

    topic = partition_dir(Path(""), "txn-v2-0").parent
    roots = [str(trees.base / "local" / topic), str(trees.base / "zstd+encrypted" / topic)]
    local = run_cli(["diff", "--roots", "--format", "json", *key(trees), *roots])
    assert local.exit_code == 0 and '"status":"identical"' in local.text, local.text
    for keys in ({"kp-2024": str(trees.key_file)}, {}):
        with reading(ReadContext(keys=read_keys(keys))):
            ((rows, error),) = diff_job.run(spark, replica_sets(roots, []))
        if keys:
            assert error is None and rows is not None
            assert [r["status"] for r in rows if r["type"] == "summary"] == ["identical"]
        else:
            assert rows is None and error is not None and "--rsm-key kp-2024=FILE" in error
