"""Producer-state snapshots of a partition, chosen as Kafka's log recovery chooses them.

``ProducerStateManager`` keeps ``<offset>.snapshot`` files (written at every
roll, at the new segment's base offset, and at clean shutdown, at the log end
offset).  When a log is loaded (``UnifiedLog.rebuildProducerState`` →
``ProducerStateManager.truncateAndReload`` / ``loadFromSnapshot``):

* snapshots above the log end offset are deleted (``truncateFullyAndReloadSnapshots``
  on truncation; they describe data the log no longer has);
* snapshots below the log start offset are deleted;
* the latest remaining one is read; a corrupt one (``CorruptSnapshotException``)
  is deleted and the next older one is tried;
* with none left, state starts empty and the log is replayed from its start.

kseg only reads: a snapshot Kafka would delete is skipped with a note.
Only the open transactions of a snapshot (``currentTxnFirstOffset``) matter
for transaction state (:mod:`kseg.storage.txn_rebuild`).
"""

from __future__ import annotations

from typing import NamedTuple

from kseg.errors import CorruptSnapshotError, InputError
from kseg.format.snapshot import ProducerEntry, parse_snapshot
from kseg.storage import files


class Snapshot(NamedTuple):
    """One readable snapshot: its offset (the file name), path and entries."""

    offset: int
    path: str
    entries: list[ProducerEntry]

    def open_txns(self) -> dict[int, int]:
        """producerId -> ``currentTxnFirstOffset`` of the producers with an open transaction."""
        return {e.producer_id: e.current_txn_first_offset for e in self.entries if e.current_txn_first_offset >= 0}

    def entry(self, producer_id: int) -> ProducerEntry | None:
        return next((e for e in self.entries if e.producer_id == producer_id), None)


def snapshot_paths(paths: list[str]) -> list[tuple[int, str]]:
    """``(offset, path)`` of the ``.snapshot`` files whose name carries an offset, in offset order."""
    out = []
    for path in paths:
        offset = files.base_offset_from_name(path)
        if offset is not None:
            out.append((offset, path))
    return sorted(out)


def read_snapshot(path: str, offset: int) -> Snapshot:
    """Read and check one snapshot; :class:`CorruptSnapshotError` anchored at the file."""
    data = files.read_small_file(path)
    try:
        return Snapshot(offset, path, parse_snapshot(data))
    except CorruptSnapshotError as exc:
        raise exc.at(path) from None


def readable_snapshots(paths: list[str], log_start: int, log_end: int, notes: list[str]) -> list[Snapshot]:
    """Every snapshot recovery could use, in offset order; the others skipped with a note.

    Raises :class:`InputError` for a snapshot that cannot be read at all (permission
    denied): that is an I/O error, not a corrupt file.
    """
    out = []
    for offset, path in snapshot_paths(paths):
        shown = files.display(path)
        if offset > log_end:
            notes.append(f"{shown}: skipped, above the log end offset {log_end} (Kafka deletes it on load)")
            continue
        if offset < log_start:
            notes.append(f"{shown}: skipped, below the log start offset {log_start} (Kafka deletes it)")
            continue
        try:
            out.append(read_snapshot(path, offset))
        except InputError:
            raise
        except CorruptSnapshotError as exc:
            notes.append(f"{exc.describe()}: skipped (Kafka deletes a corrupt snapshot and uses an older one)")
    return out
