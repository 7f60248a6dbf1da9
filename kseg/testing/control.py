"""Control batches (transaction markers, KRaft control records) as Kafka writes them.

Schema (``ControlRecordType.recordKey``, ``EndTransactionMarker``; big-endian)::

    key   = version int16 (0) | type int16 (0 ABORT, 1 COMMIT, 2 LEADER_CHANGE,
            3 SNAPSHOT_HEADER, 4 SNAPSHOT_FOOTER, 5 KRAFT_VERSION, 6 KRAFT_VOTERS)
    value = version int16 (0) | coordinatorEpoch int32       (end-txn markers)

A control batch is a magic-2 batch with attribute 0x20 (plus 0x10 for
end-transaction markers) holding one record at offset delta 0, written by
``MemoryRecordsBuilder.appendControlRecord`` with CreateTime and
baseSequence -1 (``MemoryRecords.withEndTransactionMarker``,
``createKraftControlRecordBuilder``).
"""

from __future__ import annotations

import struct

from kseg.errors import KsegError
from kseg.testing.v2 import RecordSpec, build_v2_batch

# Control record types (ControlRecordType ids).
CONTROL_TYPES = {
    "ABORT": 0,
    "COMMIT": 1,
    "LEADER_CHANGE": 2,
    "SNAPSHOT_HEADER": 3,
    "SNAPSHOT_FOOTER": 4,
    "KRAFT_VERSION": 5,
    "KRAFT_VOTERS": 6,
}

# Control record key: h version (0) | h type
CONTROL_KEY = struct.Struct(">hh")
# End-transaction marker value: h version (0) | i coordinatorEpoch
END_TXN_VALUE = struct.Struct(">hi")


def build_control_record_batch(
    type_id: int,
    value_bytes: bytes | None,
    *,
    base_offset: int = 0,
    timestamp: int,
    producer_id: int = -1,
    producer_epoch: int = -1,
    partition_leader_epoch: int = 0,
    transactional: bool = False,
    key_version: int = 0,
) -> bytes:
    """A one-record control batch (``MemoryRecordsBuilder.appendControlRecord``).

    Key = int16 version + int16 type.  KRaft control batches
    (``createKraftControlRecordBuilder``) use producer id/epoch -1 and
    ``transactional=False``; end-transaction markers use
    :func:`build_control_batch`.  baseSequence is always -1.
    """
    key = CONTROL_KEY.pack(key_version, type_id)
    return build_v2_batch(
        [RecordSpec(key, value_bytes, timestamp)],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=-1,
        partition_leader_epoch=partition_leader_epoch,
        transactional=transactional,
        control=True,
    )


def end_txn_marker_value(coordinator_epoch: int, version: int = 0) -> bytes:
    """``EndTransactionMarker.serializeValue``: int16 version + int32 coordinatorEpoch."""
    return END_TXN_VALUE.pack(version, coordinator_epoch)


def build_control_batch(
    kind: str,
    *,
    base_offset: int,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timestamp: int,
    partition_leader_epoch: int = 0,
) -> bytes:
    """A COMMIT/ABORT marker batch (``MemoryRecords.withEndTransactionMarker``).

    Transactional + control attributes (0x30), CreateTime, baseSequence -1,
    one record at offset delta 0 with the marker's key and value.
    """
    if kind not in ("COMMIT", "ABORT"):
        raise KsegError(f"end-transaction marker kind must be COMMIT or ABORT, not {kind!r}")
    return build_control_record_batch(
        CONTROL_TYPES[kind],
        end_txn_marker_value(coordinator_epoch),
        base_offset=base_offset,
        timestamp=timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        partition_leader_epoch=partition_leader_epoch,
        transactional=True,
    )
