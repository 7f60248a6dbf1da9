"""KRaft control records printed by ``kafka-dump-log.sh --deep-iteration``.

For a control batch, ``DumpLogSegments`` prints, after the record metadata:

* SNAPSHOT_HEADER (3): `` SnapshotHeader {json}``
* SNAPSHOT_FOOTER (4): `` SnapshotFooter {json}``
* KRAFT_VERSION (5):   `` KRaftVersion {json}``
* KRAFT_VOTERS (6):    `` KRaftVoters {json}``

The value is read by ``ControlRecordUtils`` with the fixed version 0
(``*_CURRENT_VERSION``) and written by the message's JSON converter at the
version stored in the message's own first field (``record.version()``), so
the JSON starts with ``"version"``.  Trailing bytes are ignored.  Failures are
uncaught in Kafka's tool: :class:`~kseg.decoders.base.UncaughtJavaException`.

This module imports nothing heavy; the schemas load on the first control
record of one of these types.
"""

from __future__ import annotations

LEADER_CHANGE = 2
SNAPSHOT_HEADER = 3
SNAPSHOT_FOOTER = 4
KRAFT_VERSION = 5
KRAFT_VOTERS = 6

#: control type -> (label printed, message schema)
CONTROL_MESSAGES: dict[int, tuple[str, str]] = {
    SNAPSHOT_HEADER: ("SnapshotHeader", "SnapshotHeaderRecord"),
    SNAPSHOT_FOOTER: ("SnapshotFooter", "SnapshotFooterRecord"),
    KRAFT_VERSION: ("KRaftVersion", "KRaftVersionRecord"),
    KRAFT_VOTERS: ("KRaftVoters", "VotersRecord"),
}

#: Kafka 4.1+ (KAFKA-18672) also prints LEADER_CHANGE (2): `` LeaderChange: {json}``.
LEADER_CHANGE_MESSAGE = ("LeaderChange:", "LeaderChangeMessage")

#: ``ControlRecordUtils.*_CURRENT_VERSION``: the version every control value is read with.
READ_VERSION = 0


def control_record_json(type_id: int, value: bytes | None, leader_change: bool = False) -> tuple[str, str] | None:
    """``(label, json)`` for a SnapshotHeader/Footer, KRaftVersion or KRaftVoters value (and, with
    ``leader_change``, a LeaderChange one); else None."""
    entry = LEADER_CHANGE_MESSAGE if leader_change and type_id == LEADER_CHANGE else CONTROL_MESSAGES.get(type_id)
    if entry is None:
        return None
    from kseg.decoders import schema
    from kseg.decoders.base import UncaughtJavaException
    from kseg.decoders.decode import read
    from kseg.decoders.jsonconv import dumps, to_tree
    from kseg.decoders.jvm import JavaException, NullPointerException

    label, name = entry
    struct = schema.message(name).struct
    try:
        if value is None:
            raise NullPointerException('Cannot invoke "java.nio.ByteBuffer.slice()" because "data" is null')
        message = read(struct, value, READ_VERSION)
        version = message["version"]
        return label, dumps(to_tree(struct, message, version))
    except JavaException as exc:
        raise UncaughtJavaException(exc) from None


def control_record_text(type_id: int, key: bytes, value: bytes | None, leader_change: bool = False) -> str | None:
    """What Kafka prints after the record metadata for control type ``type_id``.

    ``" KRaftVersion {...}"`` etc. for types 3-6; None for every other type
    (ABORT/COMMIT markers and the ``controlType: X(n)`` fallback are printed
    by the caller).  ``key`` is accepted for symmetry; the caller already
    parsed the type from it.
    """
    out = control_record_json(type_id, value, leader_change)
    if out is None:
        return None
    return f" {out[0]} {out[1]}"
