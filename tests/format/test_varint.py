"""Zig-zag varints (``ByteUtils``): round trips, Kafka's length limits, Java's int truncation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kseg.errors import CorruptRecordError
from kseg.format.varint import read_varint, read_varlong


def encode_varint(value: int) -> bytes:
    """Zig-zag encode ``value`` as Kafka does (``ByteUtils.writeVarlong``): the test's own encoder, an
    independent oracle sharing no code with the reader it tests nor with ``kseg.testing``'s writer
    (7-bit groups, least significant first, the continuation bit on all but the last)."""
    raw = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF
    groups = [(raw >> shift) & 0x7F for shift in range(0, max(raw.bit_length(), 1), 7)]
    return bytes([g | 0x80 for g in groups[:-1]] + groups[-1:])


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_varint_round_trip(n: int) -> None:
    data = encode_varint(n) + b"tail"
    assert read_varint(data, 0) == (n, len(data) - 4)


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_varlong_round_trip(n: int) -> None:
    data = encode_varint(n)
    assert read_varlong(data, 0) == (n, len(data))


@pytest.mark.parametrize(
    "value,encoded",
    [(0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (63, b"\x7e"), (-64, b"\x7f"), (64, b"\x80\x01"), (300, b"\xd8\x04")],
)
def test_known_encodings(value: int, encoded: bytes) -> None:
    # Zig-zag values from the protobuf / Kafka documentation of the record format.
    assert encode_varint(value) == encoded
    assert read_varint(encoded, 0) == (value, len(encoded))


def test_varint_longer_than_five_bytes_is_rejected() -> None:
    with pytest.raises(CorruptRecordError, match="too long"):
        read_varint(b"\xff\xff\xff\xff\xff\x01", 0)


def test_varlong_longer_than_ten_bytes_is_rejected() -> None:
    with pytest.raises(CorruptRecordError, match="too long"):
        read_varlong(b"\xff" * 10 + b"\x01", 0)


def test_truncated_varint_is_positioned() -> None:
    with pytest.raises(CorruptRecordError) as err:
        read_varint(b"xx\x80\x80", 2)
    assert err.value.position == 2
