"""``kseg tiered``'s rows and text (:mod:`kseg.render.tiered`) for a report built by hand: no files, no store."""

from __future__ import annotations

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.tiered.read import MetadataRead
from kseg.ops.tiered.reconcile import Orphan, PartitionCheck, Problem
from kseg.ops.tiered.run import TieredReport
from kseg.ops.tiered.state import FINISHED, STARTED, RemoteSegment, TopicPartition
from kseg.ops.tiered.store import StoredObject, StoreListing
from kseg.render.tiered import _size, partition_row, rows, segment_row, summary_line, text_lines
from kseg.storage.remote_keys import parse_key
from kseg.storage.stores.discover import store_of

TID, SID, OID = "Wd7Ynb0xRJ2-8HlQ_3aZ1g", "-kq3PZs0T8ayL1x9V0fHbA", "EBAQEBAQEBAQEBAQEBAQEA"


def _segment(seg_id: str, start: int, end: int, state: str) -> RemoteSegment:
    where = "__remote_log_metadata-4@7"
    return RemoteSegment(seg_id, start, end, {0: start, 2: start + 5}, 100, state, 1, 10, 11, None, False, where, where)


def _report(store: bool) -> TieredReport:
    tp = TopicPartition("orders", TID, 3, "__remote_log_metadata-4")
    tp.segments = {SID: _segment(SID, 0, 9, FINISHED), OID: _segment(OID, 10, 19, STARTED)}
    check = PartitionCheck(tp)
    listing = None
    if store:
        key = f"s3://b/orders-{TID}/3/{0:020d}-{SID}.log"
        orphan_key = f"s3://b/orders-{TID}/3/{10:020d}-{OID}.log"
        parsed, orphan_parsed = parse_key(key), parse_key(orphan_key)
        assert parsed is not None and orphan_parsed is not None
        check.objects = {SID: [StoredObject(key, 100, parsed)], OID: [StoredObject(orphan_key, 50, orphan_parsed)]}
        check.orphans = [Orphan(OID, STARTED, check.objects[OID])]
        check.problems = [Problem("orphan", "segment ...: a copy that never finished")]
        listing = StoreListing("s3://b", store_of("s3://b"), objects=3, other_objects=1, other_bytes=9)
    report = TieredReport(MetadataRead(partitions=["__remote_log_metadata-4"]), [check], store=listing)
    return report


def test_rows_with_the_store() -> None:
    report = _report(store=True)
    out = rows(report)
    assert [r["type"] for r in out] == ["partition", "segment", "segment", "orphan", "summary"]
    assert all(r["v"] == SCHEMA_VERSION for r in out)
    part = partition_row(report.checks[0])
    assert (part["partition"], part["segments"], part["finishedSegments"], part["startOffset"], part["endOffset"]) == (
        "orders-3",
        2,
        1,
        0,
        9,
    )
    assert part["orphanObjects"] == 1 and part["orphanBytes"] == 50 and part["status"] == "problems"
    seg = segment_row(report.checks[0], report.checks[0].tp.segments[SID], report)
    assert seg["objectKey"] == f"s3://b/orders-{TID}/3/{0:020d}-{SID}.log" and seg["objects"] == 1
    assert seg["leaderEpochs"] == [{"epoch": 0, "startOffset": 0}, {"epoch": 2, "startOffset": 5}]
    assert out[-1]["orphanBytes"] == 50 and out[-1]["exitCode"] == 1 and out[-1]["store"] == "s3://b"


def test_text_without_the_store() -> None:
    report = _report(store=False)
    lines = text_lines(report)
    assert lines[0] == (
        f"orders-3 ({TID}, __remote_log_metadata-4): clean, 1 of 2 segments finished, offsets 0-9, 100 bytes"
    )
    assert lines[1] == f"  {SID} COPY_SEGMENT_FINISHED 0-9 epochs 0@0,2@5 100 bytes orders-{TID}/3/{0:020d}-{SID}.log"
    assert summary_line(report) == (
        "kseg tiered: 1 metadata partition, 0 records; 1 topic-partition, 2 remote segments; 0 problems: clean"
    )
    assert segment_row(report.checks[0], report.checks[0].tp.segments[SID], report)["objects"] is None


def test_sizes() -> None:
    assert [_size(n) for n in (0, 1023, 1024, 5 * 1024**2, 3 * 1024**5)] == [
        "0 bytes",
        "1023 bytes",
        "1.0 KiB",
        "5.0 MiB",
        "3072.0 TiB",
    ]
