"""One exception hierarchy for kseg, every error carrying file and byte position.

The format layer raises these with ``position`` relative to the buffer it was
given; the storage layer re-raises them with :meth:`KsegError.at` to add the
file path and make the position absolute in that file.  The CLI turns any
:class:`KsegError` into one diagnostic line (see :meth:`KsegError.describe`)
and never shows a Python traceback.
"""

from __future__ import annotations


class KsegError(Exception):
    """Base class: what went wrong, where (file, byte position), and a hint.

    ``expected`` / ``found`` are optional short phrases used to build the
    message in the pip-like "what happened, where, a hint" style.
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

    def at(self, path: str | None = None, base: int = 0) -> "KsegError":
        """Return this error re-anchored in ``path``, its position shifted by ``base``.

        Used by the storage layer: format functions report positions relative
        to the slice they parsed; the reader knows where that slice starts.
        """
        if path is not None and self.path is None:
            self.path = path
        if self.position is not None:
            self.position += base
        return self

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


class CorruptIndexError(KsegError):
    """An index file fails a sanity rule (Kafka's ``CorruptIndexException``)."""


class CorruptSnapshotError(KsegError):
    """A producer-state snapshot is malformed (Kafka's ``CorruptSnapshotException``)."""


class InputError(KsegError):
    """A file cannot be opened or read: missing, a directory, permission denied."""


class UsageError(KsegError):
    """The command line is wrong (exit code 2)."""
