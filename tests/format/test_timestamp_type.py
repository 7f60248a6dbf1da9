"""kseg.format.timestamp_type: Kafka's TimestampType names, by id and by attributes, one table."""

from __future__ import annotations

import pytest

from kseg.format import legacy, timestamp_type, v2


def test_ids_and_names_are_kafkas() -> None:
    """``TimestampType(-1, "NoTimestampType")``, ``(0, "CreateTime")``, ``(1, "LogAppendTime")``."""
    assert timestamp_type.BY_ID == {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}


@pytest.mark.parametrize(
    "magic, attributes, name",
    [
        (0, 0x00, "NoTimestampType"),
        (0, 0x08, "NoTimestampType"),  # v0 has no timestamp: the bit means nothing
        (1, 0x00, "CreateTime"),
        (1, 0x08, "LogAppendTime"),
        (1, 0x0F, "LogAppendTime"),
        (2, 0x00, "CreateTime"),
        (2, 0x08, "LogAppendTime"),
        (2, 0x70, "CreateTime"),  # txn/control/horizon bits
    ],
)
def test_of_attributes(magic: int, attributes: int, name: str) -> None:
    assert timestamp_type.of_attributes(attributes, magic) == name
    if magic < 2:
        assert legacy.timestamp_type(magic, attributes) == name


def test_the_bit_is_the_formats_bit() -> None:
    assert timestamp_type.MASK == v2.TIMESTAMP_TYPE_FLAG == legacy.TIMESTAMP_TYPE_FLAG
