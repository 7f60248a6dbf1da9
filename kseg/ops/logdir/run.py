"""The paths of a ``kseg logdir`` run as log directories, each read once, and the checks across them."""

from __future__ import annotations

import os

from kseg.errors import InputError
from kseg.ops.logdir.logdir import LogDirReport, inspect, topic_id_problems
from kseg.storage import files, location, outputs
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


def check_report(path: str, inputs: list[str], force: bool) -> None:
    """``--report`` checked before any work: a local file, never inside an input, replaced only with
    ``force`` (:class:`kseg.errors.KsegError` says why not)."""
    outputs.refuse_on_inputs(path, inputs, "--report")
    if location.is_remote(path):
        raise InputError("the report is a local file (logdir reads local log directories)", path=path)
    outputs.check_file_target(path, force=force, option="--report")


def write_report(path: str, lines: list[str], force: bool) -> None:
    """The JSON Lines rows into ``path``: the name appears only when the file is whole."""
    files.write_stream(path, lambda f: f.write("".join(line + "\n" for line in lines).encode("utf-8")), replace=force)
