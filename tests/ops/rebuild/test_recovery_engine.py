"""Kafka's recovery fed a list of batches per engine call (issue 37): ``recover_items`` feeds every batch the
recovery rule (:class:`~kseg.ops.rebuild.recovery.Recovery`) would feed without a question and hands the rest
back to the Python rule, the reference the Python engine runs for every batch.  What recovery makes -- the
rebuilt ``.index``, ``.timeindex`` and ``.txnindex``, how far the log is valid, why it stopped or failed --
is the same with either engine, on every corpus partition and on logs mixing every batch the engine hands
back: batches of producers inside and outside transactions, end markers, compressed and legacy entries,
timestamps that go back, a damaged CRC, offsets that go back or overflow, an index that fills up."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from kseg import engine
from kseg.ops.rebuild.rebuild import recover_partition, resolve
from kseg.testing.writer import RecordSpec, build_control_batch, build_legacy, build_v2_batch
from tests.conftest import CORPUS_DATA

pytestmark = pytest.mark.skipif(
    engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)"
)

CORPUS = sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir())
BASE_TS = 1_730_000_000_000


def _outcome(directory: Path, **kw) -> list[tuple]:
    (target,) = resolve([str(directory)], [])
    out = []
    for rec in recover_partition(target, **kw):
        out.append(
            (
                rec.segment.name,
                rec.log_size,
                rec.valid_bytes,
                rec.batches,
                rec.last_position,
                list(rec.index_offsets),
                list(rec.index_positions),
                list(rec.time_timestamps),
                list(rec.time_offsets),
                list(rec.txn_entries),
                None if rec.stop is None else (rec.stop.message, rec.stop.position),
                None if rec.failure is None else (rec.failure.message, rec.failure.position),
                list(rec.notes),
            )
        )
    return out


def _both(monkeypatch: pytest.MonkeyPatch, directory: Path, **kw) -> list[tuple]:
    """The outcome with the compiled engine, checked equal to the Python rule's."""
    fast = _outcome(directory, **kw)
    with monkeypatch.context() as m:
        m.setattr(engine, "C", None)
        reference = _outcome(directory, **kw)
    assert fast == reference
    return fast


@pytest.mark.parametrize("name", CORPUS)
@pytest.mark.parametrize("interval", [0, 1, 4096, 1 << 30])
def test_every_corpus_partition_recovers_the_same(monkeypatch, name: str, interval: int) -> None:
    _both(monkeypatch, CORPUS_DATA / name, index_interval_bytes=interval)


@pytest.mark.parametrize("name", ["plain-v2-0", "txn-v2-0"])
def test_a_full_index_fails_the_same(monkeypatch, tmp_path: Path, name: str) -> None:
    if not (CORPUS_DATA / name).is_dir():
        pytest.skip(f"no corpus partition {name}")
    shutil.copytree(CORPUS_DATA / name, tmp_path / name)
    (outcome, *_) = _both(monkeypatch, tmp_path / name, index_interval_bytes=0, max_index_size=8 * 3)
    assert outcome[11] is not None and "full" in outcome[11][0]


def _mixed(n: int, seed: int, ending: str) -> bytes:
    """``n`` appends mixing every kind of batch recovery's engine path hands back, then ``ending``."""
    rnd = random.Random(seed)
    out, offset, open_txn = [], 0, False
    for i in range(n):
        kind = rnd.choices(["plain", "idempotent", "txn", "compressed", "legacy"], [60, 15, 10, 10, 5])[0]
        ts = BASE_TS + rnd.randint(-50_000, 50_000)
        records = [RecordSpec(b"k%d" % i, b"v" * rnd.randint(0, 300), ts + j) for j in range(rnd.randint(1, 3))]
        if open_txn and (kind != "txn" or rnd.random() < 0.3):
            marker = rnd.choice(["COMMIT", "ABORT"])
            out.append(
                build_control_batch(
                    marker, base_offset=offset, producer_id=9, producer_epoch=0, coordinator_epoch=1, timestamp=ts
                )
            )
            offset, open_txn = offset + 1, False
        if kind == "legacy":
            out.append(build_legacy(records[:1], magic=1, base_offset=offset))
            offset += 1
            continue
        kw: dict = {}
        if kind == "idempotent":
            kw = {"producer_id": 7, "producer_epoch": 0, "base_sequence": i}
        elif kind == "txn":
            kw = {"producer_id": 9, "producer_epoch": 0, "transactional": True}
            open_txn = True
        elif kind == "compressed":
            kw = {"codec": "gzip"}
        out.append(build_v2_batch(records, base_offset=offset, **kw))
        offset += len(records)
    if ending == "crc":
        bad = bytearray(build_v2_batch([RecordSpec(b"x", b"y", BASE_TS)], base_offset=offset))
        bad[-1] ^= 0xFF
        out.append(bytes(bad))
        out.append(build_v2_batch([RecordSpec(b"x", b"z", BASE_TS)], base_offset=offset + 1))
    elif ending == "back":
        out.append(build_v2_batch([RecordSpec(b"x", b"y", BASE_TS)], base_offset=offset // 2))
    elif ending == "overflow":
        out.append(build_v2_batch([RecordSpec(b"x", b"y", BASE_TS)], base_offset=offset + (1 << 31)))
    elif ending == "partial":
        out.append(build_v2_batch([RecordSpec(b"x", b"y" * 50, BASE_TS)], base_offset=offset)[:40])
    return b"".join(out)


@pytest.mark.parametrize("ending", ["none", "crc", "back", "overflow", "partial"])
@pytest.mark.parametrize("interval", [0, 700, 4096])
def test_mixed_logs_recover_the_same(monkeypatch, tmp_path: Path, ending: str, interval: int) -> None:
    """~3,000 appends, past one engine call's 4,096 index rows at interval 0."""
    (tmp_path / "00000000000000000000.log").write_bytes(_mixed(3000, hash((ending, interval)) & 0xFFFF, ending))
    (outcome,) = _both(monkeypatch, tmp_path, index_interval_bytes=interval)
    assert outcome[3] > 2900  # batches recovered
    if interval == 0:
        assert len(outcome[5]) > 2900  # an entry a batch: several engine calls' rows
    assert (outcome[10] is not None) == (ending == "crc")  # recovery stopped at the invalid batch
    if ending == "overflow" or (ending == "back" and interval == 0):
        assert outcome[11] is not None  # and failed where Kafka's does
