"""Segment file names and whole-file reads (``LogFileUtils``, ``Snapshots``).

Kafka names segment files by the base offset, 20 zero-padded digits, and a
suffix: ``.log``, ``.index``, ``.timeindex``, ``.txnindex``, ``.snapshot``;
KRaft snapshots are ``<endOffset 20 digits>-<epoch 10 digits>.checkpoint``.
kseg accepts any integer stem (``00000.log``), as Kafka's tool parses the
part before the first dot with ``Long.parseLong``.
"""

from __future__ import annotations

import os
import re
import stat

from kseg.errors import InputError

LOG, INDEX, TIME_INDEX, TXN_INDEX, SNAPSHOT, CHECKPOINT = (
    ".log",
    ".index",
    ".timeindex",
    ".txnindex",
    ".snapshot",
    ".checkpoint",
)
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"
_LONG = re.compile(r"[+-]?[0-9]+\Z")
_CHECKPOINT = re.compile(r"([0-9]{20})-([0-9]{10})\.checkpoint\Z")
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
MAX_INDEX_FILE = 1 << 30  # Kafka's segment.index.bytes is an int; 1 GiB is far beyond any real index


def suffix(path: str) -> str:
    """The part of the file name from its last dot (Kafka's dispatch key); '' if none."""
    name = os.path.basename(path)
    dot = name.rfind(".")
    return name[dot:] if dot >= 0 else ""


def stem(path: str) -> str:
    """The part of the file name before its first dot."""
    return os.path.basename(path).split(".")[0]


def base_offset_from_name(path: str) -> int | None:
    """``Long.parseLong`` of the stem, or ``None`` when it carries no base offset."""
    s = stem(path)
    if not _LONG.match(s):
        return None
    value = int(s)
    return value if INT64_MIN <= value <= INT64_MAX else None


def sibling(path: str, new_suffix: str) -> str:
    """The file of the same stem with another suffix, in the same directory."""
    directory = os.path.dirname(absolute(path))
    return os.path.join(directory, stem(path) + new_suffix)


def parse_checkpoint_name(path: str) -> tuple[int, int] | None:
    """``Snapshots.parse``: (end offset, epoch) of a KRaft snapshot name."""
    m = _CHECKPOINT.match(os.path.basename(path))
    if not m:
        return None
    return int(m.group(1)), int(m.group(2))


def display(path: str) -> str:
    """The path as Java's ``File.toString`` shows it (duplicate and trailing slashes folded)."""
    if not path:
        return path
    folded = re.sub(r"/+", "/", path)
    if len(folded) > 1 and folded.endswith("/"):
        folded = folded[:-1]
    return folded


def absolute(path: str) -> str:
    """Java's ``getAbsolutePath``: cwd prefixed, ``..`` left as is."""
    p = display(path)
    if os.path.isabs(p):
        return p
    return display(os.path.join(os.getcwd(), p))


def open_readonly(path: str, buffering: int = -1):
    """Open ``path`` for reading; the usual faults become one :class:`InputError`.

    Only regular files are opened: a FIFO would block the open (and the whole
    run) until some writer appeared, and a device is no segment.
    """
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            raise InputError("is a directory, not a file", path=path)
        if not stat.S_ISREG(mode):
            raise InputError("not a regular file (a FIFO, socket or device); kseg reads segment files", path=path)
        return open(path, "rb", buffering=buffering)
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except PermissionError:
        raise InputError("permission denied", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", path=path) from None


def read_small_file(path: str, limit: int = MAX_INDEX_FILE) -> bytes:
    """Read an index or snapshot file whole, refusing anything over ``limit`` bytes."""
    with open_readonly(path) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise InputError(f"file of {size} bytes is larger than any index Kafka writes ({limit})", path=path)
            return f.read(size)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=path) from None
