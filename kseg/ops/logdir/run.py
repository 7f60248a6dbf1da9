"""The paths of a ``kseg logdir`` run as log directories, each read once, and the checks across them."""

from __future__ import annotations

import os

from kseg.errors import InputError
from kseg.ops.logdir.logdir import LogDirReport, inspect, topic_id_problems
from kseg.storage import location
from kseg.storage.partition import check_exists, is_partition_dir

LOCAL_ONLY = "logdir reads a broker's local log directories (an object store holds no checkpoints)"


def inspect_all(paths: list[str]) -> list[LogDirReport]:
    """Each path a log directory, or a partition directory (then its log directory, for that partition
    only); the same directory given twice is read once.  Raises :class:`InputError` for a path that is
    missing, remote, not a directory or cannot be listed, before anything is read."""
    targets: dict[tuple[str, str | None], str] = {}
    for path in paths:
        check_exists(path)
        if location.is_remote(path):
            raise InputError(LOCAL_ONLY, path=path)
        path = location.local_path(path)
        if not os.path.isdir(path):
            raise InputError("not a directory: give a broker's log directory (log.dirs)", path=path)
        if is_partition_dir(path):
            parent = os.path.dirname(os.path.abspath(path))
            targets.setdefault((os.path.realpath(parent), os.path.basename(os.path.abspath(path))), parent)
        else:
            targets.setdefault((os.path.realpath(path), None), path)
    reports = [inspect(path, only) for (_, only), path in targets.items()]
    topic_id_problems(reports)
    return reports
