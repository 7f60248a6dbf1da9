"""kseg compaction's rows and text (:mod:`kseg.render.compaction`) for counts built by hand."""

from __future__ import annotations

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.compaction.compaction import CompactionReport, SegmentTombstones
from kseg.render.compaction import overdue, segment_row, summary_row, text_lines
from kseg.storage.partition import Partition, Segment
from tests.stores import local

DAY = 24 * 60 * 60 * 1000
AT = 1730000000000 + 3 * DAY


def _report() -> CompactionReport:
    old = SegmentTombstones(Segment(0, "/d/t-0/00000000000000000000.log", store=local()))
    old.tombstones, old.tombstone_batches, old.oldest_tombstone, old.newest_tombstone = (
        3,
        2,
        1730000000000,
        1730000001000,
    )
    old.control_batches, old.commit_markers, old.abort_markers, old.oldest_control = 1, 1, 0, 1730000000500
    old.note_batch(None, AT)
    old.note_batch(None, AT)
    old.note_batch(None, AT)
    cleaned = SegmentTombstones(Segment(50, "/d/t-0/00000000000000000050.log", store=local()))
    cleaned.tombstones, cleaned.tombstone_batches, cleaned.oldest_tombstone = 1, 1, AT - 1000
    cleaned.note_batch(AT - 10, AT)
    empty = SegmentTombstones(Segment(90, "/d/t-0/00000000000000000090.log", store=local()))
    return CompactionReport(Partition("/d/t-0", store=local()), AT, DAY, [old, cleaned, empty])


def test_overdue_is_old_without_a_horizon() -> None:
    r = _report()
    assert [overdue(s, r) for s in r.segments] == [True, False, False]


def test_segment_and_summary_rows() -> None:
    r = _report()
    row = segment_row(r, r.segments[0])
    assert row["type"] == "segment" and row["v"] == SCHEMA_VERSION and row["partition"] == "t-0"
    assert {k: row[k] for k in ("tombstones", "oldestTombstoneTimestamp", "commitMarkers", "withoutDeleteHorizon")} == {
        "tombstones": 3,
        "oldestTombstoneTimestamp": 1730000000000,
        "commitMarkers": 1,
        "withoutDeleteHorizon": 3,
    }
    assert (row["olderThanRetentionWithoutHorizon"], row["read"]) == (True, None)
    summary = summary_row(r)
    assert {k: v for k, v in summary.items() if k not in ("logDir",)} == {
        "type": "summary",
        "v": SCHEMA_VERSION,
        "partition": "t-0",
        "at": AT,
        "deleteRetentionMs": DAY,
        "segments": 3,
        "tombstones": 4,
        "controlBatches": 1,
        "legacyTombstones": 0,
        "pastDeleteHorizon": 1,
        "withoutDeleteHorizon": 3,
        "segmentsOlderThanRetentionWithoutHorizon": 1,
        "segmentsNotReadToEnd": 0,
        "logStartOffset": None,
        "logStartOffsetFile": None,
        "cleanerCheckpoint": None,
        "cleanerCheckpointFile": None,
        "firstDirtyOffset": None,
        "notes": [],
    }


def test_text_lines() -> None:
    assert text_lines(_report()) == [
        "t-0: at 2024-10-30T03:33:20.000Z, delete.retention.ms 86400000 (1d)",
        "  00000000000000000000: 3 tombstones in 2 batches (oldest 2024-10-27T03:33:20.000Z, 3d old); "
        "1 control batch (1 COMMIT, 0 ABORT; oldest 2024-10-27T03:33:20.500Z, 2d 23h 59m 59s old)",
        "    delete horizon: 0 batches carry one, 3 without (the next cleaning sets one at its time + "
        "delete.retention.ms)",
        "    older than delete.retention.ms and never given a horizon: if the topic is compacted, the cleaner has "
        "not cleaned this segment (min.cleanable.dirty.ratio, is it running?)",
        "  00000000000000000050: 1 tombstone in 1 batch (oldest 2024-10-30T03:33:19.000Z, 1s old)",
        "    delete horizon: 1 batch carry one (2024-10-30T03:33:19.990Z..2024-10-30T03:33:19.990Z; 1 past it: the "
        "next cleaning removes them), 0 without (the next cleaning sets one at its time + delete.retention.ms)",
        "  00000000000000000090: no tombstones, no control batches",
        "  total: 4 tombstones, 1 control batch, 1 batch past their delete horizon, 3 without one",
    ]
