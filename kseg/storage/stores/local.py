"""Local files (and ``file://`` URIs): the operating system's."""

from __future__ import annotations

import io
import os
import stat as st
from typing import TYPE_CHECKING, cast

from kseg.errors import InputError
from kseg.storage.location import LOCAL_NAMES, Entry, local_path
from kseg.storage.stores.base import Stat

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
        """Only regular files are opened: a FIFO would block the open (and the whole run) until some writer
        appeared, and a device is no segment."""
        local = local_path(path)
        try:
            mode = os.stat(local).st_mode
            if st.S_ISDIR(mode):
                raise InputError("is a directory, not a file", path=path)
            if not st.S_ISREG(mode):
                raise InputError("not a regular file (a FIFO, socket or device); kseg reads segment files", path=path)
            # open() is typed BinaryIO for a buffering only known at run time: "rb" gives one of these two
            return cast("io.FileIO | io.BufferedReader", open(local, "rb", buffering=buffering))
        except InputError:
            raise
        except FileNotFoundError:
            raise InputError("no such file", path=path) from None
        except PermissionError:
            raise InputError("permission denied", path=path) from None
        except OSError as exc:
            raise InputError(f"cannot open: {exc.strerror or exc}", path=path) from None

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
        """``size=<n> mtime_ns=<t> ctime_ns=<t>``: a user can set the mtime back, never the ctime (any write
        changes it)."""
        try:
            s = os.stat(local_path(path))
        except OSError as exc:
            raise InputError(f"cannot stat: {exc.strerror or exc}", path=path) from None
        return f"size={s.st_size} mtime_ns={s.st_mtime_ns} ctime_ns={s.st_ctime_ns}"

    def original_size(self, path: str) -> int | None:
        return None

    def directory(self, path: str) -> str:
        """``path`` as a directory's name in this store's listings."""
        return path
