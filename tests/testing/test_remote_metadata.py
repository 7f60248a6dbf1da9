"""``kseg.testing.remote_metadata`` writes what Kafka's ``RemoteLogMetadataSerde`` writes: the two values of
tests/data/kafka4x/data/__remote_log_metadata-0 (serialized by Kafka 4.0's own classes, MANIFEST.md) byte for
byte, and every record kind reads back through kseg's decoder (``--remote-log-metadata-decoder``'s rule)."""

from __future__ import annotations

from pathlib import Path

from kseg.decoders.remote import read_record, remote_log_metadata_text
from kseg.format.rsm_custom import parse_custom_metadata
from kseg.storage.records import FileRecords
from kseg.testing import remote_metadata as rm
from tests.stores import local

KAFKA = Path(__file__).resolve().parents[1] / "data" / "kafka4x" / "data" / "__remote_log_metadata-0"
SEG = rm.SegmentId("AQIDBAUGBwgJCgsMDQ4PEA", "t", 0, "ERITFBUWFxgZGhscHR4fIA")


def _values(directory: Path) -> list[bytes]:
    with FileRecords(str(directory / "00000000000000000000.log"), store=local()) as records:
        return [bytes(r.value) for b in records.batches() for r in b.records(1 << 20)]


def test_byte_identical_to_kafkas_serde() -> None:
    assert _values(KAFKA) == [
        rm.segment_metadata(SEG, 0, 99, state=rm.COPY_SEGMENT_FINISHED, txn_index_empty=True),
        rm.segment_metadata(SEG, 0, 99, state=rm.COPY_SEGMENT_FINISHED),
    ]


def test_every_kind_reads_back(tmp_path: Path) -> None:
    custom = rm.aiven_custom_metadata(remote_size=-3, object_prefix="p/", object_key="t-x/0/k")
    values = [
        rm.segment_metadata(SEG, 5, 9, epochs={2: 5, 3: 7}, custom=custom),
        rm.segment_update(SEG, rm.DELETE_SEGMENT_STARTED, broker=4),
        rm.partition_delete("AQIDBAUGBwgJCgsMDQ4PEA", "t", 0, rm.DELETE_PARTITION_STARTED),
    ]
    rm.write_metadata_log(tmp_path / "__remote_log_metadata-0", values)
    assert _values(tmp_path / "__remote_log_metadata-0") == values
    names = [read_record(v)[0] for v in values]
    assert names == [
        "RemoteLogSegmentMetadataRecord",
        "RemoteLogSegmentMetadataUpdateRecord",
        "RemotePartitionDeleteMetadataRecord",
    ]
    first = read_record(values[0])[1]
    assert [(e["leaderEpoch"], e["offset"]) for e in first["segmentLeaderEpochs"]] == [(2, 5), (3, 7)]
    assert parse_custom_metadata(first["customMetadata"])[1:4] == (-3, "p/", "t-x/0/k")
    assert "state=DELETE_SEGMENT_STARTED" in remote_log_metadata_text(values[1])
    assert rm.aiven_custom_metadata() == b""
