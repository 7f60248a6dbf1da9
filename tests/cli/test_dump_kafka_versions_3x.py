"""``kseg dump --kafka-version 3.8``: Kafka 3.8's own tool, byte for byte.

Kafka 3.8's ``DumpLogSegments.scala`` is 3.9's without ``--remote-log-metadata-decoder``
(KAFKA-16228, 3.9): ``git diff 3.8 3.9`` of the tool, the group-coordinator, metadata,
transaction-log and record classes it calls shows no other change to what it prints
(``tests/data/kafka4x/MANIFEST.md``, "Kafka 3.8").  So 3.9's goldens are 3.8's, run here
under ``--kafka-version 3.8``; the corpus goldens run under 3.8 in ``test_dump_golden.py``.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.cli.test_dump_kafka_versions import DATA, GOLDEN, ROWS, _read, run_subprocess
from tests.conftest import run_cli

ROWS_39 = [r for r in ROWS if r["line"] == "3.9"]
REMOTE = "--remote-log-metadata-decoder"


@pytest.mark.parametrize("row", [r for r in ROWS_39 if REMOTE not in r["args (cwd = data/)"]],
                         ids=lambda r: f"{r['partition']}:{r['set']}")
def test_38_prints_39s_goldens(row: dict) -> None:
    """Every 3.9 golden of the new record types (Kafka 3.8 decodes the same types with the same
    schemas: unknown group types 9-23 and KRaft types 28-29 print as 3.9 prints them)."""
    want_out, want_err = _read(GOLDEN / "3.9" / row["partition"] / f"{row['file']}.{row['set']}", DATA, b"@DATA@/")
    result = run_cli(["dump", "--kafka-version", "3.8", *shlex.split(row["args (cwd = data/)"])], cwd=DATA)
    assert (result.exit_code, result.stdout, result.stderr) == (int(row["exit_code"]), want_out, want_err)


def test_38_has_no_remote_log_metadata_decoder() -> None:
    """Kafka 3.8's option parser does not know the flag (joptsimple dies with "remote-log-metadata-decoder
    is not a recognized option"); kseg makes that a usage error, exit 2, and nothing on stdout."""
    args = [REMOTE, "--files", "__remote_log_metadata-0/00000000000000000000.log"]
    r = run_subprocess(["dump", "--kafka-version", "3.8", *args], cwd=DATA)
    assert r.exit_code == 2 and r.stdout == b"" and b"Traceback" not in r.stderr
    assert b"Kafka 3.8's tool has no --remote-log-metadata-decoder (3.9+)" in r.stderr
    r = run_subprocess(["dump", *args], cwd=DATA, env={"KSEG_KAFKA_VERSION": "3.8.1"})
    assert r.exit_code == 2 and b"Kafka 3.8's tool has no --remote-log-metadata-decoder" in r.stderr
    # JSON is kseg's own schema, whatever the version
    j = run_cli(["dump", "--kafka-version", "3.8", "--format", "json", *args], cwd=DATA)
    assert j.exit_code == 0 and all(json.loads(line) for line in j.stdout.splitlines())


def test_38_says_kafka_serializer_classes_are_deprecated(tmp_path: Path) -> None:
    """KAFKA-16796 (3.8) added org.apache.kafka.tools.api's decoders and ``convertDeprecatedDecoderClass``:
    3.8 prints 3.9's deprecation line, value decoder then key decoder, per .log."""
    from kseg.testing.segment import write_segment
    from kseg.testing.v2 import RecordSpec, build_v2_batch

    write_segment(tmp_path, [[build_v2_batch([RecordSpec(b"k", b"v", 1)])]])
    args = ["--value-decoder-class", "kafka.serializer.LongDecoder", "--key-decoder-class",
            "kafka.serializer.StringDecoder", "--files", "00000000000000000000.log"]
    out = run_cli(["dump", "--kafka-version", "3.8", *args], cwd=tmp_path).stdout
    assert out == run_cli(["dump", "--kafka-version", "3.9", *args], cwd=tmp_path).stdout
    assert out.decode().splitlines()[1:3] == [
        "kafka.serializer.LongDecoder is deprecated. Please use org.apache.kafka.tools.api.LongDecoder instead",
        "kafka.serializer.StringDecoder is deprecated. Please use org.apache.kafka.tools.api.StringDecoder instead"]
