"""Kafka's ``org.apache.kafka.common.record.TimestampType``: each type's id and printed name, once.

``NO_TIMESTAMP_TYPE(-1, "NoTimestampType")`` (magic 0), ``CREATE_TIME(0, "CreateTime")``,
``LOG_APPEND_TIME(1, "LogAppendTime")``.  A v1 message and a v2 batch carry the type in bit 3 of
their attributes (``LegacyRecord.TIMESTAMP_TYPE_MASK``, ``DefaultRecordBatch.TIMESTAMP_TYPE_MASK``:
``0x08``, set for LogAppendTime); Kafka's tools print the name (``TimestampType.toString``).
"""

from __future__ import annotations

NO_TIMESTAMP_TYPE, CREATE_TIME, LOG_APPEND_TIME = "NoTimestampType", "CreateTime", "LogAppendTime"

#: ``TimestampType.forId``: id -> printed name.
BY_ID = {-1: NO_TIMESTAMP_TYPE, 0: CREATE_TIME, 1: LOG_APPEND_TIME}

#: The attributes bit of a v1 message or a v2 batch that means LogAppendTime.
MASK = 0x08

#: The names in the order of that bit (unset, set): what the compiled engine's window loops are handed.
BY_FLAG = (CREATE_TIME, LOG_APPEND_TIME)


def of_attributes(attributes: int, magic: int = 2) -> str:
    """The printed name of the type a message (magic 0/1) or a batch (magic 2) declares
    (``LegacyRecord.timestampType``, ``DefaultRecordBatch.timestampType``)."""
    if magic == 0:
        return NO_TIMESTAMP_TYPE
    return BY_ID[1] if attributes & MASK else BY_ID[0]
