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
from kseg.ops.verify import keys, offset_index, sieve, time_index, verify
from kseg.ops.verify.holding import holding_all
from kseg.ops.verify.index import EntryCheck, Records, batch_holding
from kseg.ops.verify.result import KEPT_PER_KIND, LogScan, SegmentResult
from kseg.ops.verify.verify import verify_segment
from kseg.storage.location import LocalNames
from kseg.storage.partition import scan_partition
from tests.conftest import CORPUS_DATA
from tests.ops.verify.kafka_versions import BUILDERS
from tests.stores import local

CORPUS = sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir())


@pytest.fixture(autouse=True)
def _sifted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sieve taken wherever it applies, however small the log (a log much smaller than its indexes, or
    of a few MiB, records every batch instead: :func:`test_a_small_log_with_large_indexes_records_every_batch`)."""
    monkeypatch.setattr(sieve, "ENTRY_BYTES", 0)
    monkeypatch.setattr(sieve, "EVERY_BYTES", -1)


VERSIONS = [(b, k) for b in sorted(BUILDERS) for k in ("2.8", "3.6", "3.9")]


def _outcome(directory: Path, strict: bool) -> list[tuple]:
    return [
        (res.status, res.failed, list(res.problems), list(res.notes))
        for seg in scan_partition(str(directory), store=local()).segments
        for res in [verify_segment(directory.name, seg, strict=strict)]
    ]


def _reference(monkeypatch: pytest.MonkeyPatch, directory: Path, strict: bool) -> list[tuple]:
    """The reference: every batch recorded, every entry checked one by one."""
    with monkeypatch.context() as m:
        m.setattr(verify, "index_keys", lambda indexes: None)
        m.setattr(offset_index, "_all_batch_ends", lambda *a: False)
        m.setattr(time_index, "_all_exact_times", lambda *a: False)
        m.setattr(time_index._Entries, "first_ending", _linear_first_ending)
        m.setattr(EntryCheck, "answer_all", lambda *a: None)  # batch_holding's scan, entry by entry
        return _outcome(directory, strict)


def _linear_first_ending(entries, offset: int) -> int:
    """The time-index check's former lookup of the first batch ending at ``offset`` on a log out of order
    (entries times batches): the oracle of the binary search that replaced it."""
    for k, last in enumerate(entries.scan.last_offsets):
        if last == offset:
            return k
    return -1


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
    (seg,) = scan_partition(str(d), store=local()).segments
    scan = verify.scan_log(
        verify.SegmentResult("back-0", seg.name, 0, seg.log, names=seg.store.names),
        seg.log,
        verify.index_keys(verify.read_indexes(seg)),
        store=seg.store,
    )
    assert not scan.ordered and len(scan.positions) == scan.batches == 6
    for strict in (False, True):
        assert _outcome(d, strict) == _reference(monkeypatch, d, strict)
    assert any(p.kind == "offsets-not-increasing" for _, _, problems, _ in _outcome(d, False) for p in problems)


def test_a_healthy_log_records_only_what_its_indexes_ask() -> None:
    (seg, *_) = scan_partition(str(CORPUS_DATA / "plain-v2-0"), store=local()).segments
    scan = verify.scan_log(
        verify.SegmentResult("plain-v2-0", seg.name, seg.base_offset, seg.log, names=seg.store.names),
        seg.log,
        verify.index_keys(verify.read_indexes(seg)),
        store=seg.store,
    )
    entries = Path(seg.index).stat().st_size // 8 + Path(seg.timeindex).stat().st_size // 12
    assert scan.ordered and scan.batches > len(scan.positions) and len(scan.positions) <= 2 * entries


def test_a_current_brokers_indexes_take_the_bulk_path() -> None:
    (seg, *_) = scan_partition(str(CORPUS_DATA / "plain-v2-0"), store=local()).segments
    res = verify.SegmentResult("plain-v2-0", seg.name, seg.base_offset, seg.log, names=seg.store.names)
    scan = verify.scan_log(res, seg.log, verify.index_keys(verify.read_indexes(seg)), store=seg.store)
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
    with FileRecords(str(log), store=local()) as records:
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


@pytest.mark.parametrize("seed", range(20))
def test_the_first_batch_ending_at_an_offset_is_the_linear_search(seed: int) -> None:
    """Last offsets that repeat, go back and leap: every offset asked (those present, between, outside)."""
    from array import array

    rng = random.Random(seed)
    last = array("q", (rng.choice([rng.randrange(60), 2**63 - 1, -5]) for _ in range(rng.randrange(1, 80))))
    scan = LogScan(last_offsets=last)
    fast = time_index._Entries(
        SegmentResult("p-0", "s", 0, "s.log", names=LocalNames()), "s.timeindex", scan, False, Records("s.log", local())
    )
    for offset in [*range(-6, 62), 2**63 - 1, -(2**63)]:
        assert fast.first_ending(offset) == _linear_first_ending(fast, offset)


def _going_back(directory: Path, batches: int, back_at: tuple[int, ...]) -> Path:
    """``batches`` one-record batches, an index entry for each (one-record batches of a quiet topic), then
    each batch of ``back_at`` made to claim offset 0 (baseOffset is outside the v2 CRC)."""
    from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment

    directory.mkdir()
    appends = [[build_v2_batch([RecordSpec(b"k", b"v", 1_730_000_000_000 + o)], base_offset=o)] for o in range(batches)]
    write_segment(directory, appends, index_interval_bytes=1)
    log = directory / "00000000000000000000.log"
    raw = bytearray(log.read_bytes())
    size = len(raw) // batches  # batches of one size
    for k in back_at:
        struct.pack_into(">q", raw, k * size, 0)
    log.write_bytes(bytes(raw))
    return directory


@pytest.mark.parametrize("seed", range(30))
def test_the_batches_holding_offsets_are_the_linear_search(monkeypatch, seed: int) -> None:
    """Batches that overlap, repeat, go back and leap (a base above its last offset too): every offset and
    start asked at once, as each entry's scan answers them (every other seed ordering the queries and the
    batches by sorted runs of 3, merged)."""
    from array import array

    from kseg.ops.verify import holding

    rng = random.Random(seed)
    if seed % 2:
        monkeypatch.setattr(holding, "RUN", 3)
    n = rng.randrange(0, 70)
    base = array("q", (rng.choice([rng.randrange(50), rng.randrange(50), -(2**63), 2**63 - 9]) for _ in range(n)))
    last = array("q", (b + rng.choice([0, 0, 1, 3, 20, -2]) if abs(b) < 2**62 else b for b in base))
    scan = LogScan(base_offsets=base, last_offsets=last)
    queries = [(x, s) for x in [*range(-3, 75), -(2**63), 2**63 - 9] for s in (0, 1, n // 2, n - 1, n, n + 4)]
    answers = holding_all(scan, [x for x, _ in queries], [s for _, s in queries])
    assert list(answers) == [batch_holding(scan, x, s, False) for x, s in queries]


def test_a_log_whose_offsets_go_back_is_checked_as_the_former_lookup_did(monkeypatch, tmp_path: Path) -> None:
    d = _going_back(tmp_path / "back-0", 3000, (700, 2999))
    for strict in (False, True):
        assert _outcome(d, strict) == _reference(monkeypatch, d, strict)
    d = _going_back(tmp_path / "odd-0", 600, tuple(range(1, 600, 2)))
    for strict in (False, True):
        assert _outcome(d, strict) == _reference(monkeypatch, d, strict)


@pytest.mark.parametrize("engine_c", [True, False], ids=["c-engine", "python-engine"])
def test_a_long_log_whose_offsets_go_back_is_checked_in_one_pass(monkeypatch, tmp_path: Path, engine_c: bool) -> None:
    """40,000 batches, a time-index entry for each: the former lookup scanned the batches for every entry
    (minutes here); the report names the entries of the two batches that go back (entry k - 1 is batch k's)."""
    from kseg import engine

    if not engine_c:
        monkeypatch.setattr(engine, "C", None)
    elif engine.C is None:
        pytest.skip("the C engine is not built")
    d = _going_back(tmp_path / "back-0", 40_000, (12_000, 39_000))
    ((status, failed, problems, _notes),) = _outcome(d, False)
    assert status != "ok" and not failed
    kinds = sorted((p.kind, p.entry) for p in problems if p.kind.startswith(("timeindex", "index")))
    assert kinds == [(kind, k - 1) for kind in ("index-offset", "timeindex-offset") for k in (12_000, 39_000)]
    assert sum(p.kind == "offsets-not-increasing" for p in problems) >= 1


@pytest.mark.parametrize("engine_c", [True, False], ids=["c-engine", "python-engine"])
def test_a_log_whose_every_other_batch_goes_back_is_checked_in_one_pass(
    monkeypatch, tmp_path: Path, engine_c: bool
) -> None:
    """30,000 batches, every other one claiming offset 0: both indexes' entries for those batches name an
    offset no batch ends at, and each was a scan of the batches (minutes here)."""
    from kseg import engine

    if not engine_c:
        monkeypatch.setattr(engine, "C", None)
    elif engine.C is None:
        pytest.skip("the C engine is not built")
    d = _going_back(tmp_path / "odd-0", 30_000, tuple(range(1, 29_999, 2)))  # the last batch stays the end
    (seg,) = scan_partition(str(d), store=local()).segments
    res = verify_segment(d.name, seg, strict=False)
    assert res.status != "ok" and not res.failed
    for kind, file in (("index-offset", seg.index), ("timeindex-offset", seg.timeindex)):  # entry k - 1: batch k
        kept = [p.entry for p in res.problems if p.kind == kind]
        assert kept == list(range(0, 2 * KEPT_PER_KIND, 2)) and len(kept) + res.omitted[kind, file] == 14_999


def test_a_small_log_with_large_indexes_records_every_batch(monkeypatch, tmp_path: Path) -> None:
    """Where the log could not hold as many batches as its indexes have entries, recording every batch costs
    less than reading the entries' questions, and where its rows would take a few MiB at most it costs little:
    the second pass does that, with the same outcome."""
    d = _going_back(tmp_path / "back-0", 300, (100,))
    (seg,) = scan_partition(str(d), store=local()).segments
    # the sieve; a log as if too small for as many batches as entries; a log whose rows take less than 8 MiB
    cases = ((0, 26, -1, False), (48, 10**6, -1, True), (0, 26, 8 << 20, True))
    for entry_bytes, smallest, every_bytes, every in cases:
        monkeypatch.setattr(sieve, "ENTRY_BYTES", entry_bytes)
        monkeypatch.setattr(sieve, "SMALLEST_BATCH", smallest)
        monkeypatch.setattr(sieve, "EVERY_BYTES", every_bytes)
        scan = verify.scan_log(
            verify.SegmentResult("back-0", seg.name, 0, seg.log, names=seg.store.names),
            seg.log,
            verify.index_keys(verify.read_indexes(seg)),
            store=seg.store,
        )
        assert not scan.ordered and (len(scan.positions) == 300) == every
        for strict in (False, True):
            assert _outcome(d, strict) == _reference(monkeypatch, d, strict)
