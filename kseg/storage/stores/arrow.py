"""Object stores and remote file systems through pyarrow (``s3://``, ``gs://``, ``hdfs://``, ``abfs://``):
:mod:`kseg.storage.location` holds the filesystems, the ranged-read file and the listings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kseg.storage import location
from kseg.storage.context import Stat

if TYPE_CHECKING:
    from kseg.storage.context import ReadContext


class ArrowStore:
    """The objects under a URI, read by ranged requests (a segment is never downloaded whole)."""

    __slots__ = ("context",)
    remote = True
    names = location.OBJECT_NAMES

    def __init__(self, context: ReadContext) -> None:
        self.context = context

    def open(self, path: str, buffering: int = -1) -> location.RemoteFile:
        return location.open_input(path)

    def stat(self, path: str) -> Stat:
        return Stat(location.kind(path))

    def exists(self, path: str) -> bool:
        return location.kind(path) != "missing"

    def list(self, path: str) -> list[location.Entry]:
        return location.children(path)

    def mtime_ms(self, path: str) -> int:
        return location.mtime_ms(path)

    def identity(self, path: str) -> str:
        return location.identity(path)

    def original_size(self, path: str) -> int | None:
        return None
