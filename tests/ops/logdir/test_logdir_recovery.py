"""``kseg logdir`` judges a partition as a broker starting on its files would find it: after a crash (no
``.kafka_cleanshutdown``) Kafka recovers every segment from the recovery point on, validating each batch,
and truncates the log at the first invalid one (``LogLoader.recoverLog``, ``LogSegment.recover``); logdir
walks exactly those batches and says what recovery truncates and the log end it leaves."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from kseg.format.crc import crc32c_function
from kseg.storage.batch import V2Batch
from kseg.storage.records import FileRecords
from kseg.storage.stores.discover import store_of
from tests.conftest import CORPUS_DATA, kseg_argv, run_cli, run_subprocess
from tests.ops.logdir.kafka_dir import PLAIN_END, checkpoint, log_dir

ROOT = Path(__file__).resolve().parents[3]
SEG0, SEG1 = "00000000000000000000.log", "00000000000000000251.log"
PLAIN_BYTES = 28637 + 22265  # plain-v2-0's two segments (examples/orders-0 is a copy of it)
WHOLE_LOG = "no .kafka_cleanshutdown and no recovery point: the whole log is recovered"


def _json(path: Path, env: dict[str, str] | None = None) -> tuple[int, list[dict], str]:
    r = run_cli(["logdir", "--format", "json", str(path)], env=env)
    assert "Traceback" not in r.errtext, r.errtext
    return r.exit_code, [json.loads(line) for line in r.text.splitlines()], r.errtext


def _partition(rows: list[dict], name: str) -> dict:
    return next(r for r in rows if r["type"] == "partition" and r["partition"] == name)


def _flip(log: Path, position: int) -> None:
    data = bytearray(log.read_bytes())
    data[position] ^= 0xFF
    log.write_bytes(bytes(data))


def _crashed(base: Path, recovery_point: int | None) -> Path:
    """kafka_dir's log directory as a broker leaves it after a crash: no clean-shutdown marker, and the
    plain 0 entry of its recovery point checkpoint ``recovery_point`` (None: no entry)."""
    d = log_dir(base)
    (d / ".kafka_cleanshutdown").unlink()
    entries = [("orders", 0, 269)] + ([("plain", 0, recovery_point)] if recovery_point is not None else [])
    (d / "recovery-point-offset-checkpoint").write_text(checkpoint(entries))
    return d


def _batch_positions(log: Path) -> list[tuple[int, int, int]]:
    """(position, size, base offset) of each batch."""
    with FileRecords(str(log), store=store_of(str(log))) as records:
        return [(b.position, b.size, b.base_offset) for b in records.batches()]


def _last_offset(log: Path) -> int:
    with FileRecords(str(log), store=store_of(str(log))) as records:
        return [b.last_offset for b in records.batches()][-1]


def test_the_reproduction_a_crc_fault_in_the_first_batch_loses_the_whole_log(tmp_path: Path) -> None:
    """examples/orders-0 alone in a directory, byte 70 of its first batch flipped: no clean shutdown and no
    recovery point, so a broker recovers the whole log, finds the first batch invalid and truncates there."""
    d = tmp_path / "d"
    shutil.copytree(ROOT / "examples" / "orders-0", d / "orders-0")
    _flip(d / "orders-0" / SEG0, 70)
    p = subprocess.run(kseg_argv("logdir", str(d)), capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 1, (p.stdout, p.stderr)
    lines = p.stdout.splitlines()
    assert lines[1].startswith("  orders-0: problems; ") and ", log end 0, " in lines[1], lines
    problem = lines[2]
    assert problem.startswith(
        f"    PROBLEM recovery truncates at offset 0 ({SEG0}, position 0: Record is corrupt (stored crc = "
    ), problem
    assert f"offsets 0-419 (2 segments, {PLAIN_BYTES} bytes) are lost, log end 0 after recovery" in problem
    assert WHOLE_LOG in problem and "LogLoader.recoverLog" in problem
    assert "clean" not in p.stdout.split("\n")[1].split(";")[0]
    assert f"{d / 'orders-0' / SEG0}: at byte 0: Record is corrupt (stored crc = " in p.stderr

    code, rows, _ = _json(d)
    part = _partition(rows, "orders-0")
    assert code == 1
    assert (part["status"], part["logEndOffset"], part["segments"], part["bytes"]) == ("problems", 0, 2, PLAIN_BYTES)
    assert [q for q in part["problems"] if q.startswith("recovery truncates")] == [problem.strip()[len("PROBLEM ") :]]


def test_the_python_engine_finds_the_same(tmp_path: Path) -> None:
    """The compiled scan's CRCs against the pure-Python reference (each a real process: the engine is chosen
    at start): the same rows, the same exit code."""
    d = _crashed(tmp_path / "d", 300)
    positions = _batch_positions(d / "plain-0" / SEG1)
    _flip(d / "plain-0" / SEG1, positions[3][0] + 70)
    _flip(d / "orders-0" / "00000000000000000000.log", 70)
    runs = [
        run_subprocess(["logdir", "--format", "json", str(d)], cwd=ROOT, env={"KSEG_ENGINE": engine})
        for engine in ("c", "python")
    ]
    assert runs[0].exit_code == runs[1].exit_code == 1, runs[0].errtext
    assert runs[0].text == runs[1].text
    rows = [json.loads(line) for line in runs[0].text.splitlines()]
    assert all(_partition(rows, p)["problems"][0].startswith("recovery truncates") for p in ("orders-0", "plain-0"))


def test_a_fault_past_the_recovery_point_loses_only_the_later_part(tmp_path: Path) -> None:
    """Recovery point 300 (inside segment 251): segment 0 is not recovered, segment 251 is, from its first
    batch; a CRC fault in its fourth batch truncates there.  The high watermark is judged against the log
    end recovery leaves."""
    d = _crashed(tmp_path / "d", 300)
    positions = _batch_positions(d / "plain-0" / SEG1)
    bad_pos, _, bad_base = positions[3]
    _flip(d / "plain-0" / SEG1, bad_pos + 70)
    code, rows, err = _json(d)
    part = _partition(rows, "plain-0")
    assert code == 1 and part["status"] == "problems"
    assert part["logEndOffset"] == bad_base and part["recoveryPoint"] == 300
    recovery = [q for q in part["problems"] if q.startswith("recovery truncates")]
    assert len(recovery) == 1, part["problems"]
    where = f"({SEG1}, position {bad_pos}: Record is corrupt"
    assert recovery[0].startswith(f"recovery truncates at offset {bad_base} {where}")
    lost = 22265 - bad_pos
    assert (
        f"offsets {bad_base}-419 (1 segment, {lost} bytes) are lost, log end {bad_base} after recovery" in (recovery[0])
    )
    assert "no .kafka_cleanshutdown, recovery point 300" in recovery[0]
    assert any(
        q.startswith(
            f"high watermark {PLAIN_END} (replication-offset-checkpoint) is past the log end offset {bad_base}"
        )
        for q in part["problems"]
    ), part["problems"]
    assert "CRCs not checked before the recovery point (1 segment)" in err
    assert _partition(rows, "orders-0")["status"] == "clean"


def test_the_same_fault_before_the_recovery_point_is_no_recovery_problem(tmp_path: Path) -> None:
    """A CRC fault in segment 0, below the recovery point 300: a broker does not validate it on start, and
    logdir did not read its CRCs -- it says so in a note, never as checked."""
    d = _crashed(tmp_path / "d", 300)
    _flip(d / "plain-0" / SEG0, 70)
    code, rows, err = _json(d)
    part = _partition(rows, "plain-0")
    assert (code, part["status"], part["logEndOffset"], part["problems"]) == (0, "clean", PLAIN_END, [])
    note = (
        f"kseg: note: {d / 'plain-0'}: CRCs not checked before the recovery point (1 segment): a broker does not "
        "validate them on start; `kseg verify-index` reads them"
    )
    assert note in err.splitlines(), err


def test_a_clean_shutdown_recovers_nothing(tmp_path: Path) -> None:
    """``.kafka_cleanshutdown`` present: no segment is recovered, so no CRC is read; the note says so."""
    d = log_dir(tmp_path / "d")
    _flip(d / "plain-0" / SEG0, 70)
    code, rows, err = _json(d)
    part = _partition(rows, "plain-0")
    assert (code, part["status"], part["logEndOffset"]) == (0, "clean", PLAIN_END)
    # (the note of both partitions, grouped: kseg.render.notes)
    assert (
        "kseg: note: 2 paths: CRCs not checked (3 segments): after a clean shutdown (.kafka_cleanshutdown) a "
        "broker recovers no segment on start; `kseg verify-index` reads them "
        f"({d / 'orders-0'}, {d / 'plain-0'})" in err.splitlines()
    ), err


def test_without_a_recovery_point_entry_the_whole_log_is_recovered(tmp_path: Path) -> None:
    """A checkpoint without the partition's entry: Kafka's recovery point is 0, so segment 0 is validated."""
    d = _crashed(tmp_path / "d", None)
    _flip(d / "plain-0" / SEG0, 70)
    code, rows, _ = _json(d)
    part = _partition(rows, "plain-0")
    assert (code, part["logEndOffset"]) == (1, 0)
    assert any(WHOLE_LOG in q for q in part["problems"]), part["problems"]


def test_a_torn_last_batch_is_truncated_and_said(tmp_path: Path) -> None:
    """A crash mid-write leaves a partial batch at the active segment's end: recovery truncates those bytes
    (Kafka without a warning); no whole batch is lost and the log end is the last whole batch's."""
    d = _crashed(tmp_path / "d", 300)
    log = d / "plain-0" / SEG1
    pos, size, base = _batch_positions(log)[-1]
    os.truncate(log, pos + size // 2)
    code, rows, _ = _json(d)
    part = _partition(rows, "plain-0")
    assert (code, part["status"], part["logEndOffset"]) == (1, "problems", base)
    assert (
        f"recovery truncates at offset {base} ({SEG1}, position {pos}: a partial batch, {size // 2} bytes after "
        f"the last whole batch (a write cut short by a crash)): no whole batch is lost, only the {size // 2} bytes "
        "after the last one, "
        f"log end {base} after recovery" in part["problems"][0]
    ), part["problems"]


def test_a_torn_batch_in_a_middle_segment_deletes_the_later_ones(tmp_path: Path) -> None:
    """Recovery truncates the partial batch of segment 0 and deletes segment 251 with it."""
    d = _crashed(tmp_path / "d", None)
    os.truncate(d / "plain-0" / SEG0, 20000)  # the batch at byte 15967 runs past the new end
    code, rows, _ = _json(d)
    part = _partition(rows, "plain-0")
    end = _last_offset(d / "plain-0" / SEG0) + 1
    assert code == 1 and part["logEndOffset"] == end
    assert "no whole batch is lost" not in part["problems"][0]
    assert f"offsets {end}-419 (2 segments, {20000 - 15967 + 22265} bytes) are lost" in part["problems"][0]


def test_a_length_below_14_is_a_truncation(tmp_path: Path) -> None:
    """``FileLogInputStream``'s framing fault (a record size below 14) in a recovered segment: truncated."""
    d = _crashed(tmp_path / "d", 300)
    with open(d / "plain-0" / SEG1, "r+b") as f:
        f.seek(8)
        f.write(struct.pack(">i", 5))
    code, rows, _ = _json(d)
    part = _partition(rows, "plain-0")
    assert (code, part["logEndOffset"]) == (1, 251)
    assert part["problems"][0].startswith(f"recovery truncates at offset 251 ({SEG1}, position 0: found record size 5")
    assert "offsets from 251 on (1 segment, 22265 bytes) are lost" in part["problems"][0]


def test_a_segment_without_its_index_is_recovered_even_after_a_clean_shutdown(tmp_path: Path) -> None:
    """``LogLoader.loadSegmentFiles`` recovers a segment whose ``.index`` is missing whatever the shutdown; a
    fault there truncates that segment alone (the later one is kept)."""
    d = log_dir(tmp_path / "d")
    (d / "plain-0" / "00000000000000000000.index").unlink()
    positions = _batch_positions(d / "plain-0" / SEG0)
    bad_pos, _, bad_base = positions[-1]
    _flip(d / "plain-0" / SEG0, bad_pos + 70)
    code, rows, _ = _json(d)
    part = _partition(rows, "plain-0")
    assert (code, part["logEndOffset"]) == (1, PLAIN_END)
    assert part["problems"][0].startswith(f"recovery truncates {SEG0} at offset {bad_base} ({SEG0}, position {bad_pos}")
    assert "later segments are kept" in part["problems"][0]


def _compressed_batch(log: Path) -> tuple[int, int, bool]:
    """(position, size, is v2) of the first compressed batch."""
    with FileRecords(str(log), store=store_of(str(log))) as records:
        for b in records.batches():
            attrs = b.h[5] if isinstance(b, V2Batch) else b.attrs
            if attrs & 0x07:
                return b.position, b.size, isinstance(b, V2Batch)
    raise AssertionError(f"no compressed batch in {log}")


CODECS = [f"v{m}-{c}-0" for m in (0, 1) for c in ("gzip", "snappy", "lz4")] + [
    f"v2-{c}-0" for c in ("gzip", "snappy", "lz4", "zstd")
]


@pytest.mark.parametrize("name", CODECS)
def test_recovery_does_not_decompress(tmp_path: Path, name: str) -> None:
    """``LogSegment.recover`` checks a batch's CRC, never its compressed records: a payload that cannot be
    decompressed under a CRC that matches is what a broker finds clean on start (``kseg verify-index``
    and ``dump --deep-iteration`` decode it); the same byte under the old CRC is a truncation."""
    d = tmp_path / "d"
    shutil.copytree(CORPUS_DATA / name, d / "t-0")
    log = next((d / "t-0").glob("*.log"))
    code, rows, _ = _json(d)
    assert (code, _partition(rows, "t-0")["status"]) == (0, "clean"), rows
    pos, size, is_v2 = _compressed_batch(log)
    data = bytearray(log.read_bytes())
    for i in range(pos + size - 12, pos + size - 4):  # inside the compressed payload
        data[i] ^= 0x5A
    log.write_bytes(bytes(data))
    code, rows, _ = _json(d)
    problems = _partition(rows, "t-0")["problems"]
    assert code == 1 and problems[0].startswith("recovery truncates at offset "), problems
    if is_v2:  # CRC-32C over attributes..end, at byte 17
        crc = crc32c_function()(memoryview(data)[pos + 21 : pos + size])
        struct.pack_into(">I", data, pos + 17, crc)
    else:  # CRC-32 over magic..end of the wrapper message, at byte 12
        struct.pack_into(">I", data, pos + 12, zlib.crc32(data[pos + 16 : pos + size]))
    log.write_bytes(bytes(data))
    code, rows, _ = _json(d)
    assert (code, _partition(rows, "t-0")["status"]) == (0, "clean"), rows


def test_recovery_below_the_log_start_deletes_every_segment(tmp_path: Path) -> None:
    """A log start of 300 (``DeleteRecords``) and a fault in segment 251's first batch, recovery point 251:
    recovery leaves log end 251, below the log start, so Kafka deletes every segment and starts an empty one
    at 300 -- the log end the offsets are then judged against."""
    d = _crashed(tmp_path / "d", 251)
    (d / "log-start-offset-checkpoint").write_text(checkpoint([("plain", 0, 300)]))
    _flip(d / "plain-0" / SEG1, 70)
    code, rows, _ = _json(d)
    part = _partition(rows, "plain-0")
    assert (code, part["logEndOffset"], part["logStartOffset"]) == (1, 300, 300)
    assert part["problems"][1] == (
        "recovery deletes every segment: the log end 251 it leaves is below the log start offset 300 "
        "(log-start-offset-checkpoint); Kafka makes an empty segment there, log end 300 (LogLoader.recoverLog)"
    )


def test_the_metadata_log_is_recovered_whole_even_after_a_clean_shutdown(tmp_path: Path) -> None:
    """KRaft's ``__cluster_metadata-0`` is opened by the raft layer with recovery point 0 and no clean
    shutdown (``KafkaMetadataLog.apply``): a CRC fault in it is truncated whatever the marker says."""
    d = log_dir(tmp_path / "d")
    meta = d / "__cluster_metadata-0"
    shutil.copytree(CORPUS_DATA / "__cluster_metadata-0", meta)
    code, rows, _ = _json(d)
    assert (code, _partition(rows, "__cluster_metadata-0")["status"]) == (0, "clean"), rows
    log = sorted(meta.glob("*.log"))[0]
    _flip(log, _batch_positions(log)[0][0] + 70)
    code, rows, _ = _json(d)
    problems = _partition(rows, "__cluster_metadata-0")["problems"]
    assert code == 1
    assert problems[0].startswith(f"recovery truncates at offset 0 ({log.name}, position 0: Record is corrupt")
    assert "KRaft's metadata log, recovered whole on every start" in problems[0]


def test_a_length_that_lies_leaves_the_offsets_past_it_unknown(tmp_path: Path) -> None:
    """Segment 251's first length field says 40 (a 52-byte batch, below the 61-byte header): recovery truncates
    there, and the bytes after it are not framed, so the offsets lost are "from 251 on", never a guess."""
    d = _crashed(tmp_path / "d", 300)
    with open(d / "plain-0" / SEG1, "r+b") as f:
        f.seek(8)
        f.write(struct.pack(">i", 40))
    code, rows, _ = _json(d)
    problem = _partition(rows, "plain-0")["problems"][0]
    assert code == 1 and problem.startswith(
        f"recovery truncates at offset 251 ({SEG1}, position 0: Record batch is corrupt (the size 52 is smaller "
        "than the minimum allowed overhead 61)): offsets from 251 on (1 segment, 22265 bytes) are lost"
    ), problem


def test_a_malformed_recovery_point_checkpoint_recovers_the_whole_log(tmp_path: Path) -> None:
    """Kafka resets a recovery point checkpoint it cannot read to 0 (``LogManager.loadLogs``): the whole log
    is recovered, so a fault in segment 0 is a truncation, beside the malformed file's own problem."""
    d = _crashed(tmp_path / "d", 300)
    (d / "recovery-point-offset-checkpoint").write_text("0\n2\norders 0 269\nplain 0 three-hundred\n")
    _flip(d / "plain-0" / SEG0, 70)
    code, rows, _ = _json(d)
    part = _partition(rows, "plain-0")
    assert (code, part["logEndOffset"], part["recoveryPoint"]) == (1, 0, None)
    assert any(WHOLE_LOG in q for q in part["problems"]), part["problems"]
    assert any(q.startswith("malformed: ") for r in rows if r["type"] == "logdir" for q in r["problems"]), rows
