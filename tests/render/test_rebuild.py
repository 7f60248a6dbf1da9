"""rebuild-index's lines (:mod:`kseg.render.rebuild`): a segment's recovery and each index file's outcome."""

from __future__ import annotations

from kseg.errors import CorruptRecordError
from kseg.ops.rebuild.recovered import Recovered
from kseg.ops.rebuild.write import DIFFERS, KEPT, OLDER_RULE, REFUSED, SAME, WRITTEN, FileOutcome
from kseg.render.rebuild import file_line, segment_line
from kseg.storage.partition import Segment
from tests.stores import local

LOG = "d/t-0/00000000000000000000.log"


def test_segment_lines_valid_and_truncated() -> None:
    rec = Recovered(Segment(0, LOG, store=local()), log=LOG, log_size=4096, valid_bytes=4096, batches=1)
    assert segment_line(rec) == f"{LOG}: 1 batch, 4096 bytes, all valid"
    rec.valid_bytes, rec.batches = 3000, 2
    assert segment_line(rec) == (
        f"{LOG}: 2 valid batches, 3000 of 4096 bytes; a partial batch at byte 3000 runs past the end of the file; "
        "Kafka's recovery would truncate 1096 bytes (kseg leaves the log as it is)"
    )
    rec.stop = CorruptRecordError("Record is corrupt (stored crc = 1, computed crc = 2)", position=3000)
    assert segment_line(rec) == (
        f"{LOG}: 2 valid batches, 3000 of 4096 bytes; recovery stops at byte 3000: Record is corrupt "
        "(stored crc = 1, computed crc = 2); Kafka's recovery would truncate 1096 bytes (kseg leaves the log as it is)"
    )


def test_file_lines_for_each_outcome() -> None:
    index = "d/t-0/00000000000000000000.index"

    def line(status: str, **kw) -> str:
        return file_line(FileOutcome(".index", index, 3, status, **kw))

    assert line(SAME) == f"  {index}: 3 entries: same as the existing file"
    assert line(WRITTEN) == f"  {index}: 3 entries: written"
    assert line(DIFFERS, existing_entries=4, difference="entry 2 differs") == (
        f"  {index}: 3 entries: differs from the existing file (4 entries): entry 2 differs"
    )
    older = {"existing_entries": 2, "difference": "1 entry fewer", "rule": "Kafka 2.x's per-batch rule"}
    assert line(OLDER_RULE, **older) == (
        f"  {index}: 3 entries: the existing file (2 entries) differs (1 entry fewer) but is valid: "
        "an older broker's rule (see the notes); recovery would rewrite it with the current rule; not a problem"
    )
    assert line(KEPT, **older) == (
        f"  {index}: 3 entries: kept: the existing file (2 entries) differs (1 entry fewer) but is valid: "
        "an older broker's rule (see the notes); --force replaces it with recovery's"
    )
    assert line(REFUSED, difference="entry 0 differs") == (
        f"  {index}: 3 entries: not written: the existing file differs (entry 0 differs); give --force to replace it"
    )
    assert file_line(FileOutcome(".index", index, 1, SAME, existing_entries=1, interval=4096)) == (
        f"  {index}: 1 entry: same (index.interval.bytes ≤ 4096): what recovery writes at that interval "
        "(1 entry at the interval given)"
    )
