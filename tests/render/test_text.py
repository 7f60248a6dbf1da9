"""TextSink's batch and record lines (:mod:`kseg.render.text`), called directly: no CLI, no dumper.

Batch lines are checked against the corpus goldens (Kafka's own ``kafka-dump-log.sh`` at a 3.9/4.0
commit) and against lines built by hand; record lines by hand, in Kafka 4.4's, 3.9's and 2.8's text.
"""

from __future__ import annotations

import io

import pytest

from kseg.format import releases, v2
from kseg.format.v2 import BatchHeader
from kseg.render import text
from kseg.render.text import TextSink
from kseg.storage.records import FileRecords
from tests.conftest import CORPUS_DATA, CORPUS_GOLDEN
from tests.stores import local

K39 = releases.release("3.9")
K28 = releases.release("2.8")


def _sink(release: releases.Release = releases.LATEST, **kw) -> tuple[TextSink, io.BytesIO, io.BytesIO]:
    out, err = io.BytesIO(), io.BytesIO()
    return TextSink(out, err, release=release, **kw), out, err


def _text(sink: TextSink, out: io.BytesIO) -> str:
    sink.flush()
    return out.getvalue().decode()


def _header(**fields: int) -> BatchHeader:
    """A v2 header: base offset 100, 3 records, no producer, CreateTime, uncompressed, unless ``fields`` say."""
    h = BatchHeader(
        base_offset=100,
        batch_length=200,
        partition_leader_epoch=7,
        magic=2,
        crc=4242,
        attributes=0,
        last_offset_delta=2,
        base_timestamp=1730000000000,
        max_timestamp=1730000000002,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        records_count=3,
    )
    return h._replace(**fields)


@pytest.mark.parametrize("partition", ["idempotent-v2-0", "txn-v2-0", "v2-zstd-0", "v2-logappendtime-0"])
@pytest.mark.parametrize("engine_lines", [True, False], ids=["engine-or-python", "python"])
def test_batch_lines_equal_kafkas_golden(partition: str, engine_lines: bool, monkeypatch) -> None:
    if not engine_lines:
        monkeypatch.setattr(text, "_c_batch_lines", None)
    sink, out, _ = _sink(K39)
    with FileRecords(str(CORPUS_DATA / partition / "00000000000000000000.log"), store=local()) as fr:
        for items in fr.scan():
            sink.batch_lines(items)
    golden = (CORPUS_GOLDEN / partition / "00000000000000000000.log.default.stdout").read_text()
    want = [line for line in golden.splitlines(keepends=True) if line.startswith("baseOffset: ")]
    assert want and _text(sink, out).splitlines(keepends=True) == want


def test_batch_line_by_hand_without_and_with_a_producer() -> None:
    sink, out, _ = _sink()
    plain = _header()
    idempotent = _header(producer_id=9, producer_epoch=1, base_sequence=2_147_483_646, attributes=v2.TRANSACTIONAL_FLAG)
    sink.batch_lines([(0, 261, tuple(plain), True), (261, 261, tuple(idempotent), False)])
    assert _text(sink, out) == (
        "baseOffset: 100 lastOffset: 102 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 "
        "producerEpoch: -1 partitionLeaderEpoch: 7 isTransactional: false isControl: false "
        "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1730000000002 size: 261 magic: 2 "
        "compresscodec: none crc: 4242 isvalid: true\n"
        # DefaultRecordBatch.incrementSequence wraps past Integer.MAX_VALUE to 0
        "baseOffset: 100 lastOffset: 102 count: 3 baseSequence: 2147483646 lastSequence: 0 producerId: 9 "
        "producerEpoch: 1 partitionLeaderEpoch: 7 isTransactional: true isControl: false "
        "deleteHorizonMs: OptionalLong.empty position: 261 CreateTime: 1730000000002 size: 261 magic: 2 "
        "compresscodec: none crc: 4242 isvalid: false\n"
    )


def test_batch_line_delete_horizon_log_append_time_and_codec() -> None:
    sink, out, _ = _sink()
    attrs = v2.DELETE_HORIZON_FLAG | v2.CONTROL_FLAG | 0x08 | 4  # LogAppendTime, zstd
    sink.batch_lines([(5, 70, tuple(_header(attributes=attrs, base_timestamp=1730000999000)), True)])
    assert _text(sink, out) == (
        "baseOffset: 100 lastOffset: 102 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 "
        "producerEpoch: -1 partitionLeaderEpoch: 7 isTransactional: false isControl: true "
        "deleteHorizonMs: OptionalLong[1730000999000] position: 5 LogAppendTime: 1730000000002 size: 70 "
        "magic: 2 compresscodec: zstd crc: 4242 isvalid: true\n"
    )


def test_batch_line_of_kafka_2_8_and_3_1() -> None:
    """2.8: the codec is CompressionType's enum name; 3.0/3.1: no deleteHorizonMs (3.2+)."""
    h = tuple(_header(attributes=1))
    sink, out, _ = _sink(K28)
    sink.batch_lines([(0, 90, h, True)])
    line28 = _text(sink, out)
    assert "isControl: false position: 0 CreateTime: 1730000000002 size: 90 magic: 2 compresscodec: GZIP" in line28
    sink, out, _ = _sink(releases.release("3.1"))
    sink.batch_lines([(0, 90, h, True)])
    assert "deleteHorizonMs" not in _text(sink, out)


def test_v2_records_without_decoders_print_sizes() -> None:
    """``--deep-iteration``: key and value sizes, header keys decoded as Kafka's string decoder."""

    class Batch:
        h = tuple(_header())

    records = [
        (100, 1730000000000, -1, 3, 5, ()),
        (101, 1730000000001, -1, -1, -1, ((b"trace", b"x"), (b"\xff", None))),
    ]
    for release, tail in ((releases.LATEST, ""), (K39, "")):
        sink, out, _ = _sink(release)
        sink.v2_records(Batch(), records)
        assert _text(sink, out) == (
            f"| offset: 100 CreateTime: 1730000000000 keySize: 3 valueSize: 5 sequence: -1 headerKeys: []{tail}\n"
            "| offset: 101 CreateTime: 1730000000001 keySize: -1 valueSize: -1 sequence: -1 "
            "headerKeys: [trace,\ufffd]\n"
        )


def test_v2_records_with_decoders_print_key_and_payload() -> None:
    from kseg.render.values import string_decoder

    class Batch:
        h = tuple(_header(attributes=0x08))

    records = [(7, 1, 4, b"k", b"v\xc3\xa9", ()), (8, 2, 5, None, b"\xed\xa0\x80", ()), (9, 3, 6, b"k", None, ())]
    sink, out, _ = _sink()
    sink.v2_records(Batch(), records, string_decoder, string_decoder)
    assert _text(sink, out) == (
        "| offset: 7 LogAppendTime: 1 keySize: 1 valueSize: 3 sequence: 4 headerKeys: [] key: k payload: v\u00e9\n"
        # Java replaces an encoded surrogate with one U+FFFD (kseg.format.strings)
        "| offset: 8 LogAppendTime: 2 keySize: -1 valueSize: 3 sequence: 5 headerKeys: [] payload: \ufffd\n"
        "| offset: 9 LogAppendTime: 3 keySize: 1 valueSize: -1 sequence: 6 headerKeys: [] key: k\n"
    )
    upper = lambda b: bytes(b).decode().upper()  # noqa: E731 - a decoder of another kind takes the general path
    sink, out, _ = _sink()
    sink.v2_records(Batch(), [(7, 1, 4, b"k", b"v", ((b"h", b"1"),))], upper, upper)
    assert _text(sink, out) == (
        "| offset: 7 LogAppendTime: 1 keySize: 1 valueSize: 1 sequence: 4 headerKeys: [h] key: K payload: V\n"
    )


def test_record_lines_of_kafka_2_8_carry_the_batch() -> None:
    """2.8 prints the batch's fields on each record line (``DumpLogSegments.dumpLog`` at 2.8)."""

    class Batch:
        h = tuple(_header(producer_id=3, producer_epoch=0, base_sequence=10, attributes=2))
        size = 300

    sink, out, _ = _sink(K28)
    sink._position = 4096  # the batch's position, set by batch() when the dumper hands the batch over
    sink.v2_records(Batch(), [(100, 1730000000000, 10, 3, 5, ())])
    assert _text(sink, out) == (
        "| offset: 100 isValid: true crc: null keySize: 3 valueSize: 5 CreateTime: 1730000000000 "
        "baseOffset: 100 lastOffset: 102 baseSequence: 10 lastSequence: 12 producerEpoch: 0 "
        "partitionLeaderEpoch: 7 batchSize: 300 magic: 2 compressType: SNAPPY position: 4096 "
        "sequence: 10 headerKeys: []\n"
    )


def test_skip_record_metadata_lines() -> None:
    sink, out, _ = _sink(skip_record_metadata=True)

    class Rec:
        key, value, offset, timestamp, sequence, headers = b"k", b"v", 0, 0, 0, ()

    class Batch:
        timestamp_type = "CreateTime"

    sink.record(Batch(), Rec(), None, "k", "v")
    sink.record(Batch(), Rec(), None, None, "v")
    sink.record(Batch(), Rec(), None, None, None)
    assert _text(sink, out) == "| key: k payload: v\n| payload: v\n\n"


def test_problems_in_scala_and_java_order() -> None:
    """Up to 4.2 (Scala) mismatches print in reverse discovery order; 4.3+ (Java) sorted descending."""

    class Problems:
        index_mismatches = {"a.log": [(10, 11), (30, 31), (20, 21)]}
        time_mismatches: dict = {}
        out_of_order: dict = {}
        not_found = {"a.log": [(40, 41)]}
        non_consecutive = {"a.log": [(5, 7), (2, 4)]}

    _, _, err39 = _sink(K39)
    sink39 = TextSink(io.BytesIO(), err39, release=K39)
    sink39.problems(Problems())
    sink39.flush()
    assert err39.getvalue().decode() == (
        "Mismatches in :a.log\n  Index offset: 20, log offset: 21\n  Index offset: 30, log offset: 31\n"
        "  Index offset: 10, log offset: 11\nThe following indexed offsets are not found in the log.\n"
        "Indexed offset: 40, found log offset: 41\nNon-consecutive offsets in a.log\n"
        "  2 is followed by 4\n  5 is followed by 7\n"
    )
    sink44, _, err44 = _sink()
    sink44.problems(Problems())
    sink44.flush()
    assert err44.getvalue().decode() == (
        "Mismatches in :a.log\n  Index offset: 30, log offset: 31\n  Index offset: 20, log offset: 21\n"
        "  Index offset: 10, log offset: 11\nThe following indexed offsets are not found in :a.log\n"
        "Indexed offset: 40, found log offset: 41\nNon-consecutive offsets in a.log\n"
        "  2 is followed by 4\n  5 is followed by 7\n"
    )
