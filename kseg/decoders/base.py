"""What every topic decoder shares: the parser protocol and the "tool dies here" error.

A parser mirrors one of ``DumpLogSegments``' ``MessageParser`` classes::

    parse(offset, key, value) -> (key_text, payload_text)

``key``/``value`` are the record's bytes or ``None`` (null); the returned texts
are what Kafka prints after ``key: `` and `` payload: `` (``None``: not
printed).  Bad data never raises: parsers return Kafka's own "Error at offset
N, skipping. ..." texts.  The one exception is where Kafka's tool itself dies
with an uncaught exception (a missing key for the offsets and share-group
decoders, any error in the transaction-log decoder, a malformed KRaft control
record): then :class:`UncaughtJavaException` is raised, carrying Kafka's exact
message and the ``Exception in thread "main" ...`` line the JVM prints.
"""

from __future__ import annotations

from kseg.errors import UncaughtJavaError
from kseg.valueclass import Protocol


class MessageParser(Protocol):
    """``DumpLogSegments.MessageParser``, with the record reduced to (offset, key, value)."""

    def parse(
        self, offset: int, key: bytes | None, value: bytes | None
    ) -> tuple[str | None, str | None]: ...  # pragma: no cover - protocol


# Defined in kseg.errors with every other kseg exception; the decoders' historical name.
UncaughtJavaException = UncaughtJavaError
