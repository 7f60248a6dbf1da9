"""``kseg salvage`` on partitions Kafka wrote (the corpus), damaged in tmp copies the ways a crash or a disk
damages them, through the real CLI: the salvaged directory holds exactly the batches that survived, byte for
byte, in segments verify-index calls clean, with the indexes Kafka's recovery writes; every loss is named."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, run_cli

ROOT = Path(__file__).resolve().parents[3]
SEG0 = "00000000000000000000"
# plain, compressed (v2 gzip/zstd, v1 snappy, v0 gzip), transactional, legacy plain
PARTITIONS = ["plain-v2-0", "v2-gzip-0", "v2-zstd-0", "txn-v2-0", "v1-none-0", "v1-snappy-0", "v0-gzip-0"]


def _batches(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of every batch of an intact log, by its length fields."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        out.append((pos, 12 + length))
        pos += 12 + length
    assert pos == len(data)
    return out


def _copy(tmp: Path, name: str) -> tuple[Path, bytes]:
    part = tmp / "in" / name
    shutil.copytree(CORPUS_DATA / name, part)
    return part, (part / f"{SEG0}.log").read_bytes()


def _hashes(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir())}


def _salvage(part: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    directory = part if part.is_dir() else part.parent
    before = _hashes(directory)
    r = run_cli(["salvage", str(part), "-o", str(out), *extra])
    assert "Traceback" not in r.errtext, r.errtext
    assert _hashes(directory) == before  # the input is only read
    return r.exit_code, r.text, r.errtext


def _intact(original: bytes, damaged_batches: set[int]) -> bytes:
    return b"".join(original[p : p + n] for k, (p, n) in enumerate(_batches(original)) if k not in damaged_batches)


def _verify_clean(out: Path) -> None:
    r = run_cli(["verify-index", "--strict", str(out)])
    assert r.exit_code == 0, r.text
    assert "clean" in r.text.splitlines()[-1]


def _lookups_work(out: Path) -> None:
    """``lookup-offset`` finds the first, a middle and the last kept batch's offset field (a v2 batch's base
    offset, a v0/v1 wrapper's offset) through the salvaged directory's rebuilt indexes."""
    log = out / f"{SEG0}.log"
    if not log.exists():
        return
    data = log.read_bytes()
    batches = _batches(data)
    for p, _ in {batches[0], batches[len(batches) // 2], batches[-1]}:
        (offset,) = struct.unpack_from(">q", data, p)
        r = run_cli(["lookup-offset", "-q", str(offset), str(out)])
        assert r.exit_code == 0, (offset, r.text, r.errtext)
        assert f"Found: offset {offset} " in r.text, r.text


# -- the damage, in the first segment: each returns the damaged bytes and the indexes of the batches lost ----
def zeroed_page(data: bytes) -> tuple[bytes, set[int]]:
    start = 4096 if len(data) > 3 * 4096 else 0
    end = min(start + 4096, len(data) - 1)
    damaged = data[:start] + bytes(end - start) + data[end:]
    return damaged, {k for k, (p, n) in enumerate(_batches(data)) if data[p : p + n] != damaged[p : p + n]}


def overwritten_length(data: bytes) -> tuple[bytes, set[int]]:
    batches = _batches(data)
    k = len(batches) // 2
    p = batches[k][0]
    return data[: p + 8] + struct.pack(">i", 0x12345678) + data[p + 12 :], {k}


def garbage_between(data: bytes) -> tuple[bytes, set[int]]:
    batches = _batches(data)
    p = batches[min(2, len(batches) - 1)][0]
    junk = random.Random(7).randbytes(1000)
    return data[:p] + junk + data[p:], set()


def torn_tail(data: bytes) -> tuple[bytes, set[int]]:
    batches = _batches(data)
    return data[: batches[-1][0] + batches[-1][1] // 2], {len(batches) - 1}


DAMAGE = {"zeroed_page": zeroed_page, "overwritten_length": overwritten_length, "garbage": garbage_between}
DAMAGE["torn_tail"] = torn_tail


@pytest.mark.parametrize("name", PARTITIONS)
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_corpus_partition(tmp_path: Path, name: str, damage: str) -> None:
    part, original = _copy(tmp_path, name)
    damaged, lost = DAMAGE[damage](original)
    (part / f"{SEG0}.log").write_bytes(damaged)
    out = tmp_path / "out" / name
    code, text, err = _salvage(part, out)
    assert code == (1 if lost else 0), (text, err)
    # exactly the batches that survived, byte for byte; every other segment as it was
    intact = _intact(original, lost)
    if intact:
        assert (out / f"{SEG0}.log").read_bytes() == intact
    else:  # nothing of the segment survived: no file for it
        assert not (out / f"{SEG0}.log").exists()
    for log in sorted(part.glob("*.log"))[1:]:
        assert (out / log.name).read_bytes() == log.read_bytes()
    _verify_clean(out)
    _lookups_work(out)
    if lost:
        assert "Lost, by cause:" in text and "damaged bytes" in text, text
        assert f"{part / SEG0}.log: from byte" in text
        assert "Kafka's recovery (LogSegment.recover) would stop at" in " ".join(text.split())
    assert not [p for p in out.parent.iterdir() if p.name.endswith(".kseg-tmp")]


@pytest.mark.parametrize("name", PARTITIONS)
def test_intact_partition_is_copied_with_recovery_indexes(tmp_path: Path, name: str) -> None:
    """Nothing damaged: every .log copied as it is, exit 0, the indexes those rebuild-index writes (Kafka's
    recovery) -- for plain-v2-0 the very files Kafka wrote."""
    part, _ = _copy(tmp_path, name)
    out = tmp_path / "out" / name
    code, text, _ = _salvage(part, out)
    assert code == 0, text
    assert "nothing lost" in text and "Kafka rebuilds producer state from the log" in " ".join(text.split())
    rebuilt = tmp_path / "rebuilt"
    r = run_cli(["rebuild-index", "-q", "--output-dir", str(rebuilt), str(part)])
    assert r.exit_code == 0, r.text
    for log in part.glob("*.log"):
        assert (out / log.name).read_bytes() == log.read_bytes()
    for f in rebuilt.iterdir():
        assert (out / f.name).read_bytes() == f.read_bytes(), f.name
    assert not list(out.glob("*.snapshot"))
    if name == "plain-v2-0":
        for f in part.glob("*index"):
            assert (out / f.name).read_bytes() == f.read_bytes(), f.name


def test_duplicate_batch_is_kept_once(tmp_path: Path) -> None:
    part, original = _copy(tmp_path, "plain-v2-0")
    p, n = _batches(original)[3]
    (part / f"{SEG0}.log").write_bytes(original[: p + n] + original[p : p + n] + original[p + n :])
    out = tmp_path / "out" / "p-0"
    code, text, _ = _salvage(part, out)
    assert code == 0, text
    assert (out / f"{SEG0}.log").read_bytes() == original
    assert "batches found twice (nothing lost): 1" in text
    assert f"from byte {p + n} to byte {p + 2 * n}" in text and f"the batch at byte {p} again" in text


def test_overlapping_batch_is_dropped_the_first_kept(tmp_path: Path) -> None:
    """Batch 5 copied in place of nothing after batch 7: its offsets are below those kept: an overlap, lost."""
    part, original = _copy(tmp_path, "plain-v2-0")
    batches = _batches(original)
    p5, n5 = batches[5]
    p8 = batches[8][0]
    (part / f"{SEG0}.log").write_bytes(original[:p8] + original[p5 : p5 + n5] + original[p8:])
    out = tmp_path / "out" / "p-0"
    code, text, _ = _salvage(part, out)
    assert code == 1, text
    assert (out / f"{SEG0}.log").read_bytes() == original
    assert "batches overlapping offsets kept before them: 1" in text


@pytest.mark.parametrize("shift", [3, -2])
def test_damaged_base_offset_judged_by_its_neighbours(tmp_path: Path, shift: int) -> None:
    """A v2 base offset (outside the CRC) changed on disk: the batch is dropped, every other one kept --
    above its predecessor, its offsets fit exactly between its neighbours (out-of-place); below, it
    overlaps the batch before it."""
    part, original = _copy(tmp_path, "plain-v2-0")
    p = _batches(original)[6][0]
    (base,) = struct.unpack_from(">q", original, p)
    damaged = original[:p] + struct.pack(">q", base + shift) + original[p + 8 :]
    (part / f"{SEG0}.log").write_bytes(damaged)
    out = tmp_path / "o" / "p-0"
    code, text, _ = _salvage(part, out)
    assert code == 1, text
    assert (out / f"{SEG0}.log").read_bytes() == _intact(original, {6})
    heading = "batches whose offsets do not fit their segment" if shift > 0 else "batches overlapping offsets"
    assert heading in text, text


def test_damaged_leader_epoch_judged_by_its_neighbours(tmp_path: Path) -> None:
    part, original = _copy(tmp_path, "plain-v2-0")
    p = _batches(original)[4][0]
    (part / f"{SEG0}.log").write_bytes(original[: p + 12] + struct.pack(">i", 99) + original[p + 16 :])
    out = tmp_path / "o" / "p-0"
    code, text, _ = _salvage(part, out)
    assert code == 1, text
    assert (out / f"{SEG0}.log").read_bytes() == _intact(original, {4})
    assert "its partition leader epoch 99 is above the next batch's (0)" in text


def test_json_rows_and_report(tmp_path: Path) -> None:
    part, original = _copy(tmp_path, "plain-v2-0")
    damaged, lost = zeroed_page(original)
    (part / f"{SEG0}.log").write_bytes(damaged)
    report = tmp_path / "report.jsonl"
    r = run_cli(["salvage", "--format", "json", str(part), "-o", str(tmp_path / "o" / "p-0"), "--report", str(report)])
    assert r.exit_code == 1
    rows = [json.loads(line) for line in r.text.splitlines()]
    assert [json.loads(line) for line in report.read_text().splitlines()] == rows
    kinds = [row["type"] for row in rows]
    assert kinds[-1] == "summary" and "loss" in kinds and kinds.count("segment") == 2
    loss = next(row for row in rows if row["type"] == "loss")
    assert loss["cause"] == "damaged" and loss["lost"] and loss["start"] == _batches(original)[min(lost)][0]
    assert loss["firstOffset"] is not None and loss["lastOffset"] >= loss["firstOffset"]
    summary = rows[-1]
    assert summary["exitCode"] == 1 and summary["kafkaDeletedSegments"] == 1 and summary["keptBeyondKafkaRecovery"] > 0


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    part, original = _copy(tmp_path, "v2-gzip-0")
    (part / f"{SEG0}.log").write_bytes(overwritten_length(original)[0])
    (tmp_path / "out").mkdir()
    r = run_cli(["salvage", "--dry-run", str(part), "-o", str(tmp_path / "out" / "p-0")])
    assert r.exit_code == 1 and "--dry-run: nothing written" in r.text
    assert list((tmp_path / "out").iterdir()) == []


def test_from_offset(tmp_path: Path) -> None:
    part, original = _copy(tmp_path, "plain-v2-0")
    out = tmp_path / "o" / "p-0"
    code, text, _ = _salvage(part, out, "--from-offset", "251")
    assert code == 0, text
    assert not (out / f"{SEG0}.log").exists()
    assert (out / "00000000000000000251.log").read_bytes() == (part / "00000000000000000251.log").read_bytes()
    assert "22 batches below --from-offset left out" in text


def test_undecodable_compressed_batch_is_reported_not_kept(tmp_path: Path) -> None:
    """A gzip batch with a payload byte flipped and its CRC made to hold again (as a writer with a bug would):
    kept by Kafka's recovery (it checks the CRC only), dropped here and named."""
    from kseg.format.crc import crc32c_function

    part, original = _copy(tmp_path, "v2-gzip-0")
    p, n = _batches(original)[2]
    batch = bytearray(original[p : p + n])
    batch[n // 2] ^= 0xFF
    batch[17:21] = struct.pack(">I", crc32c_function()(bytes(batch[21:])))
    (part / f"{SEG0}.log").write_bytes(original[:p] + bytes(batch) + original[p + n :])
    out = tmp_path / "o" / "p-0"
    code, text, _ = _salvage(part, out)
    assert code == 1, text
    assert (out / f"{SEG0}.log").read_bytes() == _intact(original, {2})
    assert "compressed batches whose CRC holds but whose records do not decode: 1" in text
    assert "Kafka's recovery (LogSegment.recover) would read every segment to its end" in " ".join(text.split())


def test_transaction_cut_by_lost_marker(tmp_path: Path) -> None:
    """txn-v2-0's first commit marker zeroed: the transaction it closed runs on into the next one."""
    part, original = _copy(tmp_path, "txn-v2-0")
    batches = _batches(original)
    control = [k for k, (p, n) in enumerate(batches) if original[p + 22] & 0x20]  # attributes' control bit
    p, n = batches[control[0]]
    (part / f"{SEG0}.log").write_bytes(original[:p] + bytes(n) + original[p + n :])
    out = tmp_path / "o" / "p-0"
    code, text, _ = _salvage(part, out)
    assert code == 1, text
    words = " ".join(text.split())  # the text as unwrapped
    assert "Transactions:" in words and "a marker lost there makes two transactions one" in words, text
    _verify_clean(out)


def test_outputs_refused(tmp_path: Path) -> None:
    part, _ = _copy(tmp_path, "plain-v2-0")
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("keep me")
    for args, said in (
        ([str(part), "-o", str(part / "sub")], "lies within the input"),
        ([str(part), "-o", str(part)], "is the input"),
        ([str(part), "-o", str(tmp_path / "in")], "holds the input"),
        ([str(part), "-o", str(full)], "not empty"),
        ([str(part)], "give -o DIR"),
        ([str(part), "-o", "s3://bucket/p-0"], "not to a URI"),
        ([str(part / f"{SEG0}.log"), "-o", str(part / "s")], "lies within the input"),
    ):
        r = run_cli(["salvage", *args])
        assert r.exit_code == 2, (args, r.text, r.errtext)
        assert said in r.errtext, (args, r.errtext)
    assert (full / "x").read_text() == "keep me"
    r = run_cli(["salvage", "--force", str(part), "-o", str(full)])
    assert r.exit_code == 0 and not (full / "x").exists() and (full / f"{SEG0}.log").exists()


def test_interrupted_runs_leave_nothing(tmp_path: Path) -> None:
    """Ctrl-C while reading: exit 130 and no directory; a killed run's temporary directory is removed by the
    next run into the same target, with a note."""
    import signal
    import time

    part, _ = _copy(tmp_path, "plain-v2-0")
    out = tmp_path / "o" / "p-0"
    out.parent.mkdir()
    cmd = [sys.executable, "-m", "kseg", "salvage", "-q", "--max-rate", "0.01", str(part), "-o", str(out)]
    p = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT))
    )
    deadline = time.monotonic() + 60
    while not any(q.name.endswith(".kseg-tmp") for q in out.parent.iterdir()):
        assert p.poll() is None and time.monotonic() < deadline, p.stderr.read() if p.stderr else ""
        time.sleep(0.02)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and err == b"kseg: interrupted\n", err
    assert list(out.parent.iterdir()) == []
    stale = out.parent / ".p-0.0123456789ab.kseg-tmp"
    stale.mkdir()
    (stale / f"{SEG0}.log").write_bytes(b"half")
    r = run_cli(["salvage", str(part), "-o", str(out)])
    assert r.exit_code == 0 and "removed 1 temporary directory an interrupted kseg run left" in r.errtext
    assert sorted(q.name for q in out.parent.iterdir()) == ["p-0"]


def test_empty_segment_stays(tmp_path: Path) -> None:
    """The segment a broker rolled last, still empty: copied empty (its base offset is the log end offset)."""
    part, _ = _copy(tmp_path, "plain-v2-0")
    (part / "00000000000000000420.log").write_bytes(b"")
    out = tmp_path / "o" / "p-0"
    code, text, _ = _salvage(part, out)
    assert code == 0, text
    assert (out / "00000000000000000420.log").read_bytes() == b""
    _verify_clean(out)


def test_one_segment(tmp_path: Path) -> None:
    part, _ = _copy(tmp_path, "plain-v2-0")
    out = tmp_path / "o" / "p-0"
    code, text, _ = _salvage(part / "00000000000000000251.log", out)
    assert code == 0, text
    assert sorted(p.name for p in out.iterdir()) == [
        "00000000000000000251.index",
        "00000000000000000251.log",
        "00000000000000000251.timeindex",
    ]


@pytest.mark.parametrize("one_segment", [False, True])
def test_tiered_segments_salvaged_as_kafka_segments(tmp_path: Path, one_segment: bool) -> None:
    """Segments in Aiven's tiered layout (chunked, zstd-compressed objects): read through their store, written
    as the plain segments Kafka wrote, named by base offset."""
    from tests.cli.test_tiered_aiven import copy_aiven

    copy_aiven(tmp_path / "tiered", "plain-v2-0", None, compression=True)
    (part,) = (tmp_path / "tiered").glob("plain-v2-*/0")
    src = sorted(part.glob("*.log"))[0] if one_segment else part
    out = tmp_path / "o" / "plain-v2-0"
    r = run_cli(["salvage", str(src), "-o", str(out)])
    assert r.exit_code == 0, (r.text, r.errtext)
    logs = sorted(CORPUS_DATA.joinpath("plain-v2-0").glob("*.log"))[: 1 if one_segment else None]
    assert sorted(p.name for p in out.glob("*.log")) == [p.name for p in logs]
    for log in logs:
        assert (out / log.name).read_bytes() == log.read_bytes()
    _verify_clean(out)


def test_fuzz_never_keeps_a_bad_batch_nor_loses_an_intact_one(tmp_path: Path) -> None:
    """Random damage (zeroed, random or inserted bytes anywhere, of any length; a base offset changed): every
    batch whose bytes are unchanged is kept, and the output holds nothing else (verify-index checks every
    CRC)."""
    part0, original = _copy(tmp_path, "plain-v2-0")
    batches = _batches(original)
    rng = random.Random(20261127)
    for case in range(60):
        data = bytearray(original)
        start = rng.randrange(len(data))
        length = rng.choice([1, 3, 17, 200, 4096, rng.randrange(1, 9000)])
        kind = rng.choice(["zero", "random", "insert", "base_offset", "epoch"])
        if kind == "epoch":  # outside the CRC too; not the last batch of the segment (no neighbour after it)
            k = rng.randrange(len(batches) - 1)
            data[batches[k][0] + 12 : batches[k][0] + 16] = struct.pack(">i", rng.choice([1, 7, 1 << 30]))
            changed = {k}
        elif kind == "base_offset":  # outside the CRC: judged by its neighbours
            k = rng.randrange(len(batches))
            (base,) = struct.unpack_from(">q", data, batches[k][0])
            data[batches[k][0] : batches[k][0] + 8] = struct.pack(">q", max(0, base + rng.choice([-7, -1, 1, 5, 40])))
            changed = (
                {k} if data[batches[k][0] : batches[k][0] + 8] != original[batches[k][0] : batches[k][0] + 8] else set()
            )
        elif kind == "insert":
            data[start:start] = rng.randbytes(length)
            changed = {k for k, (p, n) in enumerate(batches) if p < start < p + n}
        else:
            end = min(start + length, len(data))
            data[start:end] = bytes(end - start) if kind == "zero" else rng.randbytes(end - start)
            changed = {k for k, (p, n) in enumerate(batches) if original[p : p + n] != data[p : p + n]}
        part = tmp_path / f"c{case}" / "p-0"
        shutil.copytree(part0, part)
        (part / f"{SEG0}.log").write_bytes(bytes(data))
        out = tmp_path / f"o{case}" / "p-0"
        code, text, _ = _salvage(part, out)
        assert code == (1 if changed else 0), (case, kind, start, length, text)
        assert (out / f"{SEG0}.log").read_bytes() == _intact(original, changed), (case, kind, start, length, text)
        _verify_clean(out)


def test_memory_stays_flat_on_a_large_segment(tmp_path: Path) -> None:
    """A 96 MiB segment with a zeroed page in its middle, salvaged in a child process: its peak RSS stays
    far below the segment's size (the reader's windows and the writer's buffer, not the file)."""
    from kseg.testing.bulk import write_bulk_segment

    part = tmp_path / "big-0"
    write_bulk_segment(part, 96 << 20, records_per_batch=20, value_size=200, index_interval_bytes=4096)
    log = part / f"{SEG0}.log"
    with open(log, "r+b") as f:
        f.seek(48 << 20)
        f.write(bytes(4096))
    out = tmp_path / "o" / "big-0"
    # the peak of this process's own image (VmHWM): getrusage's ru_maxrss would carry the forking test
    # worker's peak across exec
    code = (
        "import re, sys, runpy; sys.argv = ['kseg', 'salvage', '-q', sys.argv[1], '-o', sys.argv[2]]\n"
        "try:\n    runpy.run_module('kseg', run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
        "    print('exit', e.code, 'rss', hwm, file=sys.stderr)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", code, str(part), str(out)], capture_output=True, text=True, env=env)
    last = p.stderr.strip().splitlines()[-1].split()
    assert last[:2] == ["exit", "1"], p.stderr
    rss_mib = int(last[3]) / 1024
    assert rss_mib < 80, rss_mib  # the segment is 96 MiB
    assert (out / f"{SEG0}.log").stat().st_size > (96 << 20) - (64 << 10)
    _verify_clean(out)


def test_a_kept_log_recovery_would_fail_on_is_an_error(tmp_path: Path) -> None:
    """Recovery's producer-state rule runs on the batches as they are kept: a transaction whose marker was
    lost in damage, then a non-transactional batch of the same producer (``InvalidTxnStateException``: the
    log would not load) -- exit 2, nothing written."""
    from kseg.testing.writer import RecordSpec, build_control_batch, build_v2_batch

    def data(base: int, **kw) -> bytes:
        return build_v2_batch([RecordSpec(b"k", b"v" * 100, 1000 + i) for i in range(3)], base_offset=base, **kw)

    marker = build_control_batch(
        "COMMIT", base_offset=3, producer_id=7, producer_epoch=0, coordinator_epoch=1, timestamp=2000
    )
    part = tmp_path / "in" / "t-0"
    part.mkdir(parents=True)
    batches = [data(0, producer_id=7, producer_epoch=0, transactional=True), bytes(len(marker))]
    (part / f"{SEG0}.log").write_bytes(b"".join([*batches, data(4, producer_id=7, producer_epoch=0)]))
    out = tmp_path / "out" / "t-0"
    code, _, err = _salvage(part, out)
    assert code == 2
    assert "the salvaged log would not pass Kafka's recovery: InvalidTxnStateException" in err
    assert not out.exists() and os.listdir(out.parent) == []
