"""Kafka's ``Uuid`` in its text form (``Uuid.toString``/``fromString``): 16 bytes in URL-safe base64
without padding, 22 characters (topic ids, segment ids of tiered storage)."""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["parse_uuid"]


def parse_uuid(text: str) -> bytes | None:
    """``Uuid.fromString``: 16 bytes in URL-safe base64 without padding (22 characters), or None."""
    if len(text) != 22 or not re.fullmatch(r"[A-Za-z0-9_-]+", text):
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 16 else None
