"""``kseg grep --spark --value-decoder registry``: the schemas read once on the driver and shipped with each
task (the replayed store pickled in the task's query); on local[2] the matches, the rows and the notes
counting payloads printed as hex are the local run's."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")
pytest.importorskip("confluent_kafka.schema_registry.avro")
pytest.importorskip("fastavro")
pytest.importorskip("grpc_tools")

from tests.conftest import assert_no_traceback, run_cli  # noqa: E402
from tests.registry.build import build  # noqa: E402
from tests.spark.shared import run_on_spark  # noqa: E402

LOCAL2 = ["--spark", "--master", "local[2]"]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    base = tmp_path_factory.mktemp("registry-grep-spark")
    build(str(base))  # orders-0 (Avro, Protobuf, JSON Schema, header ids, unknown ids) and _schemas-0
    return base


@pytest.mark.parametrize(
    "args",
    [
        # the log root: _schemas-0's own records are no framed payloads (hex, counted in the notes)
        ["--value-decoder", "registry", "--key-decoder", "registry", "--count", "--value-regex", "."],
        ["--value-decoder", "registry", "--format", "json", "--value-regex", '"status":"PAID"'],
        ["--value-decoder", "registry", "--where", 'value.status == "PAID"', "--topic", "orders"],
    ],
)
def test_grep_with_the_registry_decoder_on_spark_prints_what_the_local_run_prints(root, args) -> None:
    local = run_cli(["grep", *args, str(root)])
    assert local.exit_code == 0, local.errtext
    spark = run_on_spark(["grep", *LOCAL2, *args, str(root)])
    assert_no_traceback(spark)
    assert (spark.exit_code, spark.text) == (local.exit_code, local.text)
    notes = [line for line in local.errtext.splitlines() if line.startswith("kseg: ")]
    assert [line for line in spark.errtext.splitlines() if line.startswith("kseg: ")] == notes
    if "--count" in args:
        assert any("printed as hex" in line for line in notes), notes  # the tasks' counts added on the driver
