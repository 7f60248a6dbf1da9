"""``verify-index``'s two shortcuts decide only what the plain algorithm decides: the log scan that records
only the batches the indexes ask about (``index_keys``; memory follows the index entries, not the
batches) and the bulk index checks (``_all_batch_ends``, ``_all_exact_times``).  The reference records
every batch and checks entry by entry; the outcome (status, problems, notes) must be the same on every
corpus partition, on segments written as each Kafka version wrote them, on indexes damaged at random and
on logs whose offsets go backwards; and the shortcuts must be taken on a current broker's files."""

from __future__ import annotations

import random
import shutil
import struct
from pathlib import Path

import pytest

from kseg.format.indexes import OffsetIndexView, TimeIndexView
from kseg.ops.verify import keys, offset_index, time_index, verify
from kseg.ops.verify.verify import verify_segment
from kseg.storage.partition import scan_partition
from tests.conftest import CORPUS_DATA
from tests.ops.verify.kafka_versions import BUILDERS

CORPUS = sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir())
VERSIONS = [(b, k) for b in sorted(BUILDERS) for k in ("2.8", "3.6", "3.9")]


def _outcome(directory: Path, strict: bool) -> list[tuple]:
    return [
        (res.status, res.failed, list(res.problems), list(res.notes))
        for seg in scan_partition(str(directory)).segments
        for res in [verify_segment(directory.name, seg, strict=strict)]
    ]


def _reference(monkeypatch: pytest.MonkeyPatch, directory: Path, strict: bool) -> list[tuple]:
    """The reference: every batch recorded, every entry checked one by one."""
    with monkeypatch.context() as m:
        m.setattr(verify, "index_keys", lambda indexes: None)
        m.setattr(offset_index, "_all_batch_ends", lambda *a: False)
        m.setattr(time_index, "_all_exact_times", lambda *a: False)
        return _outcome(directory, strict)


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("name", CORPUS)
def test_corpus_outcome_is_the_reference(monkeypatch, name: str, strict: bool) -> None:
    d = CORPUS_DATA / name
    assert _outcome(d, strict) == _reference(monkeypatch, d, strict)


@pytest.mark.parametrize("builder,kafka", VERSIONS)
def test_each_versions_outcome_is_the_reference(monkeypatch, tmp_path: Path, builder: str, kafka: str) -> None:
    d = BUILDERS[builder](tmp_path, kafka)
    for strict in (False, True):
        assert _outcome(d, strict) == _reference(monkeypatch, d, strict)


def _damage(index: Path, entry_size: int, rng: random.Random) -> None:
    """One of: a field of one entry moved a little, two entries swapped, an entry zeroed, a byte flipped."""
    raw = bytearray(index.read_bytes())
    n = len(raw) // entry_size
    i = rng.randrange(n)
    how = rng.choice(["nudge-first", "nudge-second", "swap", "zero", "flip"])
    if how.startswith("nudge"):
        fmt = ">i" if how == "nudge-second" or entry_size == 8 else ">q"
        at = i * entry_size + (0 if how == "nudge-first" else entry_size - 4)
        (v,) = struct.unpack_from(fmt, raw, at)
        struct.pack_into(fmt, raw, at, v + rng.choice([-2, -1, 1, 3, 40]))
    elif how == "swap" and n > 1:
        j = (i + 1) % n
        a, b = raw[i * entry_size : (i + 1) * entry_size], raw[j * entry_size : (j + 1) * entry_size]
        raw[i * entry_size : (i + 1) * entry_size], raw[j * entry_size : (j + 1) * entry_size] = b, a
    elif how == "zero":
        raw[i * entry_size : (i + 1) * entry_size] = bytes(entry_size)
    else:
        raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    index.write_bytes(bytes(raw))


@pytest.mark.parametrize("seed", range(40))
def test_damaged_indexes_outcome_is_the_reference(monkeypatch, tmp_path: Path, seed: int) -> None:
    """Every other seed reads the keys two at a time: a descent is then found after the log pass began
    (the pass is run again recording every batch), not in the first keys read."""
    rng = random.Random(seed)
    if seed % 2:
        monkeypatch.setattr(keys, "CHUNK", 2)

    def indexes(directory: Path) -> list[Path]:
        return [
            p
            for p in sorted(directory.glob("*.index")) + sorted(directory.glob("*.timeindex"))
            if p.stat().st_size >= 8
        ]

    d = tmp_path / "p-0"
    shutil.copytree(rng.choice([CORPUS_DATA / n for n in CORPUS if indexes(CORPUS_DATA / n)]), d)
    candidates = indexes(d)
    target = rng.choice(candidates)
    _damage(target, 8 if target.suffix == ".index" else 12, rng)
    for strict in (False, True):
        assert _outcome(d, strict) == _reference(monkeypatch, d, strict)


def test_a_log_whose_offsets_go_back_is_scanned_again_whole(monkeypatch, tmp_path: Path) -> None:
    """Batches out of offset order (a damaged or hand-assembled log): the recorded batches would not
    answer for the others, so every batch is recorded, and the outcome is still the reference's."""
    from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment

    d = tmp_path / "back-0"
    d.mkdir()
    recs = [RecordSpec(b"k", b"v" * 300, 1_730_000_000_000 + i) for i in range(4)]
    write_segment(d, [[build_v2_batch(recs, base_offset=o)] for o in range(0, 24, 4)], index_interval_bytes=100)
    log = d / "00000000000000000000.log"
    raw = bytearray(log.read_bytes())
    size = len(raw) // 6  # six batches of one size; baseOffset is outside the v2 CRC
    struct.pack_into(">q", raw, 3 * size, 2)  # the fourth batch now claims offsets 2..5
    log.write_bytes(bytes(raw))
    (seg,) = scan_partition(str(d)).segments
    scan = verify.scan_log(
        verify.SegmentResult("back-0", seg.name, 0, seg.log), seg.log, verify.index_keys(verify.read_indexes(seg))
    )
    assert not scan.ordered and len(scan.positions) == scan.batches == 6
    for strict in (False, True):
        assert _outcome(d, strict) == _reference(monkeypatch, d, strict)
    assert any(p.kind == "offsets-not-increasing" for _, _, problems, _ in _outcome(d, False) for p in problems)


def test_a_healthy_log_records_only_what_its_indexes_ask() -> None:
    (seg, *_) = scan_partition(str(CORPUS_DATA / "plain-v2-0")).segments
    scan = verify.scan_log(
        verify.SegmentResult("plain-v2-0", seg.name, seg.base_offset, seg.log),
        seg.log,
        verify.index_keys(verify.read_indexes(seg)),
    )
    entries = Path(seg.index).stat().st_size // 8 + Path(seg.timeindex).stat().st_size // 12
    assert scan.ordered and scan.batches > len(scan.positions) and len(scan.positions) <= 2 * entries


def test_a_current_brokers_indexes_take_the_bulk_path() -> None:
    (seg, *_) = scan_partition(str(CORPUS_DATA / "plain-v2-0")).segments
    res = verify.SegmentResult("plain-v2-0", seg.name, seg.base_offset, seg.log)
    scan = verify.scan_log(res, seg.log, verify.index_keys(verify.read_indexes(seg)))
    oview = OffsetIndexView(Path(seg.index).read_bytes(), seg.base_offset, seg.index)
    tview = TimeIndexView(Path(seg.timeindex).read_bytes(), seg.base_offset, seg.timeindex)
    assert oview.entries > 1 and tview.entries > 1
    assert offset_index._all_batch_ends(oview, oview.entries, scan)
    assert time_index._all_exact_times(tview, tview.entries, scan)
    # and an index that is off by one entry is not taken
    raw = bytearray(Path(seg.index).read_bytes())
    struct.pack_into(">i", raw, 4, struct.unpack_from(">i", raw, 4)[0] + 1)
    assert not offset_index._all_batch_ends(OffsetIndexView(bytes(raw), seg.base_offset), oview.entries, scan)


def _batch_starts(log: Path) -> list[int]:
    from kseg.errors import KsegError
    from kseg.storage.records import FileRecords

    starts: list[int] = []
    with FileRecords(str(log)) as records:
        try:
            for items in records.scan():
                starts.extend(pos for pos, *_ in items)
        except KsegError:  # a damaged corpus log: the batches before the damage
            pass
    return starts


@pytest.mark.parametrize("seed", range(30))
def test_damaged_logs_outcome_is_the_reference(monkeypatch, tmp_path: Path, seed: int) -> None:
    """A batch's baseOffset (outside the v2 CRC) or lastOffsetDelta moved: offsets that repeat, go back or
    leap, so the log is out of order or its batches no longer end where the indexes say."""
    rng = random.Random(seed)
    v2 = [CORPUS_DATA / n for n in CORPUS if "v0" not in n and "v1" not in n and any((CORPUS_DATA / n).glob("*.index"))]
    d = tmp_path / "p-0"
    shutil.copytree(rng.choice(v2), d)
    log = rng.choice([p for p in sorted(d.glob("*.log")) if _batch_starts(p)])
    starts = _batch_starts(log)
    raw = bytearray(log.read_bytes())
    at = rng.choice(starts)
    field, fmt = rng.choice([(0, ">q"), (23, ">i")])  # baseOffset, lastOffsetDelta
    (v,) = struct.unpack_from(fmt, raw, at + field)
    struct.pack_into(fmt, raw, at + field, v + rng.choice([-30, -5, -1, 1, 2, 40]))
    log.write_bytes(bytes(raw))
    for strict in (False, True):
        assert _outcome(d, strict) == _reference(monkeypatch, d, strict)
