"""Partitions under a URI, found with one recursive listing (``LocalLog``'s layout, remotely).

On an object store there are no directories, only keys; a round trip per
"directory" would make 10^5 partitions 10^5 sequential requests.  So one
recursive listing of the prefix is grouped here: every "directory" holding
segment files is a partition directory, its parent the log directory.  That
covers a broker log root, a partition directory, plain segment files under
any prefix (backups of log dirs, copies of tiered-storage uploads), and a
tree of many brokers' log roots.  The layout rules (transition directories
and files skipped, names carrying the base offset) are the local ones of
:mod:`kseg.storage.partition`.
"""

from __future__ import annotations

from kseg.errors import InputError
from kseg.storage import files, location
from kseg.storage.partition import (
    LAYOUT_HINT,
    natural_key,
    SEGMENT_SUFFIXES,
    TRANSITION_DIR,
    TRANSITION_FILE_SUFFIXES,
    Partition,
    Segment,
)

_SLOT = {files.LOG: "log", files.INDEX: "index", files.TIME_INDEX: "timeindex", files.TXN_INDEX: "txnindex"}


def discover_uri(uri: str, notes: list[str]) -> list[Partition]:
    """The partitions under ``uri`` (a prefix or one segment file), in path order.

    Raises :class:`InputError` when nothing under ``uri`` is a segment file.
    """
    uri = uri.rstrip("/")
    kind = location.kind(uri)
    if kind == "file":
        return [_one_segment(uri, notes)]
    entries = location.list_tree(uri)
    if kind == "missing" and not entries:
        raise InputError("no such file or directory", path=uri)
    by_dir: dict[str, list[location.Entry]] = {}
    for entry in entries:
        by_dir.setdefault(location.dirname(entry.path), []).append(entry)
    partitions = []
    skipped: set[str] = set()
    for directory in sorted(by_dir, key=natural_key):
        if not any(files.suffix(e.path) in SEGMENT_SUFFIXES for e in by_dir[directory]):
            continue
        transit = _in_transition(directory, uri)
        if transit:
            if transit not in skipped:
                skipped.add(transit)
                notes.append(f"{transit}: skipped, a partition directory in transition")
            continue
        partitions.append(_partition(directory, by_dir[directory], notes))
    if not partitions:
        raise InputError("no partition directories or segment files found", path=uri, hint=LAYOUT_HINT)
    return partitions


def _in_transition(directory: str, root: str) -> str | None:
    """The first directory at or below ``root`` on the way to ``directory`` named ``*-delete`` & co."""
    rel = directory[len(root):].strip("/")
    path = root
    for part in rel.split("/") if rel else []:
        path = path + "/" + part
        if TRANSITION_DIR.match(part):
            return path
    return None


def _partition(directory: str, entries: list[location.Entry], notes: list[str]) -> Partition:
    part = Partition(directory)
    by_base: dict[int, Segment] = {}
    for entry in sorted(entries):
        name = location.basename(entry.path)
        if name.endswith(TRANSITION_FILE_SUFFIXES):
            notes.append(f"{entry.path}: skipped, a file in transition ({name.rsplit('.', 1)[1]})")
            continue
        sfx = files.suffix(name)
        if sfx == files.SNAPSHOT:
            part.snapshots.append(entry.path)
            continue
        if sfx not in SEGMENT_SUFFIXES:
            continue
        base = files.base_offset_from_name(name)
        if base is None:
            notes.append(f"{entry.path}: skipped, the name carries no base offset")
            continue
        seg = by_base.setdefault(base, Segment(base))
        setattr(seg, _SLOT[sfx], entry.path)
        if sfx == files.LOG:
            seg.log_bytes = entry.size
    part.segments = [by_base[b] for b in sorted(by_base)]
    return part


def scan_remote_partition(uri: str, notes: list[str]) -> Partition:
    """:func:`kseg.storage.partition.scan_partition` for a prefix: its direct children only."""
    uri = uri.rstrip("/")
    return _partition(uri, [e for e in location.list_tree(uri) if location.dirname(e.path) == uri], notes)


def _one_segment(uri: str, notes: list[str]) -> Partition:
    base = files.base_offset_from_name(uri)
    if base is None:
        raise InputError("not a segment file: the name carries no base offset", path=uri, hint=LAYOUT_HINT)
    directory = location.dirname(uri)
    siblings = [e for e in location.list_tree(directory) if location.dirname(e.path) == directory]
    whole = _partition(directory, siblings, notes)
    whole.segments = [s for s in whole.segments if s.base_offset == base]
    return whole
