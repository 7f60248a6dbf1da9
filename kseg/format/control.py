"""Control records (``ControlRecordType``, ``EndTransactionMarker``).

A control batch (attributes bit 5) holds records whose key is::

    version int16   >= 0 (only 0 is defined; others are read as 0)
    type    int16   0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, 3 SNAPSHOT_HEADER,
                    4 SNAPSHOT_FOOTER, 5 KRAFT_VERSION, 6 KRAFT_VOTERS

An end-transaction marker (ABORT/COMMIT) value is::

    version          int16  >= 0
    coordinatorEpoch int32
"""

from __future__ import annotations

import struct

from kseg.errors import CorruptRecordError

ABORT, COMMIT, LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS = range(7)
TYPE_NAMES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
_KEY = struct.Struct(">hh")  # version, type
_MARKER = struct.Struct(">hi")  # version, coordinatorEpoch


def type_name(type_id: int) -> str:
    """``ControlRecordType.fromTypeId(...).name``; unknown ids are ``UNKNOWN``."""
    return TYPE_NAMES.get(type_id, "UNKNOWN")


def parse_type_id(key) -> int:
    """``ControlRecordType.parseTypeId``: the int16 type from a control key."""
    if key is None or len(key) < 4:
        found = 0 if key is None else len(key)
        raise CorruptRecordError(
            f"invalid value size found for control record key: must have at least 4 bytes, but found only {found}"
        )
    version, type_id = _KEY.unpack_from(key, 0)
    if version < 0:
        raise CorruptRecordError(f"invalid version found for control record: {version}; may indicate data corruption")
    return type_id


# parse_type_id and parse_end_txn_marker share their shape on purpose: each mirrors its own Kafka
# class (ControlRecordType, EndTransactionMarker) with that class's messages.
def parse_end_txn_marker(value) -> int:
    """``EndTransactionMarker.deserializeValue``: return the coordinator epoch."""
    if value is None or len(value) < 6:
        found = 0 if value is None else len(value)
        raise CorruptRecordError(
            f"invalid value size found for end transaction marker: must have at least 6 bytes, but found only {found}"
        )
    version, epoch = _MARKER.unpack_from(value, 0)
    if version < 0:
        raise CorruptRecordError(
            f"invalid version found for end transaction marker: {version}; may indicate data corruption"
        )
    return epoch
