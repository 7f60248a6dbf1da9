"""Local files (and ``file://`` URIs): the operating system's."""

from __future__ import annotations

import io
import os
import stat as st
from typing import TYPE_CHECKING

from kseg.errors import InputError
from kseg.storage.context import Stat
from kseg.storage.location import LOCAL_NAMES, Entry, local_identity, local_path, open_local

if TYPE_CHECKING:
    from kseg.storage.context import ReadContext


class LocalStore:
    """Files on this host's file systems."""

    __slots__ = ("context",)
    remote = False
    names = LOCAL_NAMES

    def __init__(self, context: ReadContext) -> None:
        self.context = context

    def open(self, path: str, buffering: int = -1) -> io.FileIO | io.BufferedReader:
        """Only regular files are opened (:func:`kseg.storage.location.open_local`)."""
        return open_local(path, buffering)

    def stat(self, path: str) -> Stat:
        try:
            mode = os.stat(local_path(path)).st_mode
        except OSError:
            return Stat("other" if os.path.lexists(local_path(path)) else "missing")
        return Stat("dir" if st.S_ISDIR(mode) else "file" if st.S_ISREG(mode) else "other")

    def exists(self, path: str) -> bool:
        return os.path.exists(local_path(path))

    def list(self, path: str) -> list[Entry]:
        local = local_path(path)
        try:
            names = sorted(os.listdir(local))
        except OSError as exc:
            raise InputError(f"cannot list the directory: {exc.strerror or exc}", path=path) from None
        return [Entry(os.path.join(path, n), None) for n in names]

    def mtime_ms(self, path: str) -> int:
        try:
            return int(os.stat(local_path(path)).st_mtime * 1000)
        except OSError as exc:
            raise InputError(f"cannot stat: {exc.strerror or exc}", path=path) from None

    def identity(self, path: str) -> str:
        return local_identity(path)

    def original_size(self, path: str) -> int | None:
        return None
