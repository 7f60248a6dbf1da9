"""kseg diff's rows and text (:mod:`kseg.render.diff`): the text is rendered from the rows alone."""

from __future__ import annotations

import json

from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.diff.diff import DIVERGENT, BatchKey, DiffResult, Range, Replica
from kseg.render.diff import rows, text_lines
from kseg.storage.leader_epochs import EpochEntry
from kseg.storage.partition import Partition
from tests.stores import local


def _divergent() -> DiffResult:
    before = BatchKey(0, 4, 1, 111, 5, 2, True, "00000000000000000000", 0)
    a_at = BatchKey(5, 9, 1, 222, 5, 2, True, "00000000000000000000", 400)
    b_at = BatchKey(5, 7, 2, 333, 3, 2, False, "00000000000000000000", 400)
    a = Replica(0, Partition("/b1/data/t-0", store=local()), log_end=10, batches=2, records=10, status=DIVERGENT)
    a.epochs = [EpochEntry(0, 0), EpochEntry(1, 3)]
    a.before_divergence, a.at_divergence = before, a_at
    a.only_here = [Range(a_at)]
    a.truncate_to, a.lost_records = 5, 5
    b = Replica(1, Partition("/b2/data/t-0", store=local()), log_end=8, batches=2, records=8, status=DIVERGENT, lag=2)
    b.epochs_error = "line 2: not a number"
    b.before_divergence, b.at_divergence = before, b_at
    res = DiffResult("t-0", [a, b], status=DIVERGENT, first_divergent_offset=5, leader=1)
    res.differences = ["lastOffset", "partitionLeaderEpoch", "crc", "count", "isValid"]
    return res


def test_rows_replicas_then_the_summary() -> None:
    out = rows(_divergent())
    assert [r["type"] for r in out] == ["replica", "replica", "summary"]
    assert all(r["v"] == SCHEMA_VERSION and r["partition"] == "t-0" for r in out)
    assert out[0]["batchAtDivergence"] == {
        "segment": "00000000000000000000",
        "position": 400,
        "baseOffset": 5,
        "lastOffset": 9,
        "partitionLeaderEpoch": 1,
        "crc": 222,
        "count": 5,
        "magic": 2,
        "isValid": True,
    }
    assert out[0]["leaderEpochs"] == [{"epoch": 0, "startOffset": 0}, {"epoch": 1, "startOffset": 3}]
    assert (out[0]["onlyHereRecords"], out[1]["leaderEpochs"], out[1]["lag"]) == (5, None, 2)
    assert {k: out[2][k] for k in ("replicas", "status", "firstDivergentOffset", "leader")} == {
        "replicas": 2,
        "status": "divergent",
        "firstDivergentOffset": 5,
        "leader": 1,
    }


def test_text_from_rows_even_after_a_json_round_trip() -> None:
    """--spark sends rows back as JSON: the text must come from them alone."""
    set_rows = json.loads(json.dumps(rows(_divergent())))
    assert text_lines(set_rows) == [
        "t-0: 2 replicas, DIVERGENT from offset 5",
        "  replica 0 /b1/data/t-0: log 0..10, 10 records in 2 batches, divergent",
        "    leader-epoch-checkpoint: epoch 0 from 0, epoch 1 from 3",
        "    before 5: batch 0..4 epoch 1 crc 111 count 5",
        "    at 5:     batch 5..9 epoch 1 crc 222 count 5 (checkpoint: epoch 1)",
        "    only here: offsets 5..9 (5 records in 1 batch)",
        "  replica 1 /b2/data/t-0: log 0..8, 8 records in 2 batches, divergent, its log ends 2 offsets before the "
        "longest",
        "    leader-epoch-checkpoint unreadable: line 2: not a number",
        "    before 5: batch 0..4 epoch 1 crc 111 count 5",
        "    at 5:     batch 5..7 epoch 2 crc 333 count 3 (CRC does not hold)",
        "  first divergent offset 5: lastOffset, partitionLeaderEpoch, crc, count, isValid differ",
        "  following replica 1 (highest leader epoch), replica 0 truncates to offset 5 (OffsetsForLeaderEpoch) "
        "and loses 5 records (5..9)",
    ]


def test_identical_and_damaged_copy_texts() -> None:
    a = Replica(0, Partition("/b1/data/t-0", store=local()), log_end=3, batches=1, records=3)
    res = DiffResult("t-0", [a])
    assert text_lines(rows(res)) == [
        "t-0: 1 replicas, identical",
        "  replica 0 /b1/data/t-0: log 0..3, 3 records in 1 batches, identical",
    ]
    res.differences = ["isValid"]
    res.first_divergent_offset = 2
    assert text_lines(rows(res))[-1] == (
        "  first divergent offset 2: isValid differ (the stored CRCs agree: a copy damaged on disk, not different data)"
    )
