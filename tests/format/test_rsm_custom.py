"""Aiven's custom metadata (``SegmentCustomMetadataSerde``): each field, empty bytes, and bytes that are not a
tagged-fields section (another RSM's) refused with the reason."""

from __future__ import annotations

import pytest

from kseg.format.rsm_custom import CustomMetadata, parse_custom_metadata
from kseg.testing.remote_metadata import aiven_custom_metadata


def test_fields() -> None:
    data = aiven_custom_metadata(remote_size=123456789, object_prefix="tiered/", object_key="t-AQID/0/0001-x")
    assert parse_custom_metadata(data) == CustomMetadata(len(data), 123456789, "tiered/", "t-AQID/0/0001-x")


def test_one_field_and_none() -> None:
    assert parse_custom_metadata(aiven_custom_metadata(remote_size=7)) == CustomMetadata(4, 7)  # 01 00 01 0e
    assert parse_custom_metadata(b"") == CustomMetadata(0)


def test_unknown_tags_are_kept_by_number() -> None:
    # two fields: tag 0 (varlong 1) and tag 9 (two bytes)
    assert parse_custom_metadata(b"\x02\x00\x01\x02\x09\x02ab").other_tags == (9,)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"\x01\x00\x05\x02", "runs past the end"),
        (b"\x01\x00\x01\x02zz", "2 bytes after the tagged fields"),
        (b"\x01\x01\x03\x05ab", "compact string of length 4"),
        (b"\xff\xff\xff\xff\x0f", "tagged fields"),
        (b"\x01\x02\x80", "varint runs past the end"),
    ],
)
def test_not_aivens(data: bytes, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        parse_custom_metadata(data)
