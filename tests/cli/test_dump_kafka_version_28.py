"""``kseg dump --kafka-version 2.8``: Kafka 2.8's own tool, byte for byte.

``DumpLogSegments.scala`` at 2.8 (``3893458``) is 3.0's but for the record line (the batch's fields on
every record, ``:271-284``), ``compresscodec`` as ``CompressionType``'s enum name (``:326``), 2.8's
control types (``ControlRecordType.java@3893458:44-51``: 2 QUORUM_REASSIGNMENT, 3 LEADER_CHANGE) and its
coordinator classes (an unknown key version throws; values of versions 0-3 / 0 only);
``tests/data/kafka4x/MANIFEST.md`` ("Kafka 2.8").  The goldens: each corpus golden as 3.0 prints it
(``test_dump_kafka_versions_30_32.as_released``), its record lines rebuilt from the batch line above them
(:func:`as_released_28`, not kseg's code); the runs where 2.8 dies are pinned below.
"""

from __future__ import annotations

import re
import shlex

from tests.cli.test_dump_kafka_versions import DATA
from tests.cli.test_dump_kafka_versions_30_32 import _golden_37, as_released
from tests.conftest import CORPUS_DATA, golden_rows, run_cli, run_subprocess

_FIELD = re.compile(rb"(\w+): (\S+)")
_RECORD = re.compile(rb"\| offset: (-?\d+) (\w+): (-?\d+) keySize: (-?\d+) valueSize: (-?\d+)")
_LEGACY_TAIL = re.compile(rb" isValid: (\w+) crc: (\d+)\}")
_CONTROL = {
    b"controlType: LEADER_CHANGE(2)": b"controlType: QUORUM_REASSIGNMENT(2)",
    b"controlType: SNAPSHOT_HEADER(3)": b"controlType: LEADER_CHANGE(3)",
    b"controlType: SNAPSHOT_FOOTER(4)": b"controlType: UNKNOWN(4)",
}


def _batch_fields(f: dict, base: bytes, legacy: bool) -> bytes:
    if legacy:
        return (
            b"baseOffset: %s lastOffset: %s baseSequence: -1 lastSequence: -1 producerEpoch: -1 "
            b"partitionLeaderEpoch: -1 batchSize: %s magic: %s compressType: %s position: %s"
            % (base, f[b"offset"], f[b"size"], f[b"magic"], f[b"compresscodec"].upper(), f[b"position"])
        )
    return (
        b"baseOffset: %s lastOffset: %s baseSequence: %s lastSequence: %s producerEpoch: %s "
        b"partitionLeaderEpoch: %s batchSize: %s magic: %s compressType: %s position: %s"
        % (
            f[b"baseOffset"],
            f[b"lastOffset"],
            f[b"baseSequence"],
            f[b"lastSequence"],
            f[b"producerEpoch"],
            f[b"partitionLeaderEpoch"],
            f[b"size"],
            f[b"magic"],
            f[b"compresscodec"].upper(),
            f[b"position"],
        )
    )


def as_released_28(text_30: bytes) -> bytes:
    """Kafka 3.0's text of a dump as 2.8's tool prints it (the module docstring's rewrites)."""
    out = []
    batch: dict = {}
    legacy = False
    base = b""
    for row in text_30.splitlines(keepends=True):
        if row.startswith((b"baseOffset: ", b"offset: ")) and b" compresscodec: " in row:  # a batch line
            batch = dict(_FIELD.findall(row))
            legacy, base = row.startswith(b"offset: "), b""
            row = row.replace(
                b" compresscodec: " + batch[b"compresscodec"], b" compresscodec: " + batch[b"compresscodec"].upper()
            )
        elif (m := _RECORD.match(row)) is not None:
            o, ts_type, ts, ks, vs = m.groups()
            rest = row[m.end() :]
            if legacy:
                base = base or o
                tail = _LEGACY_TAIL.match(rest)
                assert tail is not None, row
                valid, crc = tail.groups()
                row = b"| offset: %s isValid: %s crc: %s keySize: %s valueSize: %s %s: %s %s crc: %s isvalid: %s%s" % (
                    o,
                    valid,
                    crc,
                    ks,
                    vs,
                    ts_type,
                    ts,
                    _batch_fields(batch, base, True),
                    crc,
                    valid,
                    rest[tail.end() :],
                )
            else:
                row = b"| offset: %s isValid: true crc: null keySize: %s valueSize: %s %s: %s %s%s" % (
                    o,
                    ks,
                    vs,
                    ts_type,
                    ts,
                    _batch_fields(batch, b"", False),
                    rest,
                )
            for old, new in _CONTROL.items():
                row = row.replace(old, new)
        out.append(row)
    return b"".join(out)


def test_corpus() -> None:
    """Every corpus run but the two pinned below prints the golden as 2.8 prints it."""
    checked = 0
    for row in golden_rows():
        args = shlex.split(row["args"])
        if "--cluster-metadata-decoder" in args or "--offsets-decoder" in args:
            continue  # test_cluster_metadata_decoder_refused, test_offsets_decoder_dies_on_unknown_keys
        code, want_out, want_err = _golden_37(row)
        want_out = as_released_28(as_released(want_out, "3.0"))
        result = run_cli(["dump", "--kafka-version", "2.8", *args], cwd=CORPUS_DATA)
        assert result.exit_code == code, row
        assert result.stdout == want_out, row
        if want_err.startswith(b"Exception in thread"):
            lines = result.stderr.decode().splitlines()
            assert len(lines) == 1 and lines[0].startswith("kseg: error: "), row
        else:
            assert result.stderr == want_err, row
        checked += 1
    assert checked == len(golden_rows()) - 2


def test_whole_lines() -> None:
    """Lines derived by hand from ``dumpLog``/``printBatchLevel`` of 2.8 for a v2, a v1 gzip and a v0 entry."""
    v2 = run_cli(
        ["dump", "--kafka-version", "2.8", "--deep-iteration", "--files", "txn-v2-0/00000000000000000000.log"],
        cwd=CORPUS_DATA,
    ).stdout.splitlines()
    assert v2[2].endswith(b" magic: 2 compresscodec: NONE crc: 2933738256 isvalid: true")
    assert v2[3] == (
        b"| offset: 0 isValid: true crc: null keySize: 5 valueSize: 60 CreateTime: 1730000000000 "
        b"baseOffset: 0 lastOffset: 3 baseSequence: 0 lastSequence: 3 producerEpoch: 1 "
        b"partitionLeaderEpoch: 0 batchSize: 353 magic: 2 compressType: NONE position: 0 "
        b"sequence: 0 headerKeys: []"
    )
    v1 = run_cli(
        ["dump", "--kafka-version", "2.8", "--print-data-log", "--files", "v1-gzip-0/00000000000000000000.log"],
        cwd=CORPUS_DATA,
    ).stdout.splitlines()
    assert v1[2] == (
        b"offset: 8 position: 0 CreateTime: 1730000000008 size: 359 magic: 1 compresscodec: GZIP "
        b"crc: 678147403 isvalid: true"
    )
    assert v1[3] == (
        b"| offset: 0 isValid: true crc: 679304851 keySize: -1 valueSize: 19 CreateTime: 1730000000000 "
        b"baseOffset: 0 lastOffset: 8 baseSequence: -1 lastSequence: -1 producerEpoch: -1 "
        b"partitionLeaderEpoch: -1 batchSize: 359 magic: 1 compressType: GZIP position: 0 "
        b"crc: 679304851 isvalid: true payload: value-with-null-key"
    )


def test_offsets_decoder_dies_on_unknown_keys() -> None:
    """2.8's ``readMessageKey`` throws for a key version other than 0-2 (3.0 returned ``UnknownKey``): the
    corpus's offset 6 (a KIP-848 key, version 3) kills the tool; the lines before are the golden's, then the
    part of offset 6's line printed before the decoder ran (``print``, flushed by the JVM's ``System.out``)."""
    row = next(r for r in golden_rows() if r["set"] == "offsets")
    _, want_out, _ = _golden_37(row)
    want = as_released_28(as_released(want_out, "3.0"))
    r = run_cli(["dump", "--kafka-version", "2.8", *shlex.split(row["args"])], cwd=CORPUS_DATA)
    assert r.exit_code == 1
    # everything up to offset 6, then its line up to the key, no newline
    cut = want.index(b"| offset: 6 ")
    partial = want[cut:].split(b"\n", 1)[0].split(b" key: ", 1)[0]
    assert partial.endswith(b" position: 709 sequence: 0 headerKeys: []")
    assert r.stdout == want[:cut] + partial
    assert r.stderr.decode().splitlines() == [
        "kseg: error: __consumer_offsets-0/00000000000000000000.log: record at offset 6: Unknown group metadata "
        'message version: 3 (hint: kafka-dump-log.sh stops here with: Exception in thread "main" '
        "java.lang.IllegalStateException: Unknown group metadata message version: 3)"
    ]


def test_transaction_log_decoder_knows_value_version_0_only() -> None:
    """2.8's TransactionLogValue is version 0 only (``readTxnRecordValue``: "Unknown version 1 from the
    transaction log message value"): the 4.x records (version 1) kill it at the first one."""
    r = run_cli(
        [
            "dump",
            "--kafka-version",
            "2.8",
            "--transaction-log-decoder",
            "--files",
            "__transaction_state-0/00000000000000000100.log",
        ],
        cwd=DATA,
    )
    # the first record's line up to the key, then the death
    assert r.exit_code == 1 and r.stdout.count(b"| offset:") == 1
    assert r.stdout.split(b"\n")[-1].startswith(b"| offset: 100 isValid: true crc: null keySize: 8 valueSize: 61 ")
    assert r.stdout.endswith(b" position: 0 sequence: -1 headerKeys: []")
    assert b"Unknown version 1 from the transaction log message value" in r.stderr


def test_coordinator_28_facts() -> None:
    from kseg.decoders import offsets_legacy, txnlog
    from kseg.decoders.jvm import IllegalStateException

    def raises(fn, *args) -> str:
        try:
            fn(*args)
        except IllegalStateException as exc:
            return exc.get_message()
        raise AssertionError("no exception")

    assert (
        raises(offsets_legacy.format_record_key_and_value, b"\x00\x05", None, True)
        == "Unknown group metadata message version: 5"
    )
    assert offsets_legacy.format_record_key_and_value(b"\x00\x05", None) == ("unknown::version=5", None)
    assert (
        raises(txnlog.format_record_key_and_value, b"\x00\x01", None, True)
        == "Unknown version 1 from the transaction log message"
    )
    # an offset value of version 4 (3.0+) is unknown to 2.8
    key = b"\x00\x01" + b"\x00\x01g" + b"\x00\x01t" + b"\x00\x00\x00\x00"
    assert (
        raises(offsets_legacy.format_record_key_and_value, key, b"\x00\x04" + bytes(30), True)
        == "Unknown offset message version: 4"
    )


def test_what_28_lacks_is_refused() -> None:
    for args in (["--max-bytes", "10"], ["--cluster-metadata-decoder"], ["--remote-log-metadata-decoder"]):
        r = run_subprocess(["dump", "--kafka-version", "2.8", *args, "--files", "x.log"])
        assert r.exit_code == 2 and r.stdout == b"" and b"Traceback" not in r.stderr, args


def test_control_types() -> None:
    from kseg.cli.dump import _kraft_text_of
    from kseg.format.releases import release

    text = _kraft_text_of(release("2.8"))
    assert [text(t, b"", b"") for t in (2, 3, 4, 5)] == [
        " controlType: QUORUM_REASSIGNMENT(2)",
        " controlType: LEADER_CHANGE(3)",
        " controlType: UNKNOWN(4)",
        " controlType: UNKNOWN(5)",
    ]
