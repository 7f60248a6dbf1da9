"""``kseg dump --kafka-version 3.0`` ... ``3.6``: those releases' own tools, byte for byte.

Their ``DumpLogSegments.scala`` (3.0 ``dee764c8``, 3.1 ``2b57b38f``, 3.2 ``e4ca0666``) prints what 3.7's
prints but for the lines ``tests/data/kafka4x/MANIFEST.md`` ("Kafka 3.0-3.2") cites, each a rewrite of a
3.7 line: ``Starting offset: N`` (3.2: ``DumpLogSegments.scala:251``); no ``deleteHorizonMs`` on a batch
line before 3.2 (3.2: ``:320``, 3.1: ``:322``); no ``lastTimestamp`` on a producer-snapshot line in 3.0
(3.0 ``:105``, 3.1 ``:106``); ``currentTxnFirstOffset`` Scala's ``Option[Long]`` (``None``/``Some(N)``,
``kafka/log/ProducerStateManager.scala:94`` to 3.4).  So each corpus golden (Kafka's own output, as 3.8-4.0
print it; 3.7's text where 3.7 differs, ``golden/CORPUS-DIFF.tsv``) is that release's golden after
those rewrites; the rewrites are checked on their own in the tests that pin whole texts below.

3.3-3.6 print 3.7's text (the same tool strings, coordinator text, control types and snapshot records;
MANIFEST "Kafka 3.3-3.6") but for the ``Option`` of 3.3 and 3.4; their ``--cluster-metadata-decoder``
is refused like 3.0-3.2's.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.cli.test_dump_kafka_versions import DIFFS, GOLDEN, _read
from tests.conftest import CORPUS_DATA, CORPUS_GOLDEN, golden_rows, run_cli, run_subprocess

LINES = ("3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6")
OLD = LINES[:3]
#: the lines whose own KRaft tables kseg carries (``kseg/decoders/schemas/releases/``)
KRAFT_TABLES = LINES
#: 3.3's RegisterBrokerRecord knows versions 0-1: a v2+ record's ``IsMigratingZkBroker`` (after ``BrokerId``)
#: is read as the start of ``IncarnationId``, and the record fails
_REGISTER_V3 = re.compile(
    rb"(?<=\| offset: )(\d+)( .*?)payload: \{\"type\":\"REGISTER_BROKER_RECORD\",\"version\":[2-9].*"
)
_FEATURE_LEVEL = re.compile(rb"(?<=\| offset: )(\d+)( .*?)payload: \{\"type\":\"FEATURE_LEVEL_RECORD\".*")
_NO_OP = re.compile(rb"(?<=\| offset: )(\d+)( .*?)payload: \{\"type\":\"NO_OP_RECORD\".*")
_HORIZON = re.compile(rb" deleteHorizonMs: \S+")
_LAST_TS = re.compile(rb" lastTimestamp: -?\d+")
_TXN = re.compile(rb"currentTxnFirstOffset: OptionalLong(?:\[(-?\d+)\]|\.empty)")


def as_released(text: bytes, line: str) -> bytes:
    """Kafka 3.7's text of a dump as ``line``'s tool prints it (the module docstring's rewrites)."""
    out = []
    for row in text.splitlines(keepends=True):
        if line in ("3.3", "3.4", "3.5", "3.6"):  # 3.7's text but Scala's Option (to 3.4)
            if row.startswith(b"producerId: ") and line in ("3.3", "3.4"):
                row = _TXN.sub(lambda m: b"currentTxnFirstOffset: " + (b"Some(%s)" % m[1] if m[1] else b"None"), row)
        elif row.startswith(b"Log starting offset: "):
            row = b"Starting offset: " + row[len(b"Log starting offset: ") :]
        elif row.startswith(b"baseOffset: ") and line in ("3.0", "3.1"):
            row = _HORIZON.sub(b"", row)
        elif row.startswith(b"producerId: "):
            row = _TXN.sub(lambda m: b"currentTxnFirstOffset: " + (b"Some(%s)" % m[1] if m[1] else b"None"), row)
            if line == "3.0":
                row = _LAST_TS.sub(b"", row)
        out.append(row)
    return b"".join(out)


def _golden_37(row: dict) -> tuple[int, bytes, bytes]:
    key = ("3.7", row["partition"], row["file"], row["set"])
    if key in DIFFS:
        stem = GOLDEN / DIFFS[key]["stored"] / "corpus" / row["partition"] / f"{row['file']}.{row['set']}"
        code = int(DIFFS[key]["exit_code"])
    else:
        stem = CORPUS_GOLDEN / row["partition"] / f"{row['file']}.{row['set']}"
        code = int(row["exit_code"])
    out, err = _read(stem, CORPUS_DATA, b"@CORPUS@/")
    return code, out, err


@pytest.mark.parametrize("line", LINES)
def test_corpus(line: str) -> None:
    """Every run of Kafka's corpus prints 3.7's golden rewritten as ``line`` prints it; the
    ``--cluster-metadata-decoder`` run is refused (exit 2, see test_cluster_metadata_decoder_refused)."""
    checked = rewritten = 0
    for row in golden_rows():
        args = shlex.split(row["args"])
        result = run_cli(["dump", "--kafka-version", line, *args], cwd=CORPUS_DATA)
        if "--cluster-metadata-decoder" in args and line not in KRAFT_TABLES:
            assert result.exit_code == 2 and result.stdout == b"", row
            continue
        code, want_out, want_err = _golden_37(row)
        want_out = as_released(want_out, line)
        if "--cluster-metadata-decoder" in args and line in ("3.0", "3.1", "3.2", "3.3"):
            # RegisterBrokerRecord v3 with v0's (3.0-3.2) or v1's (3.3) fields
            failed = b"\\1\\2payload: Error at \\1, skipping. Failed to deserialize record with type 0"
            want_out = _REGISTER_V3.sub(failed, want_out)
        if "--cluster-metadata-decoder" in args and line in OLD:
            # FeatureLevelRecord v0 as 3.0-3.2 lay it out (MinFeatureLevel, MaxFeatureLevel) fails on 3.3+'s
            # FeatureLevel; NoOpRecord (20) came in 3.3; 3.0/3.1's ProducerIdsRecord names its field ProducerIdsEnd
            failed = b"\\1\\2payload: Error at \\1, skipping. Failed to deserialize record with type 12"
            want_out = _FEATURE_LEVEL.sub(failed, want_out)
            unknown = (
                b"\\1\\2payload: Error at \\1, skipping. "
                b"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 20"
            )
            want_out = _NO_OP.sub(unknown, want_out)
            if line != "3.2":
                want_out = want_out.replace(b'"nextProducerId":', b'"producerIdsEnd":')
        assert result.exit_code == code, row
        assert result.stdout == want_out, row
        if want_err.startswith(b"Exception in thread"):  # Kafka died: kseg says what and where in one line
            lines = result.stderr.decode().splitlines()
            assert len(lines) == 1 and lines[0].startswith("kseg: error: "), row
        else:
            assert result.stderr == want_err, row
        rewritten += want_out != _golden_37(row)[1]
        checked += 1
    assert checked == len(golden_rows()) - (line not in KRAFT_TABLES)
    if line in OLD:
        assert rewritten >= 36  # every .log run at least (its "Starting offset:" line)
    else:  # 3.3/3.4: the producer snapshots only; 3.5/3.6: nothing
        assert (rewritten > 0) == (line in ("3.3", "3.4"))


# Whole texts, derived by hand from the source (MANIFEST "Kafka 3.0-3.2"): a transactional v2 segment's
# first batch line and a producer snapshot with an open transaction.
_TXN_BATCH_32 = (
    b"baseOffset: 0 lastOffset: 3 count: 4 baseSequence: 0 lastSequence: 3 producerId: 2000 "
    b"producerEpoch: 1 partitionLeaderEpoch: 0 isTransactional: true isControl: false "
    b"deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1730000000003 size: 353 magic: 2 "
    b"compresscodec: none crc: 2933738256 isvalid: true\n"
)
_SNAPSHOT_31 = (
    b"producerId: 2000 producerEpoch: 1 coordinatorEpoch: 8 currentTxnFirstOffset: Some(50) "
    b"lastTimestamp: 1730000000039 firstSequence: 14 lastSequence: 15 lastOffset: 51 offsetDelta: 1 "
    b"timestamp: 1730000000039\n"
)


@pytest.mark.parametrize("line", OLD)
def test_whole_lines(line: str) -> None:
    log = run_cli(
        ["dump", "--kafka-version", line, "--files", "txn-v2-0/00000000000000000000.log"], cwd=CORPUS_DATA
    ).stdout.splitlines(keepends=True)
    assert log[:2] == [b"Dumping txn-v2-0/00000000000000000000.log\n", b"Starting offset: 0\n"]
    batch = _TXN_BATCH_32 if line == "3.2" else _TXN_BATCH_32.replace(b"deleteHorizonMs: OptionalLong.empty ", b"")
    assert log[2] == batch
    snap = run_cli(
        ["dump", "--kafka-version", line, "--files", "txn-v2-0/00000000000000000052.snapshot"], cwd=CORPUS_DATA
    ).stdout.splitlines(keepends=True)
    want = _SNAPSHOT_31 if line != "3.0" else _SNAPSHOT_31.replace(b"lastTimestamp: 1730000000039 ", b"")
    assert snap[1] == want
    assert snap[2].startswith(b"producerId: 2001 producerEpoch: 3 coordinatorEpoch: 9 currentTxnFirstOffset: None ")


@pytest.mark.parametrize("line", OLD)
def test_checkpoint_is_an_unknown_file(line: str, tmp_path: Path) -> None:
    """3.3 added the KRaft snapshot dump (KAFKA-13845): 3.0-3.2 match no ``.checkpoint`` suffix and print
    "Ignoring unknown file" on stderr after the "Dumping" line, exit 0."""
    path = tmp_path / "00000000000000000010-0000000001.checkpoint"  # no .checkpoint in the test data
    path.write_bytes(b"")
    r = run_cli(["dump", "--kafka-version", line, "--files", str(path)])
    assert (r.exit_code, r.stdout, r.stderr) == (
        0,
        f"Dumping {path}\n".encode(),
        f"Ignoring unknown file {path}\n".encode(),
    )
    assert b"Snapshot end offset" in run_cli(["dump", "--kafka-version", "3.7", "--files", str(path)]).stdout


@pytest.mark.parametrize("line", OLD)
def test_snapshot_control_records_print_their_type(line: str, tmp_path: Path) -> None:
    """Control types 3/4 in a .log: ``controlType: SNAPSHOT_HEADER(3)`` (3.0-3.2's ``dumpLog`` matches
    ABORT/COMMIT only); types 5/6 ``UNKNOWN`` as in 3.7."""
    from kseg.cli.dump import _kraft_text_of
    from kseg.format.releases import release

    text = _kraft_text_of(release(line))
    assert text(3, b"", b"") == " controlType: SNAPSHOT_HEADER(3)"
    assert text(4, b"", b"") == " controlType: SNAPSHOT_FOOTER(4)"
    assert text(5, b"", b"") == " controlType: UNKNOWN(5)"


@pytest.mark.parametrize("line", OLD)
def test_max_bytes_refused(line: str) -> None:
    """--max-bytes came in 3.3 (KAFKA-13687): 3.0-3.2's joptsimple parser dies on it; kseg: exit 2."""
    r = run_subprocess(["dump", "--kafka-version", line, "--max-bytes", "100", "--files", "x.log"])
    assert r.exit_code == 2 and r.stdout == b"" and b"Traceback" not in r.stderr
    assert f"Kafka {line}'s tool has no --max-bytes (3.3+)".encode() in r.stderr


@pytest.mark.parametrize("line", ["2.8"])
def test_cluster_metadata_decoder_refused(line: str) -> None:
    """2.8's metadata classes (its ``raft`` module's own serde; 3.0-3.6 read with their own tables, see the
    tests below): not reproduced, so refused (exit 2) rather than printed
    wrong.  --format json is unaffected."""
    from kseg.format.releases import release

    args = ["--cluster-metadata-decoder", "--files", "__cluster_metadata-0/00000000000000000000.log"]
    r = run_subprocess(["dump", "--kafka-version", line, *args], cwd=CORPUS_DATA)
    assert r.exit_code == 2 and r.stdout == b""
    assert f"Kafka {release(line).name}'s --cluster-metadata-decoder is not reproduced".encode() in r.stderr
    j = run_cli(["dump", "--kafka-version", line, "--format", "json", *args], cwd=CORPUS_DATA)
    assert j.exit_code == 0 and j.stdout


@pytest.mark.parametrize("line", LINES)
def test_offsets_and_transaction_decoders_are_37s(line: str) -> None:
    """``GroupMetadataManager.formatRecordKeyAndValue`` and ``TransactionLog.formatRecordKeyAndValue``
    (and the helpers they call, and the coordinator schemas) are 3.7's in 3.0-3.2: the record lines are
    3.7's, only the header line differs."""
    for args in (
        ["--offsets-decoder", "--files", "__consumer_offsets-0/00000000000000000000.log"],
        ["--transaction-log-decoder", "--files", "__transaction_state-0/00000000000000000100.log"],
    ):
        data = GOLDEN.parent / "data"
        old = run_cli(["dump", "--kafka-version", line, *args], cwd=data)
        new = run_cli(["dump", "--kafka-version", "3.7", *args], cwd=data)
        assert old.exit_code == new.exit_code and old.stderr == new.stderr
        assert old.stdout == as_released(new.stdout, line) and b"| offset: " in old.stdout


@pytest.mark.parametrize("line", KRAFT_TABLES)
def test_36_cluster_metadata_decoder_reads_as_36s_classes(line: str) -> None:
    """3.6's metadata classes (``kseg/decoders/schemas/releases/kraft-3.6.json``, from ``apache/kafka`` 3.6
    ``c888ab9``'s specs): types up to 26, RegisterBrokerRecord known to version 2, BrokerRegistrationChangeRecord
    to 1, every other to 0, and no ``LogDirs``/``CordonedLogDirs``/``Directories``/ELR tags.  A newer record
    is read with 3.6's field list (its generated ``read`` checks no version), its unknown tags kept aside and
    not printed, and printed with its own version number."""
    from tests.cli.test_dump_kafka_versions import DATA

    r = run_cli(
        [
            "dump",
            "--kafka-version",
            line,
            "--cluster-metadata-decoder",
            "--files",
            "__cluster_metadata-0/00000000000000000000.log",
        ],
        cwd=DATA,
    )
    payloads = [line.split(" payload: ", 1)[1] for line in r.stdout.decode().splitlines() if " payload: " in line]
    register = (
        "Error at 3, skipping. Failed to deserialize record with type 0"
        if line in OLD + ("3.3",)
        else '{"type":"REGISTER_BROKER_RECORD","version":4,"data":{"brokerId":1,"isMigratingZkBroker":false,'
        '"incarnationId":"AQIDBAUGBwgJCgsMDQ4PEA","brokerEpoch":7,"endPoints":[],"features":[],"rack":null,'
        '"fenced":true,"inControlledShutdown":false}}'
    )
    assert r.exit_code == 0 and payloads == [
        "Error at 1, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 28",
        "Error at 2, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 29",
        register,
        '{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":3,"data":{"brokerId":1,"brokerEpoch":7}}',
    ]


def test_36_reads_partition_records_with_its_field_list() -> None:
    """PartitionRecord v1 (3.7, KIP-858) adds a non-tagged ``Directories`` array: 3.6 reads it as the
    tagged-field section and fails; PartitionChangeRecord v1's ``Directories`` is a tag, kept aside."""
    from kseg.decoders import parser_for, schema
    from kseg.decoders.encode import write
    from kseg.decoders.wire import Writer
    from kseg.format.releases import release

    def value(name: str, api_key: int, version: int, extra: dict) -> bytes:
        struct = schema.message(name).struct
        w = Writer()
        for v in (1, api_key, version):
            w.uvarint(v)
        return w.getvalue() + write(struct, struct.default_value() | extra, version)

    k36, k37 = parser_for("cluster-metadata", release("3.6")), parser_for("cluster-metadata", release("3.7"))
    rec = value("PartitionRecord", 3, 1, {"directories": [b"\x11" * 16]})
    assert k36.parse(7, None, rec)[1] == "Error at 7, skipping. Failed to deserialize record with type 3"
    assert '"directories":["EREREREREREREREREREREQ"]' in k37.parse(7, None, rec)[1]
    change = value("PartitionChangeRecord", 5, 1, {"directories": [b"\x11" * 16]})
    assert k36.parse(7, None, change)[1] == (
        '{"type":"PARTITION_CHANGE_RECORD","version":1,"data":{"partitionId":-1,"topicId":"AAAAAAAAAAAAAAAAAAAAAA"}}'
    )
    # a record of a version 3.6 knows prints as 3.7 prints it
    v0 = value("PartitionRecord", 3, 0, {"partitionId": 3})
    assert k36.parse(7, None, v0) == k37.parse(7, None, v0)


def test_35_reads_delegation_tokens_without_requester() -> None:
    """``DelegationTokenRecord.json`` v0 gained the non-tagged ``Requester`` in 3.6 without a version bump
    (``@1361d5c`` has none): 3.5's class reads a 3.5-written record whole and a 3.6+ one with its own
    field list, so ``Requester``'s bytes are read as ``Renewers``' and the record fails."""
    from kseg.decoders import parser_for, schema
    from kseg.decoders.encode import write
    from kseg.decoders.wire import Writer
    from kseg.format.releases import release

    struct = schema.message("DelegationTokenRecord").struct
    head = Writer()
    for v in (1, 10, 0):
        head.uvarint(v)
    token = struct.default_value() | {
        "owner": "User:alice",
        "requester": "User:bob",
        "tokenId": "t1",
        "renewers": ["User:carol"],
        "expirationTimestamp": 9,
    }
    k35, k36 = parser_for("cluster-metadata", release("3.5")), parser_for("cluster-metadata", release("3.6"))
    new = head.getvalue() + write(struct, token, 0)
    assert '"requester":"User:bob"' in k36.parse(5, None, new)[1]
    assert k35.parse(5, None, new)[1].startswith("Error at 5, skipping. ")
    # a record as 3.5 wrote it: the same bytes without Requester (a compact string: its length + 1, then UTF-8)
    requester = b"\x09User:bob"
    old = new.replace(b"User:alice" + requester, b"User:alice", 1)
    assert len(old) == len(new) - len(requester)
    text = k35.parse(5, None, old)[1]
    assert '"owner":"User:alice","renewers":["User:carol"]' in text and "requester" not in text


@pytest.mark.parametrize("line", ("3.3", "3.4"))
def test_34_reads_scram_credentials_with_their_v0_layout(line: str) -> None:
    """``UserScramCredentialRecord.json`` v0 at 3.3/3.4 (``Name``, ``CredentialInfos`` of ``Mechanism``, ``Salt``,
    ``SaltedPassword``, ``Iterations``) was re-laid in 3.5 without a version bump (``Mechanism``, ``Salt``,
    ``StoredKey``, ``ServerKey``, ``Iterations`` at the top): 3.3/3.4 read a record of their own layout whole
    and a 3.5+ one with it, so ``Mechanism``'s byte is read as the array's length and the record fails."""
    from kseg.decoders import parser_for, schema
    from kseg.decoders.encode import write
    from kseg.decoders.metadata import kraft_table, release_message
    from kseg.decoders.wire import Writer
    from kseg.format.releases import release

    head = Writer()
    for v in (1, 11, 0):
        head.uvarint(v)
    old_struct = release_message("UserScramCredentialRecord", kraft_table(line)["11"]).struct
    old = head.getvalue() + write(
        old_struct,
        {
            "name": "alice",
            "credentialInfos": [{"mechanism": 1, "salt": b"\x01\x02", "saltedPassword": b"\x03", "iterations": 4096}],
        },
        0,
    )
    k34, k36 = parser_for("cluster-metadata", release(line)), parser_for("cluster-metadata", release("3.6"))
    assert k34.parse(5, None, old)[1] == (
        '{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","credentialInfos":'
        '[{"mechanism":1,"salt":"AQI=","saltedPassword":"Aw==","iterations":4096}]}}'
    )
    struct = schema.message("UserScramCredentialRecord").struct
    new = head.getvalue() + write(
        struct,
        struct.default_value()
        | {
            "name": "alice",
            "mechanism": 1,
            "salt": b"\x01",
            "storedKey": b"\x02",
            "serverKey": b"\x03",
            "iterations": 4096,
        },
        0,
    )
    assert '"storedKey":"Ag=="' in k36.parse(5, None, new)[1]
    assert k34.parse(5, None, new)[1].startswith("Error at 5, skipping. ")


def test_34_reads_access_control_records() -> None:
    """Type 6 is ``AccessControlRecord`` in 3.3/3.4's specs (gone in 3.5: "Unknown metadata id 6")."""
    from kseg.decoders import parser_for
    from kseg.decoders.encode import write
    from kseg.decoders.metadata import kraft_table, release_message
    from kseg.decoders.wire import Writer
    from kseg.format.releases import release

    head = Writer()
    for v in (1, 6, 0):
        head.uvarint(v)
    struct = release_message("AccessControlRecord", kraft_table("3.4")["6"]).struct
    value = head.getvalue() + write(
        struct, struct.default_value() | {"resourceName": "t", "principal": "User:a", "host": "*"}, 0
    )
    assert (
        parser_for("cluster-metadata", release("3.4"))
        .parse(2, None, value)[1]
        .startswith('{"type":"ACCESS_CONTROL_RECORD","version":0,"data":{')
    )
    assert parser_for("cluster-metadata", release("3.5")).parse(2, None, value)[1] == (
        "Error at 2, skipping. org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 6"
    )
