"""salvage's reading with the compiled engine (issue 37): ``found_items`` builds the :class:`Found` of every valid v2
batch of scan's lists, handing the rest (a batch object, a CRC that fails, a last offset past int64) to the Python
rule; what ``read_segment`` yields -- every batch found and every damaged range -- is the same with either engine,
on every corpus partition and on mixed logs damaged several ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from kseg import engine
from kseg.ops.salvage.found import read_segment
from kseg.storage.records import FileRecords
from kseg.testing.writer import RecordSpec, build_v2_batch
from tests.conftest import CORPUS_DATA
from tests.ops.rebuild.test_recovery_engine import _mixed
from tests.stores import local

pytestmark = pytest.mark.skipif(
    engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)"
)

LOGS = sorted(str(p) for p in CORPUS_DATA.glob("*/*.log"))


def _events(path: str) -> list:
    with FileRecords(path, store=local()) as records:
        return [list(e) if isinstance(e, list) else e for e in read_segment(records)]


def _both(monkeypatch: pytest.MonkeyPatch, path: str) -> list:
    fast = _events(path)
    with monkeypatch.context() as m:
        m.setattr(engine, "C", None)
        assert _events(path) == fast
    return fast


@pytest.mark.parametrize("log", LOGS, ids=[Path(p).parent.name + "/" + Path(p).name for p in LOGS])
def test_every_corpus_log_reads_the_same(monkeypatch, log: str) -> None:
    _both(monkeypatch, log)


def test_a_damaged_mixed_log_reads_the_same(monkeypatch, tmp_path: Path) -> None:
    data = bytearray(_mixed(3000, 5, "crc"))
    data[len(data) // 3 : len(data) // 3 + 4096] = bytes(4096)  # a zeroed page
    garbage = b"\x02garbage" * 50
    at = 2 * len(data) // 3
    data[at:at] = garbage  # bytes inserted between (or inside) batches
    past = build_v2_batch([RecordSpec(b"k", b"v", 1)] * 2, base_offset=(1 << 63) - 1)  # last offset past int64
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data) + past + build_v2_batch([RecordSpec(b"k", b"w", 2)], base_offset=10**6))
    events = _both(monkeypatch, str(path))
    assert sum(len(e) for e in events if isinstance(e, list)) > 2500
    assert sum(1 for e in events if not isinstance(e, list)) >= 2
