"""``FileRecords.last_offset_at`` / ``last_offsets`` (a batch's last offset from its head alone)
against the full frame, ``FileRecords.batch_at(position, max_size).last_offset``.

Kafka's index check (``DumpLogSegments.dumpIndex``) is
``slice(position, maxMessageSize).batches.iterator.next().lastOffset``: the
framing of ``FileLogInputStream.nextBatch`` and the batch's header, nothing
more.  Every corpus log is probed at every batch, every index entry, points
inside batches and around the end, under several ``max_size`` bounds; then
generated logs with the damage an index check meets.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kseg.errors import CorruptRecordError, KsegError
from kseg.format.indexes import OffsetIndexView
from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE
from kseg.storage.context import ReadContext
from kseg.storage.records import FileRecords
from kseg.storage.stores.discover import store_for
from kseg.testing.legacy import build_legacy
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import CORPUS_DATA
from tests.stores import local

CORPUS_LOGS = sorted(CORPUS_DATA.glob("*/*.log"))
MAX_SIZES = (None, DEFAULT_MAX_MESSAGE_SIZE, 4096, 100, 61, 30, 26)


def via_frame(records: FileRecords, position: int, max_size: int | None):
    """What the index check read before: the whole batch framed, then its ``last_offset``."""
    try:
        batch = records.batch_at(position, max_size)
        return None if batch is None else batch.last_offset
    except KsegError as exc:
        return ("error", type(exc).__name__, exc.describe())


def via_head(records: FileRecords, position: int, max_size: int | None):
    try:
        return records.last_offset_at(position, max_size)
    except KsegError as exc:
        return ("error", type(exc).__name__, exc.describe())


def batch_starts(records: FileRecords) -> list[int]:
    starts = []
    try:
        for batch in records.batches():
            starts.append(batch.position)
    except CorruptRecordError:
        pass
    return starts


def probes(records: FileRecords, log: Path) -> list[int]:
    """Batch starts, index entries, points inside batches, and the bytes around the end."""
    starts = batch_starts(records)
    index = log.with_suffix(".index")
    indexed = []
    if index.exists():
        view = OffsetIndexView(index.read_bytes(), 0)
        indexed = [position for _, position in view.iter_entries()]
    inside = [p + d for p in starts[:200] for d in (1, 8, 12, 17, 23, 40)]
    size = records.size
    end = [p for p in range(size - 64, size + 3) if p >= 0]
    return sorted({0, *starts, *indexed, *inside, *end})


def assert_same_rule(log: Path, window: int | None = None) -> int:
    """Head and frame agree everywhere; the bulk read agrees where it answers.  Returns the probes made."""
    kw = {} if window is None else {"window": window}
    made = 0
    with (
        FileRecords(str(log), **kw, store=local()) as records,
        FileRecords(str(log), **kw, store=local()) as head_records,
    ):
        positions = [p for p in probes(records, log) if 0 <= p <= records.size]
        starts = batch_starts(records)
        for max_size in MAX_SIZES:
            expected = [via_frame(records, p, max_size) for p in positions]
            assert [via_head(head_records, p, max_size) for p in positions] == expected, (log, max_size)
            made += len(positions)
            for group in (starts, positions, starts[1:], starts[::3], positions[::-1]):
                got = head_records.last_offsets(group, max_size)
                if got is not None:
                    assert got == [via_frame(records, p, max_size) for p in group], (log, max_size)
    return made


@pytest.mark.parametrize("log", CORPUS_LOGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_head_agrees_with_the_frame_on_the_corpus(log: Path) -> None:
    assert assert_same_rule(log) > 0


@pytest.mark.parametrize("name", ["plain-v2-0", "large-v2-0", "v2-zstd-0", "v0-none-0", "v1-none-0", "v1-gzip-0"])
def test_bulk_answers_for_a_healthy_index(name: str) -> None:
    """The fast path is taken on healthy segments (v2, v0, v1) and gives each entry's batch's last offset
    (an uncompressed v0/v1 index holds the offset of a message set's last entry at its first one's position:
    Kafka's tool reports those, so the offsets differ there)."""
    log = CORPUS_DATA / name / "00000000000000000000.log"
    index = OffsetIndexView(log.with_suffix(".index").read_bytes(), 0)
    offsets, positions = index.columns(0, index.used_entries())
    assert positions
    with FileRecords(str(log), store=local()) as records:
        lasts = records.last_offsets(positions, DEFAULT_MAX_MESSAGE_SIZE)
        assert lasts == [records.last_offset_at(p) for p in positions]
        assert lasts == offsets or name.endswith("-none-0")
        assert records.last_offsets(positions) == lasts


def _v2(base_offset: int, n: int = 3, value: bytes = b"v" * 20) -> bytes:
    return build_v2_batch([RecordSpec(b"k%d" % i, value, 1000 + i) for i in range(n)], base_offset=base_offset)


def _with_length(batch: bytes, length: int) -> bytes:
    return batch[:8] + struct.pack(">i", length) + batch[12:]


def _write(tmp_path: Path, data: bytes) -> Path:
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(data)
    return log


def test_truncated_last_batch(tmp_path: Path) -> None:
    a, b, c = _v2(0), _v2(3), _v2(6)
    log = _write(tmp_path, a + b + c[:-10])
    assert assert_same_rule(log) > 0
    with FileRecords(str(log), store=local()) as records:
        assert records.last_offset_at(len(a + b)) is None
        assert records.last_offsets([0, len(a), len(a + b)]) is None  # one entry must be asked alone
        assert records.last_offsets([len(a + b), len(a), 0]) is None  # also out of order
        assert records.last_offsets([0, len(a)]) == [2, 5]


def test_length_below_the_minimum(tmp_path: Path) -> None:
    a = _v2(0)
    log = _write(tmp_path, a + _with_length(_v2(3), 13) + a)
    assert assert_same_rule(log) > 0
    with FileRecords(str(log), store=local()) as records:
        with pytest.raises(CorruptRecordError, match=r"found record size 13 smaller than minimum record overhead"):
            records.last_offset_at(len(a))
        assert records.last_offsets([0, len(a)]) is None


def test_batch_larger_than_max_size(tmp_path: Path) -> None:
    big = _v2(0, n=50, value=bytes(300))
    log = _write(tmp_path, big + _v2(50))
    assert assert_same_rule(log) > 0
    with FileRecords(str(log), store=local()) as records:
        assert records.last_offset_at(0, len(big)) == 49
        assert records.last_offset_at(0, len(big) - 1) is None
        assert records.last_offsets([0, len(big)], len(big) - 1) is None
        assert records.last_offsets([0, len(big)], len(big)) == [49, 52]


def test_batch_larger_than_the_window(tmp_path: Path) -> None:
    big = _v2(10, n=400, value=bytes(300))
    assert len(big) > 1 << 16
    log = _write(tmp_path, _v2(0) + big + _v2(410))
    assert assert_same_rule(log, window=1 << 16) > 0


def test_short_v2_batches(tmp_path: Path) -> None:
    """A v2 length below the 61-byte header: Kafka still reads a whole header (past the batch), and
    fails only where the file ends before one."""
    a = _v2(0)
    short = _with_length(_v2(3), 20)[:32]
    log = _write(tmp_path, a + short + a + short)
    assert assert_same_rule(log) > 0
    with FileRecords(str(log), store=local()) as records:
        assert records.last_offset_at(len(a)) == 5  # baseOffset + lastOffsetDelta, bytes of the next batch aside
        with pytest.raises(CorruptRecordError, match="too small for a magic v2 header"):
            records.last_offset_at(2 * len(a) + len(short))


def test_legacy_segments(tmp_path: Path) -> None:
    """v0/v1 entries: the last offset is the entry's offset field (a wrapper's: its last inner offset)."""
    v0 = build_legacy([RecordSpec(None, None, 0)], magic=0, base_offset=0)
    assert len(v0) == 26  # the smallest entry: its head ends one byte before a v2 head would
    v1 = build_legacy([RecordSpec(b"k", b"v", 5), RecordSpec(b"k", b"w", 6)], magic=1, base_offset=1, codec="gzip")
    log = _write(tmp_path, v0 + v1 + v0[:8] + b"\0\0\0\x0e" + v0[12:])
    assert assert_same_rule(log) > 0
    with FileRecords(str(log), store=local()) as records:
        assert records.last_offset_at(len(v0)) == 2
        assert records.last_offsets([0, len(v0)]) == [0, 2]
        assert records.last_offsets([0, len(v0), len(v0 + v1)]) is None  # the last head is cut by the file's end
        assert records.last_offset_at(len(v0 + v1)) == 0


def test_mixed_and_odd_magic(tmp_path: Path) -> None:
    legacy = build_legacy([RecordSpec(b"k", b"v", 5)], magic=1, base_offset=0)
    odd = bytearray(_v2(1))
    odd[16] = 0xFF  # magic -1: framed as a legacy entry, as Kafka does for any magic below 2
    log = _write(tmp_path, legacy + _v2(1) + bytes(odd) + _v2(4))
    assert assert_same_rule(log) > 0
    with FileRecords(str(log), store=local()) as records:
        assert records.last_offsets([0, len(legacy)]) is None  # v0/v1 and v2 together: asked one by one
        assert records.last_offset_at(len(legacy) + len(_v2(1))) == 1


def test_positions_outside_the_log(tmp_path: Path) -> None:
    log = _write(tmp_path, _v2(0) + _v2(3))
    size = log.stat().st_size
    with FileRecords(str(log), store=local()) as records:
        for position in (size - 17, size, size + 1):
            assert records.last_offset_at(position) is None
        assert records.last_offsets([0, size + 100]) is None
        assert records.last_offsets([-1, 0]) is None


def test_end_bounds_the_check_like_max_bytes(tmp_path: Path) -> None:
    a = _v2(0)
    log = _write(tmp_path, a + a)
    with FileRecords(str(log), end=len(a) + 30, store=local()) as records:
        assert records.last_offset_at(0) == 2
        assert records.last_offset_at(len(a)) is None
        assert records.last_offsets([0]) == [2]
        assert records.last_offsets([0, len(a)]) is None


def test_bulk_steps_aside_for_a_read_policy(tmp_path: Path) -> None:
    """``--max-rate``/``--drop-cache`` pace and evict window reads: the bulk read leaves those to them."""
    log = _write(tmp_path, _v2(0) + _v2(3))
    with FileRecords(str(log), store=local()) as records:
        assert records.last_offsets([0]) == [2]
    paced = store_for(str(log), ReadContext(max_rate=1e12))
    with FileRecords(str(log), store=paced) as records:
        assert records.last_offsets([0]) is None
        assert records.last_offset_at(0) == 2
