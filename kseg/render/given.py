"""Paths shown as the user gave them, when the work was done on their absolute forms (``--spark``).

Spark's executors do not run in the driver's working directory, so a ``--spark`` run reads every local
path made absolute (:mod:`kseg.spark.paths`) and its results name ``$PWD/data/orders-0/...``.  What the
driver prints goes through :class:`GivenPaths`: each absolute form of a path given is shown as given
(``data/orders-0/...``), as the local run shows it -- the same path for a file in every line of a run,
and the same with or without ``--spark``.  JSON's ``logDir`` (absolute by its schema) stays absolute.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import BinaryIO

#: Where a path may begin (after a space, a quote, a bracket) and end (a separator, a quote, punctuation).
_BEFORE = r"(?<![\w.~/-])"
_AFTER = r"(?=[/\s:;,)\]\"'|]|$)"
#: JSON fields that are absolute by the schema (docs/json-output.md): left as they are.
_ABSOLUTE_FIELDS = ("logDir", "localLogDir")


class GivenPaths:
    """Absolute paths mapped back to the paths given (``given[i]`` was made ``absolute[i]``)."""

    def __init__(self, given: Sequence[str], absolute: Sequence[str]) -> None:
        self.shown: dict[str, str] = {}
        for was, now in zip(given, absolute, strict=True):
            was_shown, now = _folded(was), _folded(now)
            if was_shown != now and now.startswith("/"):
                self.shown.setdefault(now, was_shown)
        keys = sorted(self.shown, key=len, reverse=True)  # the longest first: a path given inside another
        skip = "".join(f'(?<!"{field}":")' for field in _ABSOLUTE_FIELDS)
        alternatives = "|".join(re.escape(k) for k in keys)
        self._pattern = re.compile(f"{skip}{_BEFORE}(?:{alternatives}){_AFTER}") if keys else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, text: str) -> str:
        """``text`` with each absolute form of a path given shown as given."""
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda m: self.shown[m.group(0)], text)

    def stream(self, stream: BinaryIO) -> BinaryIO:
        """``stream``, each write shown through :meth:`text` (lines are written whole)."""
        return stream if self._pattern is None else _Shown(stream, self)  # type: ignore[return-value]


def _folded(path: str) -> str:
    """A path without a trailing separator (``data/`` and ``data`` are one directory; ``/`` stays)."""
    folded = path.rstrip("/") or path[:1]
    return folded if folded else os.curdir


class _Shown:
    """A binary stream whose writes are shown through :meth:`GivenPaths.text`."""

    def __init__(self, stream: BinaryIO, given: GivenPaths) -> None:
        self._stream, self._given = stream, given

    def write(self, data: bytes) -> int:
        self._stream.write(
            self._given.text(bytes(data).decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        )
        return len(data)

    def __getattr__(self, name: str):  # flush, fileno, isatty ... of the stream itself
        return getattr(self._stream, name)
