"""Where segments live: local paths and URIs, read through one interface.

Local paths (``/var/lib/kafka/data/orders-0``) go straight to the operating
system, as before.  URIs go through pyarrow's filesystems, chosen because
kseg needs pyarrow anyway for Parquet reports and exports, and because its
filesystems are native (C++) code with ranged reads and recursive listings:

=============================  ==========================================
URI                            filesystem
=============================  ==========================================
``file:///data/orders-0``      local
``s3://bucket/prefix``         S3 and S3-compatible stores (``s3a://`` is
                               the same, Hadoop's spelling)
``gs://bucket/prefix``         Google Cloud Storage (``gcs://`` too)
``hdfs://namenode:8020/path``  HDFS (needs libhdfs and ``HADOOP_HOME``)
``abfs://container@account.dfs.core.windows.net/path``  Azure (``abfss://``)
=============================  ==========================================

S3 settings come from the standard AWS variables and files, read by the AWS
SDK inside pyarrow: ``AWS_ENDPOINT_URL`` (an S3-compatible store),
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION`` or
``AWS_DEFAULT_REGION``, ``AWS_PROFILE`` and ``~/.aws/``.

Credentials are never taken from a URI (``s3://KEY:SECRET@bucket`` would show in process lists, shell
history and logs): such a URI is refused, and the error line never echoes them.  Network filesystems get
a connect timeout and a bounded retry time, ``KSEG_NETWORK_TIMEOUT`` seconds (default 30; S3: connect
and request timeouts, 3 attempts; GCS: the retry time limit), so an unreachable store is one error line,
not minutes of silence.

A remote segment is never downloaded whole: :func:`open_input` gives a
random-access file whose ``seek``/``readinto`` become ranged GET requests of
the reader's window size, so memory stays that of one window.
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import stat
from functools import lru_cache
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple, cast

from kseg.errors import InputError
from kseg.valueclass import Protocol

if TYPE_CHECKING:  # pyarrow has no type information: its names read as Any
    from pyarrow import NativeFile
    from pyarrow import fs as pafs

_URI = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
# Spellings pyarrow does not know, mapped to the ones it does.
_ALIASES = MappingProxyType({"s3a": "s3", "s3n": "s3", "gcs": "gs", "abfss": "abfs"})
_S3_VARIABLES = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE")
REMOTE_HINT = "install pyarrow to read URIs: pip install 'kseg[remote]'"
TIMEOUT_VARIABLE = "KSEG_NETWORK_TIMEOUT"
DEFAULT_TIMEOUT = 30.0  # seconds: connect timeout, request timeout, GCS retry time limit
S3_ATTEMPTS = 3
CREDENTIALS_HINT = (
    "give credentials in the environment (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE "
    "for s3://, GOOGLE_APPLICATION_CREDENTIALS for gs://) or a profile, never in the URI"
)


class Entry(NamedTuple):
    """One file found by a listing: its path or URI, and its size in bytes (None: not listed)."""

    path: str
    size: int | None


def is_uri(path: str) -> bool:
    """True for ``scheme://...``; a plain path (even one containing ``:``) is local."""
    return _URI.match(path) is not None


def scheme(path: str) -> str:
    """The URI's scheme, lower case and de-aliased (``s3a`` -> ``s3``); ``''`` for a local path."""
    m = _URI.match(path)
    if m is None:
        return ""
    s = m.group(1).lower()
    return _ALIASES.get(s, s)


FILE_URI = "file://"


def local_path(path: str) -> str:
    """A ``file://`` URI as a local path; any other path unchanged."""
    if path.startswith(FILE_URI):
        return path[len(FILE_URI) :] or "/"
    return path


def is_remote(path: str) -> bool:
    """True when ``path`` must be read through a remote filesystem (a URI other than ``file://``)."""
    return scheme(path) not in ("", "file")


def redact(uri: str) -> str:
    """``uri`` with any user information (``user:secret@``) replaced by ``***@``: what errors show."""
    m = _URI.match(uri)
    if m is None:
        return uri
    rest = uri[m.end() :]
    authority, slash, key = rest.partition("/")
    if _has_credentials(scheme(uri), authority):
        authority = "***@" + authority.rsplit("@", 1)[1]
    return uri[: m.end()] + authority + slash + key


def _has_credentials(s: str, authority: str) -> bool:
    """User information on s3:// or gs:// (an access key), or ``user:password@`` on any scheme
    (``abfs://container@account...`` names a container, not a secret)."""
    return "@" in authority and (s in ("s3", "gs") or ":" in authority.rsplit("@", 1)[0])


def check_uri(uri: str) -> None:
    """Refuse, as one :class:`InputError` naming the URI without its credentials, a URI that carries
    credentials (user information on s3:// or gs://, ``user:password@`` anywhere) or is malformed: no
    bucket (``s3://``), an empty path component (``s3://bucket//data``)."""
    m = _URI.match(uri)
    if m is None:
        return
    s = scheme(uri)
    authority, _, key = uri[m.end() :].partition("/")
    if _has_credentials(s, authority):
        raise InputError(
            "credentials in a URI are refused (they would show in process lists, shell history and logs)",
            path=redact(uri),
            hint=CREDENTIALS_HINT,
        )
    if not authority and s not in ("file", "hdfs", "viewfs"):
        raise InputError(
            f"malformed URI: no {'container' if s == 'abfs' else 'bucket'} after {m.group(0)}",
            path=uri,
            hint=f"give it as {m.group(0)}BUCKET/PATH",
        )
    if "//" in key.rstrip("/") or key.startswith("/"):
        raise InputError("malformed URI: an empty path component (//)", path=uri, hint="remove the doubled slash")


def network_timeout() -> float:
    """``KSEG_NETWORK_TIMEOUT`` in seconds (default :data:`DEFAULT_TIMEOUT`); a bad value is an error."""
    text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 86400:
        raise InputError(f"{TIMEOUT_VARIABLE}={text!r}: give seconds, more than 0 and at most 86400")
    return value


def _arrow_errors() -> tuple[type[Exception], ...]:
    """The exceptions a pyarrow filesystem call raises: OSError, ValueError (ArrowInvalid) and every
    other ``pyarrow.lib.ArrowException`` (an Azure authentication failure is a bare one)."""
    from pyarrow.lib import ArrowException

    return (OSError, ValueError, ArrowException)


def _split(uri: str) -> tuple[str, str]:
    """``(prefix, key)``: ``s3://bucket/a/b`` -> (``s3://bucket``, ``a/b``)."""
    m = _URI.match(uri)
    assert m is not None
    rest = uri[m.end() :]
    authority, _, key = rest.partition("/")
    return uri[: m.end()] + authority, key


def bucket(uri: str) -> str:
    """The bucket (``scheme://authority``) of a URI."""
    return _split(uri)[0]


def join(base: str, name: str) -> str:
    """``base/name``: one rule for a local path and a URI (one slash between them; ``.`` or nothing joined to
    ``name`` is ``name``)."""
    return name if base in ("", os.curdir) else base.rstrip("/") + "/" + name


def dirname(uri: str) -> str:
    """The prefix holding the object ``uri``, never above its bucket/authority (a local path's directory is
    its store's: :meth:`kseg.storage.context.Names.dirname`)."""
    prefix, key = _split(uri.rstrip("/"))
    parent = posixpath.dirname(key)
    return prefix + ("/" + parent if parent else "")


class LocalNames:
    """Local paths, and their other spelling, ``file://`` URIs."""

    __slots__ = ()

    def join(self, base: str, name: str) -> str:
        return os.path.join(base, name)

    def dirname(self, path: str) -> str:
        return os.path.dirname(path)

    def display(self, path: str) -> str:
        if path.startswith(FILE_URI):  # a URI, shown as given
            return path
        folded = re.sub(r"/+", "/", path)
        return folded[:-1] if len(folded) > 1 and folded.endswith("/") else folded

    def absolute(self, path: str) -> str:
        p = self.display(path)
        return p if os.path.isabs(p) or p.startswith(FILE_URI) else self.display(os.path.join(os.getcwd(), p))

    def canonical(self, path: str) -> str:
        return os.path.abspath(local_path(path))

    def directory(self, path: str) -> str:
        return path


class ObjectNames:
    """An object store's URIs (``s3://bucket/key``)."""

    __slots__ = ()

    def join(self, base: str, name: str) -> str:
        return base.rstrip("/") + "/" + name

    def dirname(self, path: str) -> str:
        return dirname(path)

    def display(self, path: str) -> str:
        return path

    def absolute(self, path: str) -> str:
        return path

    def canonical(self, path: str) -> str:
        return path.rstrip("/")

    def directory(self, path: str) -> str:
        return path.rstrip("/")


LOCAL_NAMES, OBJECT_NAMES = LocalNames(), ObjectNames()


def basename(path: str) -> str:
    """The last component of ``path``, a local path or a URI alike (trailing slashes and ``.`` ignored)."""
    return posixpath.basename(posixpath.normpath(path))


# -- remote filesystems ---------------------------------------------------------------------------
def _filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """``(pyarrow filesystem, path inside it)`` for a remote URI; filesystems are made once per authority
    and settings (:func:`_made`)."""
    try:
        from pyarrow import fs as pafs  # noqa: F401 - installed? (the error names the extra)
    except ImportError:
        raise InputError(
            f"cannot read {scheme(uri)}:// paths: pyarrow is not installed", path=uri, hint=REMOTE_HINT
        ) from None
    check_uri(uri)
    timeout = network_timeout()
    prefix, key = _split(uri)
    canonical = scheme(uri) + prefix[prefix.index("://") :]
    # the endpoint is part of the key: a filesystem is made for the variables in force when first used
    settings = tuple(os.environ.get(v, "") for v in _S3_VARIABLES)
    try:
        fs = _made(canonical, prefix, timeout, settings)
    except _arrow_errors() as exc:
        raise InputError(
            f"cannot reach the filesystem: {_reason(exc)}",
            path=uri,
            hint="check the URI and the credentials (AWS_* variables for s3://)",
        ) from None
    authority = canonical[canonical.index("://") + 3 :]
    if scheme(uri) in ("hdfs", "viewfs"):
        return fs, "/" + key
    return fs, (authority + "/" + key).rstrip("/") if key else authority


@lru_cache(maxsize=64)
def _made(canonical: str, prefix: str, timeout: float, settings: tuple[str, ...]) -> pafs.FileSystem:
    """The filesystem of ``canonical`` (``settings``: the AWS variables it was made under, a part of the key
    only); made once per process for each, pyarrow's filesystems being thread-safe."""
    from pyarrow import fs as pafs

    if canonical.startswith("s3://"):
        return _s3(pafs, prefix, timeout)
    if canonical.startswith("gs://"):
        from datetime import timedelta

        return pafs.GcsFileSystem(retry_time_limit=timedelta(seconds=timeout))
    return pafs.FileSystem.from_uri(canonical)[0]


def _s3(pafs: ModuleType, prefix: str, timeout: float = DEFAULT_TIMEOUT) -> pafs.S3FileSystem:
    """An S3 filesystem from the standard AWS variables.

    ``allow_delayed_open``: an object smaller than one upload part is written
    with a single PutObject, not a multipart upload (fewer requests, and
    S3-compatible stores that mishandle multipart completion still work).
    """
    kwargs: dict[str, object] = {
        "allow_delayed_open": True,
        "connect_timeout": timeout,
        "request_timeout": timeout,
        "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=S3_ATTEMPTS),
    }
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        kwargs["endpoint_override"] = endpoint
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not region and not endpoint:
        try:
            region = pafs.resolve_s3_region(prefix.split("://", 1)[1])
        except _arrow_errors():
            region = None
    if region:
        kwargs["region"] = region
    return pafs.S3FileSystem(**kwargs)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


#: The store's own words in a pyarrow error: ``AWS Error ACCESS_DENIED during HeadObject operation: ...``.
@lru_cache(maxsize=None)  # (compiled for an object store's error only)
def _provider_error() -> re.Pattern[str]:
    return re.compile(r"AWS Error \w+ during \w+ operation(: [^\n]*)?")


def _mapped(exc: BaseException, uri: str) -> InputError:
    """A store's failure as one line that keeps the store's reason (its error code and message)."""
    text = str(exc)
    said = _provider_error().search(text)
    provider = said.group(0).split(" (Request ID")[0].strip() if said else _reason(exc)
    if "NO_SUCH_BUCKET" in text or "NoSuchBucket" in text:
        return InputError(f"no such bucket ({provider})", path=redact(uri))
    if isinstance(exc, FileNotFoundError):
        return not_found(uri)
    if isinstance(exc, PermissionError) or "ACCESS_DENIED" in text or "AccessDenied" in text:
        return InputError(f"access denied ({provider})", path=redact(uri))
    return InputError(f"cannot read: {provider}", path=redact(uri))


def not_found(uri: str) -> InputError:
    """Nothing at ``uri``: said as "no such bucket" when it is the bucket that is missing (one more request,
    made on this error only: a store answers a missing key and a missing bucket alike to a HEAD)."""
    fs, path = _filesystem(uri)
    bucket = path.split("/", 1)[0]
    if scheme(uri) in ("s3", "gs") and bucket and bucket != path:
        try:
            missing = fs.get_file_info(bucket).type.name == "NotFound"
        except _arrow_errors() as exc:
            return _mapped(exc, uri)
        if missing:
            return InputError(f"no such bucket: {bucket}", path=redact(uri))
    return InputError("no such file or directory", path=redact(uri))


class RemoteFile:
    """A random-access remote file with the subset of the file API the readers use.

    ``readinto`` at the current position is one ranged read; ``size`` is known
    from the open (one HEAD request on S3).
    """

    __slots__ = ("uri", "size", "_f", "_pos")

    uri: str
    size: int
    _f: NativeFile
    _pos: int

    def __init__(self, uri: str) -> None:
        fs, path = _filesystem(uri)
        try:
            self._f = fs.open_input_file(path)  # one HEAD: existence and size
            self.size = self._f.size()
        except _arrow_errors() as exc:
            error = _mapped(exc, uri)
            if isinstance(exc, FileNotFoundError) and kind(uri) == "dir":
                error = InputError("is a directory, not a file", path=uri)
            raise error from None
        self.uri = uri
        self._pos = 0

    def seek(self, position: int, whence: int = 0) -> int:
        self._pos = position if whence == 0 else (self._pos + position if whence == 1 else self.size + position)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def readinto(self, view: memoryview) -> int:
        want = min(len(view), max(0, self.size - self._pos))
        if want <= 0:
            return 0
        try:
            data = self._f.read_at(want, self._pos)
        except _arrow_errors() as exc:
            raise OSError(f"ranged read failed: {_reason(exc)}") from None
        n = len(data)
        view[:n] = data
        self._pos += n
        return n

    def read(self, n: int = -1) -> bytes:
        if n < 0:
            n = self.size - self._pos
        out = bytearray(max(0, min(n, self.size - self._pos)))
        got = self.readinto(memoryview(out))
        return bytes(out[:got])

    def close(self) -> None:
        self._f.close()

    @property
    def closed(self) -> bool:
        """The file API's ``closed`` (pyarrow's Parquet reader asks it of a Python file)."""
        return bool(self._f.closed)

    def __enter__(self) -> "RemoteFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_input(uri: str) -> RemoteFile:
    """Open a remote file for ranged reads (errors as :class:`InputError`)."""
    return RemoteFile(uri)


def open_local(path: str, buffering: int = -1) -> io.FileIO | io.BufferedReader:
    """Open the local file ``path`` (or ``file://`` URI) for reading.  Only regular files are opened: a FIFO
    would block the open (and the whole run) until some writer appeared, and a device is no segment."""
    local = local_path(path)
    try:
        mode = os.stat(local).st_mode
        if stat.S_ISDIR(mode):
            raise InputError("is a directory, not a file", path=path)
        if not stat.S_ISREG(mode):
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


def local_identity(path: str) -> str:
    """What names this version of a local file, for ``--resume``: ``size=<n> mtime_ns=<t> ctime_ns=<t>`` (a user
    can set the mtime back, never the ctime: any write changes it)."""
    try:
        s = os.stat(local_path(path))
    except OSError as exc:
        raise InputError(f"cannot stat: {exc.strerror or exc}", path=path) from None
    return f"size={s.st_size} mtime_ns={s.st_mtime_ns} ctime_ns={s.st_ctime_ns}"


def _info(uri: str) -> pafs.FileInfo:
    """pyarrow's FileInfo of a remote URI (one request)."""
    fs, path = _filesystem(uri)
    try:
        return fs.get_file_info(path)
    except _arrow_errors() as exc:
        raise _mapped(exc, uri) from None


def identity(uri: str) -> str:
    """What names this version of a remote object (one HEAD): ``etag=<ETag>`` where the store gives one (S3
    changes it with every write), else ``size=<n> mtime_ns=<t>`` as the store sets them on a write."""
    fs, path = _filesystem(uri)
    try:
        with fs.open_input_file(path) as f:
            meta = f.metadata() or {}
            size = f.size()
    except _arrow_errors() as exc:
        raise _mapped(exc, uri) from None
    fields = {(k.decode() if isinstance(k, bytes) else str(k)).lower(): v for k, v in meta.items()}
    for name in ("etag", "x-goog-generation"):
        value = fields.get(name)
        if value:
            return f"{name}={value.decode('utf-8', 'replace') if isinstance(value, bytes) else value}"
    info = _info(uri)
    return f"size={size} mtime_ns={info.mtime_ns}"


def kind(uri: str) -> str:
    """``'file'``, ``'dir'`` or ``'missing'`` for a remote URI (one request)."""
    return {"File": "file", "Directory": "dir"}.get(_info(uri).type.name, "missing")


def children(uri: str) -> list[Entry]:
    """The files directly under a prefix (one listing)."""
    uri = uri.rstrip("/")
    return [e for e in list_tree(uri) if dirname(e.path) == uri]


def mtime_ms(uri: str) -> int:
    """The object's modification time in epoch milliseconds (one request)."""
    info = _info(uri)
    if info.mtime is None:
        raise InputError("the store gives no modification time", path=uri)
    return int(info.mtime.timestamp() * 1000)


def list_tree(uri: str) -> list[Entry]:
    """Every file under ``uri``, recursively, with sizes, sorted by path.

    One listing: on S3 that is ``ListObjectsV2`` pages of 1,000 keys, so
    10^5 partitions of 100 segments (4 x 10^7 files) cost 4 x 10^4 requests,
    not one round trip per directory.
    """
    from pyarrow import fs as pafs

    out = [Entry(full, info.size) for full, info in _listing(uri, True) if info.type == pafs.FileType.File]
    out.sort()
    return out


def list_level(uri: str) -> tuple[list[str], list[Entry]]:
    """The prefixes (directories) and the files directly under ``uri``: one listing with a delimiter (on S3
    one ``ListObjectsV2`` page per 1,000 names, not the whole tree), each sorted."""
    from pyarrow import fs as pafs

    dirs, found = [], []
    for full, info in _listing(uri, False):
        if info.type == pafs.FileType.Directory:
            dirs.append(full)
        elif info.type == pafs.FileType.File:
            found.append(Entry(full, info.size))
    return sorted(dirs), sorted(found)


def _listing(uri: str, recursive: bool) -> Iterator[tuple[str, pafs.FileInfo]]:
    """``(URI, FileInfo)`` of every entry of one listing under ``uri`` (raises :class:`InputError`), each
    made as it is taken."""
    from pyarrow import fs as pafs

    fs, path = _filesystem(uri)
    prefix, _ = _split(uri)
    try:
        infos = fs.get_file_info(pafs.FileSelector(path, recursive=recursive, allow_not_found=True))
    except _arrow_errors() as exc:
        raise _mapped(exc, uri) from None
    authority_len = len(prefix) - prefix.index("://") - 3
    hdfs = scheme(uri) in ("hdfs", "viewfs")
    infos.reverse()
    while infos:  # each of pyarrow's FileInfo let go as its caller takes it: the listing is never held twice
        info = infos.pop()
        yield (prefix + info.path if hdfs else prefix + info.path[authority_len:]), info


class OutputStream(Protocol):
    """What a writer hands its producer (:func:`write_stream`, ``files.write_stream``): the binary file
    API's ``write`` -- a store's output stream, or an :class:`~kseg.storage.atomic.AtomicStream`."""

    def write(self, data: bytes, /) -> object: ...  # pragma: no cover - protocol


def write_stream(uri: str, produce: Callable[[OutputStream], object], *, replace: bool) -> None:
    """Write one remote object made piece by piece by ``produce(file)``; an existing object is an
    error unless ``replace``.  On S3 the object appears only when the upload completes, so a
    failed write leaves nothing behind."""
    fs, path = _filesystem(uri)
    if not replace and kind(uri) != "missing":
        raise InputError("exists; not replaced (give --force to replace it)", path=uri)
    try:
        with fs.open_output_stream(path) as out:
            produce(out)
    except _arrow_errors() as exc:
        raise InputError(f"cannot write: {_reason(exc)}", path=uri) from None


def move(source: str, target: str) -> None:
    """Move one remote object to ``target`` on the same store (on S3 a copy, then a delete)."""
    fs, path = _filesystem(source)
    _, to = _filesystem(target)
    try:
        fs.move(path, to)
    except _arrow_errors() as exc:
        raise InputError(f"cannot move into place: {_reason(exc)}", path=redact(target)) from None


def delete(uri: str) -> None:
    """Remove one remote object."""
    fs, path = _filesystem(uri)
    try:
        fs.delete_file(path)
    except _arrow_errors() as exc:
        raise _mapped(exc, uri) from None
