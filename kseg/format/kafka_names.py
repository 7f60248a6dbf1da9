"""Kafka's names as text patterns: a topic's legal characters and a ``Uuid``'s text form."""

from __future__ import annotations

#: Kafka's ``Topic.LEGAL_CHARS``.
TOPIC = r"[a-zA-Z0-9._-]+"
#: ``Uuid.toString()``: 16 bytes, URL-safe base64 without padding (:func:`kseg.format.uuid.parse_uuid`).
UUID = r"[a-zA-Z0-9_-]{22}"
