"""``kseg lookup-offset`` / ``kseg lookup-time``: the real command on corpus partitions."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kseg.cli.dump import kraft_text
from kseg.cli.lookup import parse_timestamp
from kseg.errors import KsegError
from kseg.format.releases import K40
from kseg.ops.lookup.offset import PartitionLog, lookup_offset
from kseg.render.lookup import write_offset_text
from kseg.render.text import TextSink
from kseg.render.values import string_decoder
from tests.conftest import (
    CORPUS_DATA,
    CORPUS_GOLDEN,
    assert_no_traceback,
    corpus_copy,
    golden_rows,
    overwrite,
    run_cli,
    run_subprocess,
)
from tests.ops.lookup.lookup_oracle import LIMIT, read_partition
from tests.stores import local

CASES = sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir())


def test_kafka_documentation_example_text() -> None:
    r = run_cli(["lookup-offset", "268", "plain-v2-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 0 and r.errtext == (  # a partition without its log directory's checkpoints
        f"kseg: note: no log-start-offset-checkpoint in {CORPUS_DATA}: the first segment's base offset 0 taken\n"
    )
    lines = r.text.splitlines()
    assert lines[:5] == [
        "Lookup of offset 268 in plain-v2-0: 2 segments, log start offset 0, log end offset 420",
        "Segment: 00000000000000000251.log, the largest base offset <= 268; relative offset 268 - 251 = 17",
        "Index: 00000000000000000251.index (4 entries): no entry <= 268; Kafka starts at the base offset 251 "
        "(relative offset 0), position 0",
        "Scan: from position 0, 2 batches, 3351 bytes read (1060 bytes before the batch)",
        "Found: offset 268 in batch 260-279 at position 1060 of 00000000000000000251.log",
    ]
    assert lines[5].startswith("baseOffset: 260 lastOffset: 279 count: 20 ") and "position: 1060 " in lines[5]
    assert lines[6].startswith("| offset: 268 CreateTime: 1730000000079 keySize: 2 ")
    assert " key: k8 payload: " in lines[6]


def test_json_output() -> None:
    r = run_cli(["lookup-offset", "110", "plain-v2-0", "--format", "json"], cwd=CORPUS_DATA)
    assert r.exit_code == 0
    (obj,) = [json.loads(line) for line in r.text.splitlines()]
    assert obj["type"] == "offset_lookup" and obj["found"] and obj["offset"] == 110 and not obj["compacted"]
    assert (obj["partition"], obj["path"], obj["logDir"]) == ("plain-v2-0", "plain-v2-0", str(CORPUS_DATA))
    (step,) = obj["steps"]
    assert (step["segment"], step["path"]) == ("00000000000000000000", "plain-v2-0/00000000000000000000.log")
    assert step["index"] == {
        "file": "plain-v2-0/00000000000000000000.index",
        "entries": 5,
        "entry": 1,
        "offset": 103,
        "relativeOffset": 103,
        "position": 10169,
    }
    assert step["scan"] == {"from": 10169, "batches": 2, "bytes": 1536, "batchPosition": 10500}
    assert obj["batch"]["baseOffset"] == 104 and obj["record"]["offset"] == 110 and obj["record"]["key"]


@pytest.mark.parametrize(
    "offset,reason",
    [
        ("419", None),
        ("420", "offset 420 is the log end offset: no record there yet"),
        ("1000", "offset 1000 is past the log end offset 420"),
    ],
)
def test_ends_of_the_log(offset: str, reason) -> None:
    r = run_cli(["lookup-offset", offset, "plain-v2-0"], cwd=CORPUS_DATA)
    assert_no_traceback(r)
    if reason is None:
        assert r.exit_code == 0
    else:
        lines = [line for line in r.errtext.splitlines() if not line.startswith("kseg: note: ")]
        assert r.exit_code == 1 and lines[0].startswith(f"kseg: not found: {reason}")
        assert len(lines) == 1


def test_below_the_log_start(tmp_path) -> None:
    import shutil

    shutil.copytree(CORPUS_DATA / "plain-v2-0", tmp_path / "t-0")
    for suffix in (".log", ".index", ".timeindex"):
        (tmp_path / "t-0" / f"00000000000000000000{suffix}").unlink()
    r = run_cli(["lookup-offset", "100", str(tmp_path / "t-0")])
    assert r.exit_code == 1 and "offset 100 is below the log start offset 251" in r.errtext


@pytest.mark.parametrize(
    "args,code,text",
    [
        (["lookup-offset", "1", "no-such-dir"], 2, "no-such-dir: no such file or directory"),
        (["lookup-offset", "1", "."], 2, "not a partition directory"),
        (["lookup-offset", "x", "plain-v2-0"], 2, "is not a valid offset"),
        (["lookup-time", "yesterday", "plain-v2-0"], 2, "give epoch milliseconds"),
        (["lookup-time", "2024-10-27T03:33:20", "plain-v2-0"], 2, "give epoch milliseconds"),
        (["lookup-offset", "1", "plain-v2-0", "--key-decoder", "nope"], 2, "nope"),
    ],
)
def test_usage_and_input_errors(args, code: int, text: str) -> None:
    r = run_cli(args, cwd=CORPUS_DATA)
    assert_no_traceback(r)
    assert r.exit_code == code and text in r.errtext, r.errtext


def test_corrupt_data_on_the_way_is_one_line_and_exit_1() -> None:
    r = run_subprocess(["lookup-offset", "40", "corrupt-compressed-0"], cwd=CORPUS_DATA)
    assert_no_traceback(r)
    assert r.exit_code == 1
    assert r.errtext.startswith("kseg: error: corrupt-compressed-0/00000000000000000000.log: at byte")


def test_notes_go_to_stderr() -> None:
    r = run_cli(["lookup-offset", "100", "corrupt-garbage-tail-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 0
    assert (
        "kseg: note: corrupt-garbage-tail-0/00000000000000000000.log: at byte 28637: found record size 5" in r.errtext
    )


@pytest.mark.parametrize(
    "text,ms",
    [
        ("1730000000100", 1730000000100),
        ("2024-10-27T03:33:20.100Z", 1730000000100),
        ("2024-10-27T03:33:20.1Z", 1730000000100),
        ("2024-10-27 04:33:20.100+01:00", 1730000000100),
        ("2024-10-27T03:33:20.100-0000", 1730000000100),
        ("2024-10-27T03:33:20.1000001Z", 1730000000101),  # rounded up to the next millisecond
        ("2024-10-27T03:33Z", 1729999980000),
        ("earliest", -2),
        ("LATEST", -1),
        ("max-timestamp", -3),
        ("-2", -2),
    ],
)
def test_timestamp_forms(text: str, ms: int) -> None:
    assert parse_timestamp(text) == ms


@pytest.mark.parametrize("text", ["-5", "2024-10-27T03:33:20", "1969-12-31T23:59:59Z", "2024-13-01T00:00Z", ""])
def test_bad_timestamps(text: str) -> None:
    with pytest.raises(ValueError):
        parse_timestamp(text)


def test_lookup_time_text_and_json() -> None:
    r = run_cli(["lookup-time", "2024-10-27T03:33:20.100Z", "plain-v2-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 0
    lines = r.text.splitlines()
    assert lines[0].startswith("Lookup of timestamp 1730000000100 (2024-10-27T03:33:20.100Z) in plain-v2-0")
    assert lines[1].startswith("Skipped: 1 segment whose largest timestamp < 1730000000100")
    assert lines[2] == (
        "Segment: 00000000000000000251.log, the first whose largest timestamp 1730000000131 "
        "(from its time index) >= 1730000000100"
    )
    assert lines[3] == (
        "Time index: 00000000000000000251.timeindex: entry #0, timestamp 1730000000095, "
        "offset 299: the largest entry <= 1730000000100"
    )
    assert lines[6].startswith("Found: offset 319, timestamp 1730000000101")
    r = run_cli(["lookup-time", "1730000000100", "plain-v2-0", "--format", "json"], cwd=CORPUS_DATA)
    obj = json.loads(r.text)
    assert (obj["offset"], obj["timestamp"], obj["timeIndex"]["offset"], obj["index"]["position"]) == (
        319,
        1730000000101,
        299,
        4702,
    )
    assert obj["segment"]["source"] == "time index" and obj["record"]["offset"] == 319


def test_lookup_time_not_found_and_specials() -> None:
    r = run_cli(["lookup-time", "1830000000000", "plain-v2-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 1 and "no segment has a timestamp >= 1830000000000" in r.errtext
    r = run_cli(["lookup-time", "1730000000100", "v0-none-0", "--format", "json"], cwd=CORPUS_DATA)
    assert r.exit_code == 1 and json.loads(r.text)["offset"] == -1
    r = run_cli(["lookup-time", "latest", "plain-v2-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 0 and "is the log end offset 420" in r.text
    r = run_cli(["lookup-time", "--format", "json", "--", "-2", "empty-log-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 0 and json.loads(r.text)["offset"] == 0 and json.loads(r.text)["record"]["offset"] == 0
    r = run_cli(["lookup-time", "max-timestamp", "v0-gzip-0"], cwd=CORPUS_DATA)
    assert r.exit_code == 1


def _golden_data(name: str, seg: str) -> tuple[str, bool] | None:
    """The ``--print-data-log`` golden of a segment, and whether Kafka's tool read it to the end."""
    path = CORPUS_GOLDEN / name / f"{seg}.log.data.stdout"
    if not path.exists():
        return None
    complete = any(
        r["partition"] == name and r["file"] == f"{seg}.log" and r["set"] == "data" and r["exit_code"] == "0"
        for r in golden_rows()
    )
    return path.read_bytes().decode("utf-8"), complete


@pytest.mark.parametrize("name", CASES)
def test_batch_and_record_print_as_kafkas_print_data_log(name: str) -> None:
    """The lines after the path are the batch line and the record's lines of Kafka's
    ``--print-data-log`` golden (control records, legacy v0/v1, payloads with newlines)."""
    part = read_partition(CORPUS_DATA / name)
    offsets = sorted({o for _, o, _ in part.records()})
    if len(offsets) > 2000:  # large-v2-0: every batch's ends and a sample inside (test_lookup covers each offset)
        ends = {b.base_offset for b in part.batches} | {b.last_offset for b in part.batches}
        offsets = sorted(ends | set(offsets[::97]))
    goldens: dict = {}
    checked = 0
    with PartitionLog(str(CORPUS_DATA / name), LIMIT, store=local()) as log:
        for offset in offsets:
            try:
                r = lookup_offset(log, offset)
            except KsegError:
                continue
            if r.segment.name not in goldens:  # read once a segment
                goldens[r.segment.name] = _golden_data(name, r.segment.name)
            entry = goldens[r.segment.name]
            if entry is None:
                continue
            golden, complete = entry
            out = io.BytesIO()
            sink = TextSink(out, io.BytesIO(), release=K40)  # the corpus's goldens: Kafka 4.0's text
            # the CLI's decoders: Kafka's string decoder and the KRaft control records' text
            write_offset_text(sink, r, name, (string_decoder, string_decoder, kraft_text))
            sink.flush()
            text = out.getvalue().decode("utf-8")
            found = text.index("\nFound: ")
            batch_line, record_text = text[text.index("\n", found + 1) + 1 :].split("\n", 1)
            at = golden.find(batch_line + "\n")
            if at < 0 and not complete:
                continue  # after the batch where Kafka's tool died
            assert golden.find("\n" + record_text, at) > at, (offset, record_text[:80])
            checked += 1
    assert checked > 0


def test_an_offset_in_bytes_framing_no_batch_is_unread_never_answered_from_the_next_segment(tmp_path) -> None:
    """The first segment replaced by text: Kafka's read would move on and answer offset 251; kseg says the
    offset is not known, names the file and byte, status ``unread``, exit 1 -- never "not in the log"."""
    import shutil

    part = tmp_path / "p-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    log = part / "00000000000000000000.log"
    log.write_text("not a Kafka log, but named like one\n")
    r = run_cli(["lookup-offset", "5", str(part)])
    assert r.exit_code == 1
    assert "Found:" not in r.text and "251" not in r.text.splitlines()[-1]
    assert r.errtext.splitlines()[-1] == (
        f"kseg: not found: offset 5 is not known: {log}: at byte 0: 36 bytes that "
        "do not frame a batch (a partial batch, not read; Kafka's read moves on "
        "to the next segment past them)"
    )
    row = json.loads(run_cli(["lookup-time", "--format", "json", "1730000000005", str(part)]).text)
    assert row["status"] == "unread" and row["found"] is False and str(log) in row["reason"]


def test_a_corrupt_length_on_the_read_path_fails_the_lookup(tmp_path) -> None:
    """Kafka's fetch throws at a length field below 14: the lookup fails there (exit 1, the byte), never
    moves on to the next segment to answer."""
    import struct

    part = corpus_copy(tmp_path)
    log = part / "00000000000000000000.log"
    overwrite(log, 8, struct.pack(">i", 5))  # the first batch's length field
    r = run_cli(["lookup-offset", "5", str(part)])
    assert r.exit_code == 1 and r.text == ""
    assert r.errtext == (
        f"kseg: error: {log}: at byte 0: found record size 5 smaller than minimum record overhead (14)\n"
    )


# log-start-offset-checkpoint (LogManager.checkpointLogStartOffsetsInDir) in the partition's log directory,
# written as CheckpointFile writes it: Kafka's log start offset, ListOffsets' earliest, the floor of a fetch
def _with_log_start(tmp_path, entries) -> Path:
    import shutil

    from tests.ops.logdir.kafka_dir import checkpoint

    shutil.copytree(CORPUS_DATA / "plain-v2-0", tmp_path / "plain-0")
    (tmp_path / "log-start-offset-checkpoint").write_text(checkpoint(entries))
    return tmp_path / "plain-0"


def test_an_offset_below_the_checkpointed_log_start_is_out_of_range(tmp_path) -> None:
    part = _with_log_start(tmp_path, [("plain", 0, 300)])
    r = run_cli(["lookup-offset", "268", str(part)])
    assert r.exit_code == 1
    assert (
        f"offset 268 is below the log start offset 300 (from {tmp_path / 'log-start-offset-checkpoint'}): "
        "Kafka's fetch answers OFFSET_OUT_OF_RANGE" in r.errtext
    )
    r = run_cli(["lookup-offset", "--format", "json", "300", str(part)])
    row = json.loads(r.text.splitlines()[0])
    assert r.exit_code == 0 and (row["status"], row["logStartOffset"]) == ("found", 300)
    assert row["logStartOffsetFile"] == str(tmp_path / "log-start-offset-checkpoint") and row["notes"] == []


def test_earliest_and_timestamps_answer_from_the_log_start(tmp_path) -> None:
    part = _with_log_start(tmp_path, [("other", 1, 5), ("plain", 0, 300)])
    r = run_cli(["lookup-time", "--format", "json", "earliest", str(part)])
    row = json.loads(r.text.splitlines()[0])
    assert r.exit_code == 0 and (row["offset"], row["logStartOffset"]) == (300, 300)
    # a timestamp: the first record at or after the log start (FileRecords.searchForTimestamp's startingOffset)
    # (without the checkpoint, 1730000000094 answers offset 299, timestamp 1730000000095)
    r = run_cli(["lookup-time", "--format", "json", "1730000000094", str(part)])
    row = json.loads(r.text.splitlines()[0])
    assert r.exit_code == 0 and (row["offset"], row["timestamp"]) == (307, 1730000000094)
    # Kafka searches only the first segment whose largest timestamp reaches the target: here segment 0,
    # wholly below the log start, so ListOffsets answers -1 (UnifiedLog.fetchOffsetByTimestamp)
    r = run_cli(["lookup-time", "--format", "json", "0", str(part)])
    row = json.loads(r.text.splitlines()[0])
    assert r.exit_code == 1 and row["offset"] == -1
    assert "at or above the log start offset 300 (from " in row["reason"]
    text = run_cli(["lookup-time", "earliest", str(part)]).text
    assert f"log start offset 300 (from {tmp_path / 'log-start-offset-checkpoint'})" in text.splitlines()[0]


@pytest.mark.parametrize(
    "entries,note",
    [
        ([("plain", 0, 100)], "log start offset 100 in {f} is below the first segment's base offset 251: 251 taken"),
        ([("other", 0, 100)], "{f} has no entry for plain 0: the first segment's base offset 251 taken"),
    ],
)
def test_a_log_start_below_the_first_segment_or_absent_is_the_first_base(tmp_path, entries, note) -> None:
    part = _with_log_start(tmp_path, entries)
    for suffix in (".log", ".index", ".timeindex"):  # retention deleted the first segment
        (part / f"00000000000000000000{suffix}").unlink()
    r = run_cli(["lookup-time", "--format", "json", "earliest", str(part)])
    row = json.loads(r.text.splitlines()[0])
    assert (row["offset"], row["logStartOffset"], row["logStartOffsetFile"]) == (251, 251, None)
    assert any(note.format(f=tmp_path / "log-start-offset-checkpoint") in n for n in row["notes"]), row["notes"]


def test_an_index_entry_at_a_wrappers_first_offset_is_not_called_damaged(tmp_path: Path) -> None:
    """Brokers before 0.11 indexed a compressed v0/v1 wrapper by its first inner offset; the wrapper's own
    offset is its last record's (kseg.storage.ranges), so entry (5, position of the wrapper 5..9) is sound."""
    import struct

    from kseg.testing.legacy import build_legacy
    from kseg.testing.v2 import RecordSpec as Spec

    part = tmp_path / "old-0"
    part.mkdir()
    first = build_legacy([Spec(b"k", b"v%d" % i, 1000 + i) for i in range(5)], magic=1, codec="gzip")
    second = build_legacy(
        [Spec(b"k", b"v%d" % i, 1000 + i) for i in range(5, 10)], magic=1, base_offset=5, codec="gzip"
    )
    (part / f"{0:020d}.log").write_bytes(first + second)
    (part / f"{0:020d}.index").write_bytes(struct.pack(">ii", 5, len(first)))
    r = run_cli(["lookup-offset", "7", str(part)])
    assert r.exit_code == 0, r.errtext
    assert "Found: offset 7" in r.text and "damaged" not in r.text + r.errtext
