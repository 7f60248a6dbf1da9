"""Java's ``new String(bytes, StandardCharsets.UTF_8)`` (JDK 17), the decoding behind every string Kafka prints.

Every malformed sequence becomes U+FFFD exactly where Java puts one.
Python's ``errors="replace"`` agrees except for UTF-8-encoded surrogates
(``ED A0..BF xx``): Java replaces the whole 3-byte form (or a truncated
2-byte prefix) with one U+FFFD, Python with one per byte.  A format rule
(bytes to a value), so render and decoders both use it from here.
"""

from __future__ import annotations

import binascii
import codecs
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from typing_extensions import Buffer


_URL_SAFE = bytes.maketrans(b"+/", b"-_")


def uuid_to_string(raw: bytes) -> str:
    """Kafka's ``Uuid.toString()``: URL-safe base64 of the 16 bytes, no padding (22 characters)."""
    return binascii.b2a_base64(raw, newline=False).rstrip(b"=").translate(_URL_SAFE).decode("ascii")


def _java_utf8_errors(exc: UnicodeError) -> tuple[str, int]:
    """The "kseg-java-utf8" error handler: where Java puts one U+FFFD, and where it goes on."""
    if not isinstance(exc, UnicodeDecodeError):  # pragma: no cover - registered for decoding only
        raise exc
    data, start = exc.object, exc.start
    if data[start] == 0xED and start + 1 < len(data) and 0xA0 <= data[start + 1] <= 0xBF:
        if start + 2 < len(data) and 0x80 <= data[start + 2] <= 0xBF:
            return "\ufffd", start + 3
        return "\ufffd", start + 2
    return "\ufffd", exc.end


codecs.register_error("kseg-java-utf8", _java_utf8_errors)


def java_utf8(data: bytes) -> str:
    """``new String(data, UTF_8)`` as JDK 17 decodes it."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "kseg-java-utf8")


def string_decoder(data: Buffer) -> str:
    """Kafka's default ``StringDecoder`` (``new String(bytes, UTF_8)``).

    Valid UTF-8 takes the fast path; anything else is decoded as JDK 17
    does (each malformed sequence to U+FFFD, where Python's "replace" would
    differ on encoded surrogates) by :func:`java_utf8`.
    """
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError:
        return java_utf8(bytes(data))


def decode_text(decoder: Callable[..., str], data: Any, headers: Any) -> str:
    """A key or value decoder's text: ``decoder(data)``; a decoder that reads the record's headers too (one
    with ``with_headers``: the registry decoder, whose schema id may be in a header) is given them."""
    with_headers = getattr(decoder, "with_headers", None)
    return decoder(data) if with_headers is None else str(with_headers(data, headers))
