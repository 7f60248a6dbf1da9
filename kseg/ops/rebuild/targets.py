"""What ``rebuild-index`` works on, decided before any work: the command line's paths as partitions (each
once), where each one's rebuilt files go, and the writes refused before anything is read.

Kafka rebuilds indexes beside the log (``LogSegment.recover`` during ``LogLoader.load``); kseg writes beside
a local log or into ``--output-dir`` (a log root's partitions in subdirectories of their names)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kseg.errors import InputError, UsageError
from kseg.ops.rebuild.rebuild import Target, resolve
from kseg.storage.atomic import clean_stale
from kseg.storage.files import INDEX, TIME_INDEX, TXN_INDEX
from kseg.storage.partition import Partition, nothing_found, nothing_in
from kseg.storage.stores.find import check_exists

if TYPE_CHECKING:
    from kseg.storage.outputs import Destination

Work = list[tuple[Target, "Destination | None"]]  # (target, the directory its files go to: None beside its log)


def plan(paths: list[str], notes: list[str], *, output: Destination | None, check: bool) -> list[Target]:
    """The targets of ``paths`` (:func:`kseg.ops.rebuild.rebuild.resolve`, each partition directory once),
    its notes appended to ``notes``; :class:`KsegError` for an output on an input, a path that does not
    exist, nothing to rebuild, two partitions of one ``--output-dir`` subdirectory, or a write beside a
    remote log."""
    if output is not None:  # before any work, --force or not
        from kseg.storage.outputs import refuse_on_inputs

        refuse_on_inputs(output.path, paths, "--output-dir", hint="to write beside each log, leave out --output-dir")
    for path in paths:
        check_exists(path)
    targets = unique(resolve(paths, notes))
    if nothing_in([t.partition for t in targets]):
        raise nothing_found(paths)
    if output is not None:
        check_output_names(targets)
    elif not check:
        refuse_remote_writes(targets)
    return targets


def work(targets: list[Target], output: Destination | None) -> tuple[Work, list[Partition]]:
    """``(work, unreadable)``: each target with the directory its files go to, and each partition
    directory that could not be listed (``error`` says why; nothing of it is read: a failed row, exit 2)."""
    todo: Work = []
    unreadable = []
    for target in targets:
        if target.partition.error is not None:
            unreadable.append(target.partition)
            continue
        directory = None
        if output is not None:  # (a log root's partitions each in a subdirectory, on the output's store)
            directory = (
                output._replace(path=os.path.join(output.path, target.output_subdir))
                if target.output_subdir
                else output
            )
        todo.append((target, directory))
    return todo, unreadable


def log_bytes(todo: Work) -> int:
    """The bytes of the logs ``todo`` reads (the selected segments of each target)."""
    return sum(
        seg.log_size()
        for target, _ in todo
        for seg in target.partition.segments
        if seg.log and (target.selected is None or seg.base_offset in target.selected)
    )


def clean_stale_indexes(todo: Work) -> Iterator[list[str]]:
    """Before writing: the temporary index files a killed run left (``.<name>.<hex>.kseg-tmp``, a kill
    between the link and the rename) in each local directory ``todo`` writes to are removed; the names
    removed, a list per directory."""

    def ours(name: str) -> bool:
        return name.endswith((INDEX, TIME_INDEX, TXN_INDEX))

    seen = set()
    for target, directory in todo:
        where, store = (target.partition.path, target.partition.store) if directory is None else directory
        if store.remote or where in seen:
            continue
        seen.add(where)
        yield clean_stale(where, ours)


def unique(targets: list[Target]) -> list[Target]:
    """Each partition directory once (given twice, or directly and through its log root)."""
    seen: dict[str, Target] = {}
    out = []
    for target in targets:
        key = os.path.realpath(target.partition.path)
        first = seen.get(key)
        if first is None:
            seen[key] = target
            out.append(target)
        elif target.selected is None or first.selected is None:
            if first.selected is not None:  # the whole directory supersedes single files of it
                first.selected = None
        else:
            first.selected |= target.selected
    return out


def refuse_remote_writes(targets: list[Target]) -> None:
    """Indexes are written beside a log only on local disk (atomic rename); a remote log needs
    ``--check`` or ``--output-dir``."""
    for target in targets:
        if target.partition.store.remote:
            raise UsageError(
                "kseg writes indexes beside a log only on local disk",
                path=target.partition.path,
                hint="compare with --check, or write the rebuilt files to a local --output-dir",
            )


def check_output_names(targets: list[Target]) -> None:
    """Two log roots holding partitions of one name would write one --output-dir subdirectory."""
    where: dict[str, str] = {}
    for target in targets:
        if not target.output_subdir:
            continue
        other = where.setdefault(target.output_subdir, target.partition.path)
        if other != target.partition.path:
            raise InputError(
                f"{other} and {target.partition.path} would both be written to "
                f"--output-dir subdirectory {target.output_subdir}/ (replicas from two log "
                "directories): rebuild one log directory at a time"
            )
