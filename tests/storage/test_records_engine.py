"""``FileRecords.scan`` with the compiled engine's fast path and without it (issue 12).

The same items (positions, sizes, header tuples, CRC verdicts), the same
lists (never spanning two windows, at most ``SCAN_LIST``), the same stop and
the same error, on every corpus log, on a file of many small batches that
crosses windows, and on damaged copies (lengths below 14, batches running
past the end, flipped CRCs, truncation).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kseg import engine
from kseg.errors import KsegError
from kseg.storage import records as records_mod
from kseg.storage.records import FileRecords
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import CORPUS_DATA
from tests.stores import local

pytestmark = pytest.mark.skipif(
    engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)"
)


def scanned(path: Path, use_c: bool, monkeypatch) -> tuple:
    monkeypatch.setattr(engine, "C", engine.C if use_c else None)
    lists, error = [], None
    try:
        with FileRecords(str(path), window=1 << 16, store=local()) as f:
            for items in f.scan():
                lists.append(
                    [(p, s, h, v if h is not None else (type(v).__name__, v.position)) for p, s, h, v in items]
                )
    except KsegError as exc:
        error = exc.describe()
    return lists, error


def same(path: Path, monkeypatch) -> None:
    c = engine.C
    try:
        assert scanned(path, True, monkeypatch) == scanned(path, False, monkeypatch)
    finally:
        monkeypatch.setattr(engine, "C", c)


def test_the_engine_computes_crc32c() -> None:
    """CRC-32C's check value; the hardware path (three streams, blocks of 3 x 8 KiB and 3 x 256 bytes, then
    8 and 1 bytes) against the slicing-by-8 table and the crc32c package, at every alignment and length class."""
    from kseg.format import crc

    package = crc._load_crc32c()  # the crc32c package's, which runs without the engine
    for fn in (engine.C.crc32c, engine.C.crc32c_table):
        assert fn(b"123456789") == 0xE3069283
        assert fn(b"") == 0
    rng = random.Random(5)
    data = rng.randbytes(200_000)
    for _ in range(400):
        start = rng.randrange(0, 16)
        n = rng.choice([rng.randrange(0, 800), rng.randrange(760, 24_700), rng.randrange(24_500, len(data) - 16)])
        piece, seed = data[start : start + n], rng.randrange(2**32)
        assert engine.C.crc32c(piece, seed) == engine.C.crc32c_table(piece, seed) == package(piece, seed), (start, n)


def test_corpus_logs_scan_the_same(monkeypatch) -> None:
    logs = sorted(CORPUS_DATA.glob("*/*.log"))
    assert logs
    for log in logs:
        same(log, monkeypatch)


def many_batches(tmp_path: Path) -> Path:
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as f:
        for i in range(1500):  # ~130 KB: crosses two 64 KiB windows, lists of SCAN_LIST
            f.write(build_v2_batch([RecordSpec(b"k", b"v" * (i % 40), 1000 + i)], base_offset=i))
    return path


def test_many_small_batches_across_windows(tmp_path: Path, monkeypatch) -> None:
    same(many_batches(tmp_path), monkeypatch)


def test_damaged_files_scan_the_same(tmp_path: Path, monkeypatch) -> None:
    src = many_batches(tmp_path).read_bytes()
    rng = random.Random(7)
    sizes = [len(build_v2_batch([RecordSpec(b"k", b"v" * (i % 40), 1000 + i)], base_offset=i)) for i in range(50)]
    starts = [sum(sizes[:i]) for i in range(50)]
    cases = []
    for length in (0, 13, 14, 48, 60, -1, 2**31 - 1, 1000):
        b = bytearray(src)
        at = rng.choice(starts)
        b[at + 8 : at + 12] = length.to_bytes(4, "big", signed=True)
        cases.append(bytes(b))
    for _ in range(10):
        b = bytearray(src)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        cases.append(bytes(b))
        cases.append(src[: rng.randrange(len(src))])
    b = bytearray(src)
    b[starts[3] + 16] = 1  # a legacy magic in the middle
    cases.append(bytes(b))
    for i, data in enumerate(cases):
        path = tmp_path / f"case{i}" / "00000000000000000000.log"
        path.parent.mkdir()
        path.write_bytes(data)
        same(path, monkeypatch)


def test_scan_list_bound_holds(monkeypatch, tmp_path: Path) -> None:
    lists, _ = scanned(many_batches(tmp_path), True, monkeypatch)
    assert max(len(x) for x in lists) == records_mod.SCAN_LIST
