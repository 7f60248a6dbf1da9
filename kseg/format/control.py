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


def parse_type_id(key: bytes | bytearray | memoryview | None) -> int:
    """``ControlRecordType.parseTypeId``: the int16 type from a control key."""
    return _versioned(key, _KEY, "control record key", "control record")


def parse_end_txn_marker(value: bytes | bytearray | memoryview | None) -> int:
    """``EndTransactionMarker.deserializeValue``: return the coordinator epoch."""
    return _versioned(value, _MARKER, "end transaction marker", "end transaction marker")


_SNAPSHOT_HEADER = struct.Struct(">hq")  # SnapshotHeaderRecord v0: Version, LastContainedLogTimestamp
_KRAFT_VERSION = struct.Struct(">hh")  # KRaftVersionRecord v0: Version, KRaftVersion


def snapshot_header_time(value: bytes | bytearray | memoryview | None) -> int:
    """``SnapshotHeaderRecord.lastContainedLogTimestamp`` (the message's own int16 version first)."""
    return _versioned(value, _SNAPSHOT_HEADER, "snapshot header", "snapshot header")


def kraft_version(value: bytes | bytearray | memoryview | None) -> int:
    """``KRaftVersionRecord.kRaftVersion`` (the message's own int16 version first)."""
    return _versioned(value, _KRAFT_VERSION, "KRaft version record", "KRaft version record")


def _versioned(data: bytes | bytearray | memoryview | None, layout: struct.Struct, sized: str, versioned: str) -> int:
    """The field after the int16 version at the start of ``data`` (``layout``: version and field), with the
    checks ``ControlRecordType.parseTypeId`` and ``EndTransactionMarker.deserializeValue`` make and their
    messages (``sized``, ``versioned``: what each names)."""
    if data is None or len(data) < layout.size:
        found = 0 if data is None else len(data)
        raise CorruptRecordError(
            f"invalid value size found for {sized}: must have at least {layout.size} bytes, but found only {found}"
        )
    version, field = layout.unpack_from(data, 0)
    if version < 0:
        raise CorruptRecordError(f"invalid version found for {versioned}: {version}; may indicate data corruption")
    result: int = field
    return result
