"""Atomic file writes: a crash never leaves a half-written file in place.

The bytes go to a file with no name yet (Linux ``O_TMPFILE`` in the target
directory), are flushed and ``fsync``-ed, and only then get the target's
name: ``link`` when the target must not exist (fails if it appeared
meanwhile), else a short-lived hidden name and ``rename`` over the target.
Finally the directory is ``fsync``-ed so the new name is durable.  A process
killed while writing leaves nothing behind: an unnamed file vanishes with
its last descriptor.

Where ``O_TMPFILE`` is unavailable (other systems, some file systems), a
named temporary file in the same directory (``.<name>.<random>.kseg-tmp``)
takes its place, and is removed on any failure.  Only a kill in the instant
between its creation and the rename can then leave it behind; it is never
the target.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
from typing import TYPE_CHECKING, Callable

from kseg.errors import InputError

if TYPE_CHECKING:
    from typing_extensions import Buffer

CHUNK = 1 << 20  # bytes per os.write call
TEMP_SUFFIX = ".kseg-tmp"


_TEMP_NAME = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{12}" + re.escape(TEMP_SUFFIX) + r"\Z")


def stale_temp_target(entry: str) -> str | None:
    """The file a temporary file of kseg's own naming (``.<name>.<12 hex digits>.kseg-tmp``) was to
    become, else None."""
    m = _TEMP_NAME.match(entry)
    return m.group("name") if m else None


def clean_stale(directory: str, wanted: Callable[[str], bool]) -> list[str]:
    """Remove the temporary files a killed kseg left in ``directory`` (a kill between the link and the
    rename of :func:`write_atomic`), those whose target name satisfies ``wanted``; return their paths.
    Only kseg's own naming is touched; a directory that cannot be listed is left alone."""
    removed: list[str] = []
    try:
        entries = os.listdir(directory)
    except OSError:
        return removed
    for entry in entries:
        target = stale_temp_target(entry)
        if target is None or not wanted(target):
            continue
        path = os.path.join(directory, entry)
        try:
            if os.path.isfile(path) and not os.path.islink(path):
                os.unlink(path)
                removed.append(path)
        except OSError:
            pass
    return removed


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:CHUNK])
        view = view[n:]


def _temp_name(name: str) -> str:
    return f".{name}.{secrets.token_hex(6)}{TEMP_SUFFIX}"


def _open_unnamed(directory: str, mode: int) -> int | None:
    """An ``O_TMPFILE`` descriptor in ``directory``, or None where unsupported."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(directory, flag | os.O_WRONLY, mode)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None
        raise


def write_atomic(path: str, data: bytes, *, replace: bool) -> None:
    """Write ``data`` as ``path``; with ``replace`` False an existing ``path`` is an error.

    The new file takes the mode of the file it replaces, else 0644 less the umask.
    Raises :class:`InputError` (exit code 2) naming the file on any failure;
    the target is then as it was and no temporary file remains.
    """
    path = os.path.abspath(path)
    directory, name = os.path.split(path)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        mode = 0o644
    try:
        dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            fd = _open_unnamed(directory, mode)
            if fd is not None:
                _write_unnamed(fd, dir_fd, name, data, replace, mode)
            else:
                _write_named(dir_fd, name, data, replace, mode)
            os.fsync(dir_fd)  # the new name is durable
        finally:
            os.close(dir_fd)
    except FileExistsError:
        raise InputError("exists; not replaced (give --force to replace it)", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", path=path) from None


def _write_unnamed(fd: int, dir_fd: int, name: str, data: bytes, replace: bool, mode: int) -> None:
    """Write and sync the unnamed file ``fd``, then give it ``name`` in ``dir_fd``.

    ``linkat(AT_SYMLINK_FOLLOW)`` on ``/proc/self/fd/N`` names an ``O_TMPFILE``
    file; passing ``dst_dir_fd`` makes Python call ``linkat`` (plain ``link``
    would not follow the ``/proc`` symlink).
    """
    temp = None
    try:
        os.fchmod(fd, mode)
        _write_all(fd, data)
        os.fsync(fd)
        source = f"/proc/self/fd/{fd}"
        if not replace:
            os.link(source, name, dst_dir_fd=dir_fd, follow_symlinks=True)
            return
        temp = _temp_name(name)
        os.link(source, temp, dst_dir_fd=dir_fd, follow_symlinks=True)
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        temp = None
    finally:
        os.close(fd)
        if temp is not None:
            _unlink_quietly(temp, dir_fd)


def _write_named(dir_fd: int, name: str, data: bytes, replace: bool, mode: int) -> None:
    """The fallback: a named temporary file in the same directory, removed on failure."""
    temp = _temp_name(name)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode, dir_fd=dir_fd)
    try:
        try:
            os.fchmod(fd, mode)
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        else:
            os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            os.unlink(temp, dir_fd=dir_fd)
    except BaseException:
        _unlink_quietly(temp, dir_fd)
        raise


def _unlink_quietly(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


class AtomicStream:
    """A file written piece by piece and given its name only by :meth:`commit` (replacing any old one).

    Opening it creates the unnamed (or hidden temporary) file in the target's directory at once,
    so an unwritable target is found before any work.  :meth:`discard` (or a killed process)
    leaves the target as it was.  Used for ``verify-index --report``.
    """

    def __init__(self, path: str, mode: int = 0o644) -> None:
        self.path = os.path.abspath(path)
        self.directory, self.name = os.path.split(self.path)
        self.temp: str | None = None
        self.fd: int | None  # None once closed
        try:
            self.fd = _open_unnamed(self.directory, mode)
            if self.fd is None:
                self.temp = _temp_name(self.name)
                self.fd = os.open(os.path.join(self.directory, self.temp), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except OSError as exc:
            raise InputError(f"cannot create a file in {self.directory}: {exc.strerror or exc}", path=path) from None
        self.buffer = bytearray()
        self.written = 0
        self.closed = False

    def write(self, data: Buffer, /) -> int:
        """Append ``data`` (any bytes-like object; the binary file API, so pyarrow can write here)."""
        n = memoryview(data).nbytes
        self.buffer += data
        self.written += n
        if len(self.buffer) >= CHUNK:
            self._flush()
        return n

    def tell(self) -> int:
        return self.written

    def flush(self) -> None:
        """Nothing reaches the target before :meth:`commit`; buffered bytes go out in chunks."""

    def _flush(self) -> None:
        try:
            if self.fd is None:
                raise OSError(errno.EBADF, "the file was discarded")
            _write_all(self.fd, bytes(self.buffer))
        except OSError as exc:
            self.discard()
            raise InputError(f"cannot write: {exc.strerror or exc}", path=self.path) from None
        self.buffer.clear()

    def commit(self) -> None:
        """Write what is buffered, sync, and rename into place (atomically)."""
        self._flush()
        fd = self.fd
        assert fd is not None  # _flush raised otherwise
        try:
            os.fsync(fd)
            dir_fd = os.open(self.directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                if self.temp is None:  # name the unnamed file (linkat follows the /proc link), then rename
                    self.temp = _temp_name(self.name)
                    os.link(f"/proc/self/fd/{fd}", self.temp, dst_dir_fd=dir_fd, follow_symlinks=True)
                os.replace(self.temp, self.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
                self.temp = None
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path=self.path) from None
        finally:
            self.discard()

    def discard(self) -> None:
        """Close and remove the temporary file; the target stays as it was."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.temp is not None:
            try:
                os.unlink(os.path.join(self.directory, self.temp))
            except OSError:
                pass
            self.temp = None


class AtomicDirectory:
    """A new directory built beside its target (``.<name>.<hex>.kseg-tmp``) and renamed into place by
    :meth:`commit`: until then the target is as it was; :meth:`discard` (or a failure) removes what was built.
    A target that exists is refused unless empty, or with ``force`` (it is then renamed aside, the new one
    renamed in, and the old one removed).  Used for ``salvage -o``."""

    def __init__(self, target: str, *, force: bool) -> None:
        self.target = os.path.abspath(target)
        parent, name = os.path.split(self.target)
        self.force = force
        self._check_target()
        self.path = os.path.join(parent, _temp_name(name))
        try:
            os.mkdir(self.path, 0o755)
        except OSError as exc:
            raise InputError(f"cannot create a directory in {parent}: {exc.strerror or exc}", path=target) from None
        self.committed = False

    def _check_target(self) -> None:
        try:
            entries = os.listdir(self.target)
        except FileNotFoundError:
            parent = os.path.dirname(self.target)
            try:
                os.makedirs(parent, exist_ok=True)  # the directories above it, as mkdir -p
            except OSError as exc:
                raise InputError(f"cannot write: {exc.strerror or exc}", path=parent) from None
            return
        except NotADirectoryError:
            raise InputError("exists and is not a directory", path=self.target) from None
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path=self.target) from None
        if entries and not self.force:
            raise InputError("exists and is not empty; not replaced (give --force to replace it)", path=self.target)

    def file(self, name: str) -> str:
        """The path of ``name`` inside the directory being built."""
        return os.path.join(self.path, name)

    def commit(self) -> None:
        """Sync the directory's entries and rename it into place (over an empty target, or with ``force``
        over a full one, renamed aside first and then removed)."""
        parent = os.path.dirname(self.target)
        old = None
        try:
            _fsync_dir(self.path)
            self._check_target()
            if os.path.isdir(self.target) and os.listdir(self.target):
                old = os.path.join(parent, _temp_name(os.path.basename(self.target)))
                os.rename(self.target, old)
            os.rename(self.path, self.target)
            self.committed = True
            _fsync_dir(parent)
        except OSError as exc:
            if old is not None and not os.path.exists(self.target):
                os.rename(old, self.target)
                old = None
            raise InputError(f"cannot write: {exc.strerror or exc}", path=self.target) from None
        finally:
            if old is not None:
                _remove_tree(old)
            self.discard()

    def discard(self) -> None:
        """Remove the directory being built (nothing, once committed)."""
        if not self.committed:
            _remove_tree(self.path)


def clean_stale_directories(target: str) -> list[str]:
    """Remove the directories a killed :class:`AtomicDirectory` left beside ``target`` (kseg's own naming,
    ``.<name>.<12 hex digits>.kseg-tmp``, for this target's name only); return their paths, beside ``target``
    as given."""
    parent = os.path.dirname(target.rstrip("/")) or os.curdir
    name = os.path.basename(os.path.abspath(target))
    removed: list[str] = []
    try:
        entries = os.listdir(parent)
    except OSError:
        return removed
    for entry in entries:
        path = os.path.join(parent, entry)
        if stale_temp_target(entry) == name and os.path.isdir(path) and not os.path.islink(path):
            _remove_tree(path)
            removed.append(path)
    return removed


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
