"""One exception hierarchy for kseg, every error carrying file and byte position.

Every kseg exception class is defined here (``kseg.decoders`` re-exports the
two it raises under their historical names).  The format layer raises these
with ``position`` relative to the buffer it was given; the storage layer
anchors them with :meth:`KsegError.at`, which returns a *new* error with the
file path and the position made absolute in that file: an exception is never
changed after it was raised.  Every command prints an error as one line,
:func:`error_line` (``kseg: error: <file>: at byte <n>: <message> (hint: ...)``),
and never shows a Python traceback.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

_Error = TypeVar("_Error", bound="KsegError")  # ``at`` returns a copy of the same class


def error_line(exc: "KsegError | str") -> str:
    """The one line every command prints on stderr for an error (or a message of its own)."""
    return f"kseg: error: {exc if isinstance(exc, str) else exc.describe()}"


class KsegError(Exception):
    """Base class: what went wrong, where (file, byte position), and a hint.

    ``message`` says what was expected and what was found, in words (e.g.
    ``found record size 3 smaller than minimum record overhead (14)``): the
    pip-like "what happened, where, a hint" style, with no separate fields.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        position: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.position = position
        self.hint = hint

    def at(self: _Error, path: str | None = None, base: int = 0, default: int | None = None) -> _Error:
        """A copy of this error anchored in ``path``, its position shifted by ``base``.

        Used by the storage layer: format functions report positions relative
        to the slice they parsed; the reader knows where that slice starts.
        ``path`` is kept if the error already names a file; a position of
        ``None`` becomes ``default`` (when given) before the shift.  The copy
        keeps the class and every attribute; this error is left as it was.
        """
        new = self.__class__.__new__(self.__class__)
        new.__dict__.update(self.__dict__)
        new.args = self.args
        if path is not None and self.path is None:
            new.path = path
        position = self.position if self.position is not None else default
        new.position = None if position is None else position + base
        return new

    def extended(self, text: str) -> "KsegError":
        """A copy of this error with ``text`` appended to its message."""
        new = self.at()
        new.message = self.message + text
        new.args = (new.message,) + self.args[1:]
        return new

    def describe(self) -> str:
        """One line: ``<file>: at byte <n>: <message> (hint: ...)``."""
        where = []
        if self.path is not None:
            where.append(str(self.path))
        if self.position is not None:
            where.append(f"at byte {self.position}")
        text = ": ".join(where + [self.message]) if where else self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return text

    def __str__(self) -> str:  # pragma: no cover - describe() is the public form
        return self.describe()


class CorruptRecordError(KsegError):
    """A record batch or record does not follow the format (Kafka's
    ``CorruptRecordException`` / ``InvalidRecordException``)."""


class DecompressionError(CorruptRecordError):
    """A compressed payload could not be decompressed (Kafka: "Failed to
    decompress record stream")."""


class LimitExceededError(CorruptRecordError):
    """A length, count or decompressed size is beyond the configured bound
    (``--max-message-size``); nothing of the claimed size was allocated."""


class ManifestError(CorruptRecordError):
    """A tiered segment's manifest (Aiven's ``SegmentManifestV1``, ``.rsm-manifest``) that cannot be used: bad
    JSON, a missing field, sizes that do not add up."""


class ChunkError(CorruptRecordError):
    """A chunk of a tiered segment that cannot be read back (a short object, a GCM tag, a zstd frame)."""


class CorruptIndexError(KsegError):
    """An index file fails a sanity rule (Kafka's ``CorruptIndexException``)."""


class TxnVersionError(CorruptIndexError):
    """A ``.txnindex`` entry of a version above 0 (Kafka's ``KafkaException`` from ``TransactionIndex``'s
    iterator: not a ``CorruptIndexException``, so a broker's log loading does not catch it)."""


class CheckpointError(KsegError):
    """A broker's checkpoint or metadata file does not follow its format (Kafka's ``IOException`` on
    reading it: "Malformed line in checkpoint file"); ``kseg.storage.checkpoints``."""


class CorruptSnapshotError(KsegError):
    """A producer-state snapshot is malformed (Kafka's ``CorruptSnapshotException``)."""


class InputError(KsegError):
    """A file cannot be opened or read: missing, a directory, permission denied."""


class SparkSetupError(KsegError):
    """Spark could not run the job (no pyspark, a session that cannot start, executors that cannot import
    kseg or see the inputs, a job that failed): one line for the user, the cause and the fix (exit 2)."""


class UsageError(KsegError):
    """The command line is wrong (exit code 2)."""


class DecoderError(KsegError):
    """A ``module:function`` key/value decoder raised while decoding a record."""


class JavaExceptionLike(Protocol):
    """What :class:`UncaughtJavaError` is built from (:class:`kseg.decoders.jvm.JavaException`)."""

    java_class: str
    message: str | None  # getMessage(): None is Java's null

    def get_message(self) -> str: ...  # pragma: no cover - protocol

    def to_string(self) -> str: ...  # pragma: no cover - protocol


class UncaughtJavaError(CorruptRecordError):
    """Kafka's tool stops at this record with an uncaught Java exception.

    Built from a :class:`kseg.decoders.jvm.JavaException` (any object with
    ``java_class``, ``message``, ``get_message()`` and ``to_string()``):
    ``message`` is the Java exception's message (``getMessage()``, ``"null"``
    when Java's is null); ``java_class`` its class; :meth:`jvm_line` the first
    line the JVM prints on stderr before exiting with status 1.
    """

    def __init__(self, exc: JavaExceptionLike, offset: int | None = None) -> None:
        where = f"record at offset {offset}: " if offset is not None else ""
        line = f'Exception in thread "main" {exc.to_string()}'
        super().__init__(where + exc.get_message(), hint="kafka-dump-log.sh stops here with: " + line)
        self.java_class = exc.java_class
        self.java_message = exc.message
        self.offset = offset
        self.exception = exc

    def jvm_line(self) -> str:
        """``Exception in thread "main" <class>: <message>``, as Kafka's tool prints it."""
        return f'Exception in thread "main" {self.exception.to_string()}'


class RecoveryFailure(KsegError):
    """Kafka's recovery would throw an exception it does not catch per batch: the
    message names it.  ``truncates_segment`` when ``LogLoader`` then truncates the
    whole segment (``InvalidOffsetException``); otherwise the log fails to load."""

    def __init__(
        self, message: str, *, path: str | None = None, position: int | None = None, truncates_segment: bool = False
    ) -> None:
        super().__init__(message, path=path, position=position)
        self.truncates_segment = truncates_segment
