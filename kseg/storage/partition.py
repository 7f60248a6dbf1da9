"""Partition directories and log roots (``LocalLog``, ``LogFileUtils``).

A partition directory (``orders-3/``) holds segments ``<base>.log`` with
``.index``, ``.timeindex`` and ``.txnindex``, producer ``<offset>.snapshot``
files, ``leader-epoch-checkpoint`` and ``partition.metadata``.  A log root
holds many partition directories.  Directories named ``*-delete``,
``*-future`` and ``*-stray`` are partitions in transition and are skipped
with a note; files ending ``.deleted``, ``.cleaned`` or ``.swap`` likewise.

:func:`discover` turns command-line paths (log roots, partition directories
or single segment files) into :class:`Partition` objects listing their
segments in base-offset order.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from kseg.errors import InputError
from kseg.storage import files, location

TRANSITION_DIR = re.compile(r".*-(delete|future|stray)\Z")
_DIR_DELETE = re.compile(r".*\.[0-9a-f]{32}-delete\Z")
TRANSITION_FILE_SUFFIXES = (".deleted", ".cleaned", ".swap")
SEGMENT_SUFFIXES = (files.LOG, files.INDEX, files.TIME_INDEX, files.TXN_INDEX)


@dataclass
class Segment:
    """The files of one segment, by base offset; a missing file is ``None``."""

    base_offset: int
    log: str | None = None
    index: str | None = None
    timeindex: str | None = None
    txnindex: str | None = None
    log_bytes: int | None = None  # the .log's size when a listing gave it (remote segments)

    @property
    def name(self) -> str:
        return f"{self.base_offset:020d}"

    def log_size(self) -> int:
        if self.log_bytes is not None:
            return self.log_bytes
        try:
            return os.path.getsize(self.log) if self.log else 0
        except OSError:
            return 0


@dataclass
class Partition:
    """One partition directory (or a set of loose segment files)."""

    path: str
    segments: list[Segment] = field(default_factory=list)
    snapshots: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return os.path.basename(os.path.normpath(self.path))


def is_partition_dir(path: str) -> bool:
    """True when ``path`` holds at least one segment file."""
    try:
        with os.scandir(path) as it:
            return any(e.is_file() and e.name.endswith(SEGMENT_SUFFIXES) for e in it)
    except OSError:
        return False


def scan_partition(path: str, notes: list[str] | None = None) -> Partition:
    """List the segments of one partition directory, in base-offset order."""
    part = Partition(path)
    by_base: dict[int, Segment] = {}
    try:
        names = sorted(os.listdir(path))
    except PermissionError:
        raise InputError("permission denied", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot list directory: {exc.strerror or exc}", path=path) from None
    for name in names:
        full = os.path.join(path, name)
        if name.endswith(TRANSITION_FILE_SUFFIXES):
            if notes is not None:
                notes.append(f"{full}: skipped, a file in transition ({name.rsplit('.', 1)[1]})")
            continue
        sfx = files.suffix(name)
        if sfx == files.SNAPSHOT:
            part.snapshots.append(full)
            continue
        if sfx not in SEGMENT_SUFFIXES:
            continue
        base = files.base_offset_from_name(name)
        if base is None:
            if notes is not None:
                notes.append(f"{full}: skipped, the name carries no base offset")
            continue
        seg = by_base.setdefault(base, Segment(base))
        setattr(seg, {".log": "log", ".index": "index", ".timeindex": "timeindex", ".txnindex": "txnindex"}[sfx],
                full)
    part.segments = [by_base[b] for b in sorted(by_base)]
    return part


def discover(paths: list[str], notes: list[str]) -> list[Partition]:
    """Resolve command-line paths to partitions.

    * a directory holding segment files is a partition directory;
    * any other directory is a log root: each subdirectory holding segment
      files is a partition (transition directories skipped with a note);
    * a file is taken as one segment: its siblings of the same base offset
      join it.

    Raises :class:`InputError` for a path that does not exist.
    """
    partitions: list[Partition] = []
    loose: dict[str, Partition] = {}
    for path in paths:
        if location.is_remote(path):
            from kseg.storage.remote import discover_uri

            partitions.extend(discover_uri(path, notes))
            continue
        path = location.local_path(path)
        if not os.path.exists(path):
            raise InputError("no such file or directory", path=path)
        if os.path.isdir(path):
            if is_partition_dir(path):
                partitions.append(scan_partition(path, notes))
                continue
            found = False
            for entry in sorted(os.scandir(path), key=lambda e: e.name):
                if not entry.is_dir():
                    continue
                if TRANSITION_DIR.match(entry.name):
                    notes.append(f"{entry.path}: skipped, a partition directory in transition")
                    continue
                if is_partition_dir(entry.path):
                    partitions.append(scan_partition(entry.path, notes))
                    found = True
            if not found:
                notes.append(f"{path}: no partition directories or segment files found")
            continue
        directory = os.path.dirname(os.path.abspath(path))
        base = files.base_offset_from_name(path)
        if base is None:
            raise InputError("not a segment file: the name carries no base offset", path=path)
        whole = scan_partition(directory)
        part = loose.setdefault(directory, Partition(directory))
        if part not in partitions:
            partitions.append(part)
        for seg in whole.segments:
            if seg.base_offset == base and seg not in part.segments:
                part.segments.append(seg)
        part.segments.sort(key=lambda s: s.base_offset)
    return partitions
