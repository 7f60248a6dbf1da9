"""The lookups' text (:mod:`kseg.render.lookup`): the path taken, then Kafka's batch and record lines.

The path lines are checked against the corpus's own files (``plain-v2-0``'s ``.index`` has offset 100 at
position 4868 and 103 at 10169, as ``kafka-dump-log.sh`` prints it), the batch and record lines against
Kafka's ``--print-data-log`` golden."""

from __future__ import annotations

import io

from kseg.format import releases
from kseg.ops.lookup.offset import (
    AT_END,
    BELOW_START,
    EMPTY,
    PAST_END,
    IndexStep,
    OffsetLookup,
    PartitionLog,
    lookup_offset,
)
from kseg.ops.lookup.time import lookup_time
from kseg.render.lookup import (
    batch_desc,
    found_line,
    index_text,
    iso,
    offset_reason,
    write_offset_text,
    write_time_text,
)
from kseg.render.text import TextSink
from kseg.render.values import string_decoder
from tests.conftest import CORPUS_DATA, CORPUS_GOLDEN
from tests.stores import local

K40 = releases.release("4.0")  # the corpus goldens' text
PLAIN = CORPUS_DATA / "plain-v2-0"
GOLDEN = (CORPUS_GOLDEN / "plain-v2-0" / "00000000000000000000.log.data.stdout").read_bytes().decode()
GOLDEN_251 = (CORPUS_GOLDEN / "plain-v2-0" / "00000000000000000251.log.data.stdout").read_bytes().decode()


def _text(write, r) -> list[str]:
    out = io.BytesIO()
    sink = TextSink(out, io.BytesIO(), release=K40)
    write(sink, r, "plain-v2-0", (string_decoder, string_decoder, None))
    sink.flush()
    return out.getvalue().decode().splitlines()


def test_offset_lookup_text() -> None:
    with PartitionLog(str(PLAIN), 40 << 20, store=local()) as log:
        lines = _text(write_offset_text, lookup_offset(log, 101))
    assert lines[:5] == [
        "Lookup of offset 101 in plain-v2-0: 2 segments, log start offset 0, log end offset 420",
        "Segment: 00000000000000000000.log, the largest base offset <= 101; relative offset 101 - 0 = 101",
        "Index: 00000000000000000000.index (5 entries): entry #0, relative offset 100 (offset 100), position 4868: "
        "the largest entry <= 101",
        "Scan: from position 4868, 2 batches, 5632 bytes read (5301 bytes before the batch)",
        "Found: offset 101 in batch 101-103 at position 10169 of 00000000000000000000.log",
    ]
    batch_line, record_line = lines[5:]
    assert batch_line.startswith("baseOffset: 101 lastOffset: 103 count: 3 ") and batch_line + "\n" in GOLDEN
    assert record_line.startswith("| offset: 101 ") and "\n" + record_line + "\n" in GOLDEN


def test_time_lookup_text() -> None:
    with PartitionLog(str(PLAIN), 40 << 20, store=local()) as log:
        lines = _text(write_time_text, lookup_time(log, 1730000000101))
    assert lines[0] == (
        "Lookup of timestamp 1730000000101 (2024-10-27T03:33:20.101Z) in plain-v2-0: 2 segments, "
        "log start offset 0, log end offset 420"
    )
    assert lines[-3] == (
        "Found: offset 319, timestamp 1730000000101 (2024-10-27T03:33:20.101Z), the first record with timestamp "
        ">= 1730000000101 in batch 310-319 at position 7404"
    )
    assert lines[-2] + "\n" in GOLDEN_251 and "\n" + lines[-1] + "\n" in GOLDEN_251


def test_reasons_when_no_record_is_returned() -> None:
    def r(status: str, target: int) -> OffsetLookup:
        return OffsetLookup(target=target, status=status, log_start=10, log_end=20, segments=1)

    assert offset_reason(r(EMPTY, 0)) == "the partition has no segments"
    assert offset_reason(r(BELOW_START, 3)) == (
        "offset 3 is below the log start offset 10: Kafka's fetch answers OFFSET_OUT_OF_RANGE"
    )
    assert offset_reason(r(AT_END, 20)).startswith("offset 20 is the log end offset: no record there yet")
    assert offset_reason(r(PAST_END, 25)) == "offset 25 is past the log end offset 20"
    assert offset_reason(r(PAST_END, 15)) == "no record at or after offset 15 (every batch after it ends below it)"


def test_index_steps_and_batch_names() -> None:
    assert index_text(IndexStep(None, 0, -1, 50, 0, 50), 60) == (
        "no usable 00000000000000000050.index; Kafka would start at the base offset 50, position 0"
    )
    assert index_text(IndexStep("/d/00000000000000000050.index", 1, -1, 50, 0, 50), 51) == (
        "00000000000000000050.index (1 entry): no entry <= 51; Kafka starts at the base offset 50 "
        "(relative offset 0), position 0"
    )

    class Legacy:
        magic, codec, last_offset, position = 1, 1, 7, 90

    class Plain(Legacy):
        codec = 0

    assert (batch_desc(Legacy()), batch_desc(Plain())) == ("the v1 wrapper message with offset 7", "the v1 message")
    assert found_line(5, 7, Legacy(), "00000000000000000000") == (
        "Found: offset 5 is not in the log (compacted away or never written); the next record is offset 7, "
        "in the v1 wrapper message with offset 7 at position 90 of 00000000000000000000.log"
    )
    assert iso(1730000000100) == "2024-10-27T03:33:20.100Z"
