"""``kseg.ops.verify.index``: what the ``.index`` and ``.timeindex`` checks share, on real segment files."""

from __future__ import annotations

from kseg.ops.verify.index import Records
from kseg.testing.writer import RecordSpec, build_v2_batch
from tests.stores import local


def _log(tmp_path, timestamps: list[int]) -> str:
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(build_v2_batch([RecordSpec(b"k", b"v", ts) for ts in timestamps], base_offset=0))
    return str(log)


def test_record_max_timestamp(tmp_path) -> None:
    """``DumpLogSegments.dumpTimeIndex``'s max starts at -1: records all older say -1."""
    records = Records(_log(tmp_path, [1000, 1005, 1002]), local())
    try:
        assert records.max_timestamp(0) == 1005
    finally:
        records.close()
    older = tmp_path / "older"
    older.mkdir()
    records = Records(_log(older, [-7, -5]), local())
    try:
        assert records.max_timestamp(0) == -1
    finally:
        records.close()


def test_record_stats_at_an_offset(tmp_path) -> None:
    records = Records(_log(tmp_path, [1000, 1005, 1002]), local())
    try:
        assert tuple(records.stats(0, 1)) == (False, 1005, True)  # not the last record; the first at the max
        assert tuple(records.stats(0, 2)) == (True, 1002, False)  # the last record; an earlier one is larger
        assert records.stats(0, 9).timestamp_at is None
    finally:
        records.close()
