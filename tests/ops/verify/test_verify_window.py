"""The compiled engine's window loop for ``verify-index``'s log pass (issue 34): ``verify_window`` checks a
window of batches per call and hands every batch a rule has more to say about to the per-batch path, the
reference the Python engine runs for every batch.  The outcome (the whole report) and the log scan
(what was read and the batches recorded for the index checks) are the same with and without it.

The partition mixes, among ~12,000 one-record batches (more bytes than the reader's 8 MiB window and
more index entries than one chunk of keys), every batch the loop gives back: a damaged CRC, a base
offset that goes back, one below the segment's base offset, a negative lastOffsetDelta, one past 2^63,
batches larger than ``--max-message-size`` and than the window, a legacy entry, leader epochs the
checkpoint judges, trailing bytes and a corrupt length."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from kseg import engine
from kseg.ops.verify import keys, verify
from kseg.storage.leader_epochs import EpochCheck, EpochEntry
from kseg.storage.partition import scan_partition
from kseg.storage.records import FileRecords
from kseg.testing.legacy import build_legacy
from kseg.testing.segment import write_segment
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import CORPUS_DATA, run_cli
from tests.ops.logdir.kafka_dir import checkpoint
from tests.stores import local

pytestmark = pytest.mark.skipif(
    engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)"
)

CORPUS = sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir())
BATCHES = 12_000
MAX_MESSAGE = 3000


def _partition(directory: Path, interval: int) -> Path:
    """The mixed partition (healthy as written: the damage comes after), an index entry every ``interval``
    bytes."""
    appends: list[list[bytes]] = []
    offset = 0
    for i in range(BATCHES):
        epoch = 0 if i < 4000 else 2 if i < 9000 else 5
        value = b"v" * (5000 if i % 3001 == 7 else 400)  # some batches past --max-message-size
        if i == 6000:  # a batch larger than the 8 MiB window
            value = b"w" * (9 << 20)
        if i == 300:
            appends.append([build_legacy([RecordSpec(b"l", b"legacy", 77)], base_offset=offset)])
        else:
            rec = RecordSpec(b"k%d" % i, value, 1_730_000_000_000 + i)
            appends.append([build_v2_batch([rec], base_offset=offset, partition_leader_epoch=epoch)])
        offset += 1
    write_segment(directory, appends, base_offset=0, index_interval_bytes=interval, magic=None)
    return directory


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Index entries every 4 KiB, as brokers write them (a log whose offsets go back is checked entry by
    entry, which costs entries times batches)."""
    return _partition(tmp_path_factory.mktemp("mixed") / "orders-0", 4096)


@pytest.fixture(scope="module")
def dense(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index entry for every batch: more keys than a chunk."""
    return _partition(tmp_path_factory.mktemp("dense") / "orders-0", 100)


def _starts(log: Path) -> list[int]:
    with FileRecords(str(log), store=local()) as records:
        return [b.position for b in records.batches()]


def _damage(directory: Path, how: str) -> None:
    log = next(directory.glob("*.log"))
    starts = _starts(log)
    raw = bytearray(log.read_bytes())
    if how == "crc":
        for k in (400, 10000):
            raw[starts[k] + 70] ^= 0x10
    elif how == "offsets":
        struct.pack_into(">q", raw, starts[500], 450)  # goes back
        struct.pack_into(">q", raw, starts[501], 2**63 - 3)  # past 2^63 with its delta
        struct.pack_into(">i", raw, starts[700] + 23, -1)  # lastOffsetDelta below 0 (inside the CRC: a crc too)
        struct.pack_into(">q", raw, starts[11000], 0)  # back to the first offset (baseOffset is outside the CRC)
    elif how == "trailing":
        raw += b"\x00" * 12  # too short to frame a batch
    elif how == "index":  # two late .index entries swapped: found not to ascend once the pass is under way
        index = next(directory.glob("*.index"))
        entries = bytearray(index.read_bytes())
        at = len(entries) - 80
        entries[at : at + 16] = entries[at + 8 : at + 16] + entries[at : at + 8]
        index.write_bytes(bytes(entries))
    elif how == "length":
        struct.pack_into(">i", raw, starts[11500] + 8, 5)  # a length below 14: the log is corrupt from here
    log.write_bytes(bytes(raw))


DAMAGE_KINDS = {
    "healthy": set(),
    "crc": {"crc"},
    "offsets": {"offsets-not-increasing", "bad-last-offset"},
    "trailing": {"trailing-bytes"},
    "length": {"corrupt-batch"},
}


def _report(directory: Path, args: list[str]) -> tuple:
    r = run_cli(["verify-index", "--format", "json", *args, str(directory)])
    return r.exit_code, r.stdout, r.stderr


def _both(monkeypatch: pytest.MonkeyPatch, directory: Path, args: list[str]) -> tuple[tuple, tuple]:
    """The report with the window loop, and the reference's (the per-batch path for every batch)."""
    fast = _report(directory, args)
    with monkeypatch.context() as m:
        m.setattr(engine, "C", None)
        reference = _report(directory, args)
    return fast, reference


@pytest.mark.parametrize(
    "how,epochs",
    [
        *[(how, "none") for how in DAMAGE_KINDS],
        ("healthy", "agreeing"),
        ("offsets", "agreeing"),
        ("crc", "disagreeing"),
    ],
)
def test_mixed_partition_report_is_the_reference(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mixed: Path, how: str, epochs: str
) -> None:
    d = tmp_path / "orders-0"
    d.mkdir()
    for f in mixed.iterdir():
        (d / f.name).write_bytes(f.read_bytes())
    _damage(d, how)
    if epochs != "none":
        entries = [(0, 0), (2, 4000), (5, 9000)] if epochs == "agreeing" else [(0, 0), (2, 3000), (3, 7000)]
        (d / "leader-epoch-checkpoint").write_text(checkpoint(entries))
    fast, reference = _both(monkeypatch, d, ["--max-message-size", str(MAX_MESSAGE)])
    assert fast == reference
    kinds = {row["kind"] for row in map(json.loads, fast[1].splitlines()) if row["type"] == "problem"}
    assert {"batch-too-large", *DAMAGE_KINDS[how]} <= kinds and fast[0] == 1


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_reports_are_the_reference(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    for args in ([], ["--strict"]):
        fast, reference = _both(monkeypatch, CORPUS_DATA / name, args)
        assert fast == reference


def _scan(seg, epochs: EpochCheck | None, every: bool) -> tuple:
    res = verify.SegmentResult("orders-0", seg.name, seg.base_offset, seg.log, names=seg.store.names)
    keys_ = None if every else verify.index_keys(verify.read_indexes(seg))
    scan = verify.scan_log(res, seg.log, keys_, MAX_MESSAGE, epochs, store=seg.store)
    found = None if epochs is None else (epochs.findings(), epochs.lo, epochs.hi, epochs.expected)
    return (
        list(scan.positions),
        list(scan.base_offsets),
        list(scan.last_offsets),
        list(scan.running_max),
        (scan.size, scan.valid_end, scan.batches, scan.ordered),
        (res.bytes, res.batches, res.last_offset, res.problems),
        found,
    )


@pytest.mark.parametrize("chunk", [1, 3, keys.CHUNK])
@pytest.mark.parametrize("how", ["healthy", "crc", "offsets", "index"])
def test_the_log_scan_is_the_reference(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, dense: Path, how: str, chunk: int
) -> None:
    """The batches recorded, the running values and the epoch check's state, with key chunks of every size
    (a chunk of one key returns to Python for every key)."""
    d = tmp_path / "orders-0"
    d.mkdir()
    for f in dense.iterdir():
        (d / f.name).write_bytes(f.read_bytes())
    _damage(d, how)
    monkeypatch.setattr(keys, "CHUNK", chunk)
    (seg,) = scan_partition(str(d), store=local()).segments
    for every in (False, True):

        def epochs() -> EpochCheck:
            return EpochCheck([EpochEntry(0, 0), EpochEntry(2, 4000), EpochEntry(4, 9000)], "checkpoint")

        fast = _scan(seg, epochs(), every)
        with monkeypatch.context() as m:
            m.setattr(engine, "C", None)
            reference = _scan(seg, epochs(), every)
        assert fast == reference
        assert fast[4][2] >= BATCHES - 1  # every batch read (the legacy entry is one too)
