"""``kseg dump --kafka-version 3.7`` and ``3.8``: Kafka 3.7's and 3.8's own tools, byte for byte.

Kafka 3.8's ``DumpLogSegments.scala`` is 3.9's without ``--remote-log-metadata-decoder``
(KAFKA-16228, 3.9): ``git diff 3.8 3.9`` of the tool, the group-coordinator, metadata,
transaction-log and record classes it calls shows no other change to what it prints
(``tests/data/kafka4x/MANIFEST.md``, "Kafka 3.8").  So 3.9's goldens are 3.8's, run here
under ``--kafka-version 3.8``; the corpus goldens run under 3.8 in ``test_dump_golden.py``.

Kafka 3.7's is 3.8's but for ``--offsets-decoder`` (``GroupMetadataManager.formatRecordKeyAndValue``,
replaced by KAFKA-16470 in 3.8), control types 5/6 (``UNKNOWN``: KAFKA-16207 added them in 3.8), the
decoder classes (no ``org.apache.kafka.tools.api``, KAFKA-16796) and the JSON name ``lastKnownELR``;
its corpus texts are in ``golden/CORPUS-DIFF.tsv`` (run in ``test_dump_kafka_versions.py``).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.cli.test_dump_kafka_versions import (
    DATA,
    GOLDEN,
    OFFSETS_LOG,
    ROWS,
    _read,
    decoder_classes,
    dump_as,
)
from tests.conftest import run_cli, run_subprocess

ROWS_39 = [r for r in ROWS if r["line"] == "3.9"]
REMOTE = "--remote-log-metadata-decoder"


#: (line, 3.9 row): 3.7's offsets text is its own (test_37_offsets_decoder_on_the_new_record_types)
CASES_39 = [
    (line, r)
    for line in ("3.7", "3.8")
    for r in ROWS_39
    if REMOTE not in r["args (cwd = data/)"] and not (line == "3.7" and r["set"] == "offsets")
]


@pytest.mark.parametrize(
    "line,row", CASES_39, ids=lambda c: c if isinstance(c, str) else f"{c['partition']}:{c['set']}"
)
def test_prints_39s_goldens(line: str, row: dict) -> None:
    """Every 3.9 golden of the new record types (Kafka 3.8 decodes the same types with the same
    schemas: unknown group types 9-23 and KRaft types 28-29 print as 3.9 prints them); 3.7 too, but
    for ``--offsets-decoder``."""
    want_out, want_err = _read(GOLDEN / "3.9" / row["partition"] / f"{row['file']}.{row['set']}", DATA, b"@DATA@/")
    result = run_cli(["dump", "--kafka-version", line, *shlex.split(row["args (cwd = data/)"])], cwd=DATA)
    assert (result.exit_code, result.stdout, result.stderr) == (int(row["exit_code"]), want_out, want_err)


def test_37_offsets_decoder_on_the_new_record_types() -> None:
    """``readMessageKey`` of 3.7: key versions 0-1 are offset commits, 2 group metadata, every other
    record type (KIP-848's 3-8, share and streams groups) ``unknown::version=N`` with no payload."""
    r = dump_as("3.7", "--offsets-decoder", "--files", OFFSETS_LOG)
    keys = [line.split(" headerKeys: [] ", 1)[1] for line in r.stdout.decode().splitlines() if line.startswith("| ")]
    assert r.exit_code == 0 and r.stderr == b""
    assert keys == [
        "key: offset_commit::group=g1,partition=t-0 payload: offset=42,metadata=m",
        "key: offset_commit::group=g0,partition=t-1 payload: offset=7",
        *[f"key: unknown::version={t}" for t in (3, 8, 9, 11, 11, 12, 15, 15, 16, 17, 19, 20, 21, 22, 23, 3, 3)],
    ]
    # the batch lines are the 3.9 golden's
    want, _ = _read(GOLDEN / "3.9" / "__consumer_offsets-0" / "00000000000000000000.log.offsets", DATA, b"@DATA@/")
    assert [x for x in r.stdout.splitlines() if not x.startswith(b"| ")] == [
        x for x in want.splitlines() if not x.startswith(b"| ")
    ]


def test_37_has_3_8s_decoder_classes_refused() -> None:
    """org.apache.kafka.tools.api came in 3.8 (KAFKA-16796): Kafka 3.7 dies with ClassNotFoundException
    after the first "Dumping" line; kseg refuses it up front (exit 2).  kafka.serializer's classes work,
    without 3.8's deprecation lines."""
    args = ["--value-decoder-class", "org.apache.kafka.tools.api.LongDecoder", "--files", "x.log"]
    r = run_subprocess(["dump", "--kafka-version", "3.7", *args])
    assert r.exit_code == 2 and r.stdout == b"" and b"Traceback" not in r.stderr
    assert (
        b"Kafka 3.7's tool has no org.apache.kafka.tools.api.LongDecoder (3.8+); its decoders are "
        b"kafka.serializer.LongDecoder"
    ) in r.stderr
    # with a topic decoder Kafka makes no decoder class, so nothing is refused
    r = dump_as(
        "3.7", "--transaction-log-decoder", *args[:2], "--files", "__transaction_state-0/00000000000000000100.log"
    )
    assert r.exit_code == 0 and b"transaction_metadata::transactionalId=" in r.stdout


def test_37_kafka_serializer_decoders_without_notice(tmp_path: Path) -> None:
    from kseg.testing.segment import write_segment
    from kseg.testing.v2 import RecordSpec, build_v2_batch

    write_segment(tmp_path, [[build_v2_batch([RecordSpec(b"k", b"long-value", 1)])]])
    args = ["--value-decoder-class", "kafka.serializer.LongDecoder", "--files", "00000000000000000000.log"]
    out = run_cli(["dump", "--kafka-version", "3.7", *args], cwd=tmp_path).stdout
    assert b"deprecated" not in out and b"payload: 7813585267934519660\n" in out
    assert out.splitlines()[1] == b"Log starting offset: 0"


def test_37_prints_lastKnownELR() -> None:
    """PartitionRecord/PartitionChangeRecord's tagged field was ``LastKnownELR`` in 3.7's specs (KIP-966)
    and ``LastKnownElr`` from 3.8: its JSON name follows."""
    from kseg.decoders import parser_for, schema
    from kseg.decoders.encode import write
    from kseg.decoders.wire import Writer
    from kseg.format.releases import K37, K38

    for name, api_key in (("PartitionRecord", 3), ("PartitionChangeRecord", 5)):
        struct = schema.message(name).struct
        w = Writer()
        for v in (1, api_key, 2):
            w.uvarint(v)
        value = w.getvalue() + write(struct, struct.default_value() | {"lastKnownElr": [4]}, 2)
        old = parser_for("cluster-metadata", K37).parse(0, None, value)[1]
        new = parser_for("cluster-metadata", K38).parse(0, None, value)[1]
        assert '"lastKnownELR":[4]' in old and "lastKnownElr" not in old
        assert new == old.replace("lastKnownELR", "lastKnownElr")


@pytest.mark.parametrize("line", ["3.7", "3.8"])
def test_37_38_have_no_remote_log_metadata_decoder(line: str) -> None:
    r = run_subprocess(
        ["dump", "--kafka-version", line, REMOTE, "--files", "__remote_log_metadata-0/00000000000000000000.log"],
        cwd=DATA,
    )
    assert r.exit_code == 2 and f"Kafka {line}'s tool has no --remote-log-metadata-decoder".encode() in r.stderr


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
    args = decoder_classes("kafka.serializer.LongDecoder", "kafka.serializer.StringDecoder")
    out = run_cli(["dump", "--kafka-version", "3.8", *args], cwd=tmp_path).stdout
    assert out == run_cli(["dump", "--kafka-version", "3.9", *args], cwd=tmp_path).stdout
    assert out.decode().splitlines()[1:3] == [
        "kafka.serializer.LongDecoder is deprecated. Please use org.apache.kafka.tools.api.LongDecoder instead",
        "kafka.serializer.StringDecoder is deprecated. Please use org.apache.kafka.tools.api.StringDecoder instead",
    ]
