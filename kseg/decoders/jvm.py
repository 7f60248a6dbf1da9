"""The Java side of Kafka's decoders, as Python values: exceptions and strings.

Kafka's tool prints exception messages (``e.getMessage``) into its output
("Error at offset 15, skipping. Could not read record ... due to: null."), and
Java's string decoding into every decoded string, so both are mirrored here:

* :class:`JavaException` and subclasses carry the Java class name and the
  exact ``getMessage()`` text (``None`` for Java's ``null``).
  :meth:`JavaException.to_string` is ``Throwable.toString()``.
* :func:`java_utf8` is ``new String(bytes, StandardCharsets.UTF_8)`` (JDK 17):
  every malformed sequence becomes U+FFFD exactly where Java puts one.
  Python's ``errors="replace"`` agrees except for UTF-8-encoded surrogates
  (``ED A0..BF xx``): Java replaces the whole 3-byte form (or a truncated
  2-byte prefix) with one U+FFFD, Python with one per byte.
"""

from __future__ import annotations

from typing import Any, Callable, NoReturn

from kseg.format.strings import (
    java_utf8,  # noqa: F401 - a format rule, re-exported here
    uuid_to_string,  # noqa: F401 - re-exported for the decoders
)
from kseg.format.v2 import java_int


class JavaException(Exception):
    """A Java exception: ``java_class`` plus ``getMessage()`` (``None`` is Java's null)."""

    java_class = "java.lang.RuntimeException"

    def __init__(self, message: str | None = None, cause: "JavaException | None" = None) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause

    @classmethod
    def wrapping(cls, cause: "JavaException") -> "JavaException":
        """``new X(cause)``: Java sets the message to ``cause.toString()``."""
        return cls(cause.to_string(), cause)

    def get_message(self) -> str:
        """``getMessage()`` as string concatenation prints it (``null`` for None)."""
        return "null" if self.message is None else self.message

    def to_string(self) -> str:
        """``Throwable.toString()``: ``class`` or ``class: message``."""
        return self.java_class if self.message is None else f"{self.java_class}: {self.message}"

    def __str__(self) -> str:
        return self.to_string()


# One class per Java exception class, each naming its Java class: the same shape by design
# (they are caught by class, so a table of names would not do); duplicates lists them as a pair.
class IllegalArgumentException(JavaException):
    java_class = "java.lang.IllegalArgumentException"


class IllegalStateException(JavaException):
    java_class = "java.lang.IllegalStateException"


class NullPointerException(JavaException):
    java_class = "java.lang.NullPointerException"


class NegativeArraySizeException(JavaException):
    java_class = "java.lang.NegativeArraySizeException"


class BufferUnderflowException(JavaException):
    """``java.nio.BufferUnderflowException``: its message is always null."""

    java_class = "java.nio.BufferUnderflowException"


class UnsupportedVersionException(JavaException):
    # the same shape as the Java exception classes above, by design (see IllegalArgumentException)
    java_class = "org.apache.kafka.common.errors.UnsupportedVersionException"


def unsupported_version(message: str) -> Callable[[Any], NoReturn]:
    """A compiled plan for a version its struct does not have: it raises ``UnsupportedVersionException``.

    The generated ``read``/``write`` of Kafka's ``MessageDataGenerator`` throw it with ``message``
    ("Can't read version 5 of X", "Can't write version 5 of X")."""

    def unsupported(_: Any) -> NoReturn:
        raise UnsupportedVersionException(message)

    return unsupported


class MetadataParseException(JavaException):
    java_class = "org.apache.kafka.server.common.serialization.MetadataParseException"


class UnknownRecordTypeException(JavaException):
    """``CoordinatorLoader.UnknownRecordTypeException`` (carries ``unknown_type``)."""

    java_class = "org.apache.kafka.coordinator.common.runtime.CoordinatorLoader$UnknownRecordTypeException"

    def __init__(self, unknown_type: int) -> None:
        super().__init__(f"Found an unknown record type {unknown_type}")
        self.unknown_type = unknown_type


def java_string_hash(s: str) -> int:
    """``String.hashCode()`` (over UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    units = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


# Java's int wrapping and Uuid.toString() are format rules (ops use them too): written once there
int32 = java_int
