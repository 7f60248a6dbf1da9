"""Where the partitions under a path given lie: one rule for every command, local and on object stores.

A path given is one of (Kafka's ``LogManager`` layout):

* a **partition directory**: it holds a segment file (``orders-0/00000000000000000000.log``);
* a **log directory** (``log.dirs``): it holds ``meta.properties``, ``.kafka_cleanshutdown`` or an offset
  checkpoint (:data:`~kseg.storage.names.LOG_DIR_MARKERS`), or a partition directory;
* a directory with log directories below it, at most :data:`DEPTH` levels down: a broker's directory
  holding its log directories (``b1/`` holding ``data/``), a fleet root (``<root>/<broker>/<log dir>/``),
  one more level to spare (``<root>/<broker>/<disk>/<log dir>/``).

A log directory's partition directories are the ones read; nothing below a log directory is searched
for more log directories.  A directory of a root holding no log directory is named in a note, never
dropped unsaid; a path with no log directory within :data:`DEPTH` levels is an error.  The local walk
(:mod:`kseg.storage.partition`), the object-store listing (:mod:`kseg.storage.prefixes`) and ``kseg
logdir`` all take their depth and their test for a log directory from here.
"""

from __future__ import annotations

from collections.abc import Iterable

from kseg.storage.names import LOG_DIR_MARKERS

#: Levels below a path given at which a log directory is still found (the path itself is level 0).
DEPTH = 3

#: The note for a directory of a root with no log directory in it.
NO_LOG_DIR = "no log directory in it (no meta.properties, checkpoint or partition directory): not read"


def marks_log_dir(names: Iterable[str]) -> bool:
    """True when a directory's file names include one only a log directory holds."""
    return any(name in LOG_DIR_MARKERS for name in names)


def levels_below(root: str, directory: str) -> int:
    """How many levels ``directory`` lies below ``root`` (``/``-separated, ``root`` itself 0)."""
    root, directory = root.rstrip("/"), directory.rstrip("/")
    if directory == root:
        return 0
    return directory[len(root) :].strip("/").count("/") + 1


def within(root: str, log_dir: str) -> bool:
    """True when the log directory ``log_dir`` lies at most :data:`DEPTH` levels below ``root``."""
    return levels_below(root, log_dir) <= DEPTH
