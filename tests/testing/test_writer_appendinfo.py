"""``kseg.testing.appendinfo``: the values each Kafka version passed to ``LogSegment.append``."""

from __future__ import annotations

import pytest

from kseg.testing.appendinfo import AppendInfo, cleaner_append_info, leader_append_info
from kseg.testing.framing import iter_batch_bytes
from kseg.testing.legacy import build_legacy
from kseg.testing.v2 import RecordSpec, build_empty_v2_batch, build_v2_batch

TS = 1_730_000_000_000
RECS = [RecordSpec(b"k", b"v", TS + t) for t in (3, 9, 9, 1)]  # offsets 10..13; the max first at 11


@pytest.mark.parametrize(
    "kafka,shallow", [("2.0", 11), ("2.8", 11), ("3.4", 11), ("3.6", 11), ("3.7", 13), ("3.8", 13), ("3.9", 13)]
)
def test_uncompressed_create_time_v2(kafka: str, shallow: int) -> None:
    """assignOffsetsNonCompressed: the first record holding the max timestamp up to 3.6, the last offset after."""
    raw = build_v2_batch(RECS, base_offset=10)
    assert leader_append_info([raw], kafka) == AppendInfo(13, TS + 9, shallow)


@pytest.mark.parametrize("kafka", ["2.8", "3.9"])
def test_compressed_and_log_append_time_name_the_last_offset(kafka: str) -> None:
    gz = build_v2_batch(RECS, base_offset=10, codec="gzip")
    assert leader_append_info([gz], kafka) == AppendInfo(13, TS + 9, 13)
    lat = build_v2_batch(RECS, base_offset=10, timestamp_type="LogAppendTime", log_append_time=TS + 100)
    assert leader_append_info([lat], kafka) == AppendInfo(13, TS + 100, 13)


def test_v1_uncompressed_names_an_entry() -> None:
    entries = list(iter_batch_bytes(build_legacy(RECS, magic=1, base_offset=10)))
    assert leader_append_info(entries, "2.8") == AppendInfo(13, TS + 9, 11)
    lat = list(
        iter_batch_bytes(
            build_legacy(RECS, magic=1, base_offset=10, timestamp_type="LogAppendTime", log_append_time=TS + 100)
        )
    )
    assert leader_append_info(lat, "2.8") == AppendInfo(13, TS + 100, 10)  # initialOffset


def test_cleaner_max_offset_is_the_largest_kept_record() -> None:
    kept = [RecordSpec(b"k", b"v", TS + i, offset_delta=d) for i, d in enumerate((0, 4))]
    rebuilt = build_v2_batch(kept, base_offset=20, last_offset_delta=7)  # overrideLastOffset: 27
    empty = build_empty_v2_batch(
        base_offset=28, last_offset=30, timestamp=TS, producer_id=1, producer_epoch=0, base_sequence=0
    )
    assert cleaner_append_info([rebuilt]) == AppendInfo(24, TS + 1, 27)
    assert cleaner_append_info([rebuilt, empty]) == AppendInfo(30, TS + 1, 27)
    assert cleaner_append_info([rebuilt], rewritten=[False]) == AppendInfo(27, TS + 1, 27)
