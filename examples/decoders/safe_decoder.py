"""An example of a safe ``module:function`` decoder for ``kseg dump --key-decoder/--value-decoder``
(docs/decoders.md): a pure function of the bytes -- it never executes, imports or opens anything
the data chooses, and it bounds the text it returns."""

from __future__ import annotations


def int64_or_text(data: bytes | None) -> str | None:
    """A big-endian long (how Kafka's LongSerializer writes one) as a number; anything else as
    escaped UTF-8, cut at 1,000 characters."""
    if data is None:
        return None
    if len(data) == 8:
        return str(int.from_bytes(data, "big", signed=True))
    text = data.decode("utf-8", "backslashreplace")
    return text if len(text) <= 1000 else text[:1000] + "..."
