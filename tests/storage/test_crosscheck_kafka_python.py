"""Cross-check the reader against kafka-python's independent ``kafka.record`` (test-only dependency).

For every corpus segment that kafka-python can read, both implementations
must agree on every record's offset, timestamp, key, value and headers.
"""

from __future__ import annotations

import pytest

from kseg.storage.records import FileRecords
from tests.conftest import CORPUS_DATA
from tests.stores import local

kafka_record = pytest.importorskip("kafka.record", reason="kafka-python is a test extra")

# Damaged on purpose; kafka-python raises on some of them, kseg's behaviour there is tested elsewhere.
DAMAGED = {"corrupt-compressed-0", "corrupt-garbage-tail-0", "corrupt-truncated-0", "corrupt-crc-0"}
SEGMENTS = sorted(p for p in CORPUS_DATA.glob("*/*.log") if p.parent.name not in DAMAGED and p.stat().st_size > 0)


def _kseg_records(path):
    out = []
    with FileRecords(str(path), store=local()) as records:
        for batch in records.batches():
            for rec in batch.records(64 << 20):
                if batch.magic >= 2:
                    offset, ts, _, key, value, headers = rec
                    hdrs = [(k.decode("utf-8", "replace"), v) for k, v in headers]
                else:
                    offset, ts, key, value = rec[:4]
                    hdrs = []
                out.append(
                    (offset, ts, None if key is None else bytes(key), None if value is None else bytes(value), hdrs)
                )
    return out


def _kafka_python_records(path):
    data = path.read_bytes()
    memory = kafka_record.MemoryRecords(data)
    out = []
    while True:
        batch = memory.next_batch()
        if batch is None:
            break
        for r in batch:
            hdrs = [(k, v) for k, v in (r.headers or [])]
            # kafka-python reports no timestamp (v0) as None where Kafka uses -1
            out.append((r.offset, -1 if r.timestamp is None else r.timestamp, r.key, r.value, hdrs))
    return out


@pytest.mark.parametrize("path", SEGMENTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_same_records_as_kafka_python(path) -> None:
    ours = _kseg_records(path)
    theirs = _kafka_python_records(path)
    assert len(ours) == len(theirs) > 0
    for a, b in zip(ours, theirs, strict=True):
        assert a[0] == b[0], (a, b)
        assert a[2:] == b[2:], (a[0], a, b)
        if a[1] != b[1]:
            # kafka-python does not substitute the batch's LogAppendTime for v2 records
            assert "logappendtime" in path.parent.name, (a, b)
