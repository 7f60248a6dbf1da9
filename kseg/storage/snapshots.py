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
for transaction state (:mod:`kseg.storage.producer_state`).
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

from kseg.errors import CorruptSnapshotError, InputError
from kseg.format.crc import crc32c_function
from kseg.format.snapshot import ENTRY_SIZE, HEAD_SIZE, ProducerEntry, check_crc, check_head, entries_in
from kseg.storage import files
from kseg.storage.context import Store
from kseg.storage.read import Kind


class Snapshot(NamedTuple):
    """One readable snapshot: its offset (the file name), path, how many producers it holds, and the entries
    of those with an open transaction (all that transaction state reads; a snapshot of millions of
    idempotent producers is not held)."""

    offset: int
    path: str
    producers: int
    open_entries: dict[int, ProducerEntry]  # producerId -> entry, currentTxnFirstOffset >= 0

    def open_txns(self) -> dict[int, int]:
        """producerId -> ``currentTxnFirstOffset`` of the producers with an open transaction."""
        return {pid: e.current_txn_first_offset for pid, e in self.open_entries.items()}

    def entry(self, producer_id: int) -> ProducerEntry | None:
        """The entry of a producer with an open transaction in this snapshot, else None."""
        return self.open_entries.get(producer_id)


WINDOW_ENTRIES = 8192  # entries read at a time (368 KiB)
#: ``ProducerStateManager.readSnapshot`` reads a snapshot whole into one array (``Files.readAllBytes``): Java's
#: arrays end below 2 GiB.  kseg streams it (a window at a time) and refuses a larger one before reading it.
KIND = Kind("producer snapshot", (1 << 31) - 9, "Kafka reads a snapshot whole into one Java array, under 2 GiB")


def iter_snapshot(path: str, store: Store) -> Iterator[ProducerEntry]:
    """The entries of the snapshot at ``path``, read in windows of :data:`WINDOW_ENTRIES`: the header and
    the CRC over the whole file are checked first (a first pass), so a corrupt snapshot raises
    :class:`CorruptSnapshotError` (anchored at the file) before any entry, as Kafka reads it whole
    (``ProducerStateManager.readSnapshot``).  Memory is one window, whatever the producer count."""
    crc32c = crc32c_function()

    with files.open_readonly(path, store=store) as f:
        try:
            size = files.size_of(f)
            if size > KIND.max_bytes:
                raise KIND.refusal(path, f"{size} bytes", f"{KIND.max_bytes} bytes")
            head = f.read(HEAD_SIZE)
            try:
                stored, count = check_head(head, size)
            except CorruptSnapshotError as exc:
                raise exc.at(path) from None
            body = HEAD_SIZE + count * ENTRY_SIZE
            crc = crc32c(head[6:])
            step = WINDOW_ENTRIES * ENTRY_SIZE
            while chunk := f.read(step):
                crc = crc32c(chunk, crc)
            try:
                check_crc(stored, crc)
            except CorruptSnapshotError as exc:
                raise exc.at(path) from None
            f.seek(HEAD_SIZE)
            at = HEAD_SIZE
            while at < body:
                chunk = f.read(min(step, body - at))
                if len(chunk) < min(step, body - at):
                    raise InputError(
                        f"file shrank while being read: expected {body} bytes", path=path, position=at + len(chunk)
                    )
                yield from entries_in(chunk)
                at += len(chunk)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", path=path) from None


def snapshot_paths(paths: list[str], log_end: int | None = None) -> list[tuple[int, str]]:
    """``(offset, path)`` of the ``.snapshot`` files whose name carries an offset, in offset order.

    A tiered segment's snapshot (Aiven's ``producerSnapshot`` in ``.indexes``, ``LocalTieredStorage``'s
    ``<start>-<id>.snapshot``) is named by its segment's start, but holds the state at the *next*
    segment's base offset (``RemoteLogManager.copyLogSegment``:
    ``producerStateManager.fetchSnapshot(nextSegmentBaseOffset)``): its offset is the start of the next
    tiered segment listed, and for the last one ``log_end`` (without ``log_end``, it is left out)."""
    out: list[tuple[int, str]] = []
    tiered: list[tuple[int, str]] = []
    for path in paths:
        offset = files.base_offset_from_name(path)
        if offset is None:
            continue
        (tiered if files.tiered_segment_id(path) is not None else out).append((offset, path))
    tiered.sort()
    for i, (_, path) in enumerate(tiered):
        end = tiered[i + 1][0] if i + 1 < len(tiered) else log_end
        if end is not None:
            out.append((end, path))
    return sorted(out)


def read_snapshot(path: str, offset: int, store: Store) -> Snapshot:
    """Read and check one snapshot, keeping the entries with an open transaction (:class:`Snapshot`);
    :class:`CorruptSnapshotError` anchored at the file."""
    producers = 0
    open_entries = {}
    for producers, entry in enumerate(iter_snapshot(path, store), 1):  # noqa: B007 - the count is the last index
        if entry.current_txn_first_offset >= 0:
            open_entries[entry.producer_id] = entry
    return Snapshot(offset, path, producers, open_entries)


def readable_snapshots(
    paths: list[str], log_start: int, log_end: int, notes: list[str], store: Store
) -> list[Snapshot]:
    """Every snapshot recovery could use, in offset order; the others skipped with a note.

    Raises :class:`InputError` for a snapshot that cannot be read at all (permission
    denied): that is an I/O error, not a corrupt file.
    """
    out = []
    for offset, path in snapshot_paths(paths, log_end):
        shown = files.display(path, store)
        if offset > log_end:
            notes.append(f"{shown}: skipped, above the log end offset {log_end} (Kafka deletes it on load)")
            continue
        if offset < log_start:
            notes.append(f"{shown}: skipped, below the log start offset {log_start} (Kafka deletes it)")
            continue
        try:
            out.append(read_snapshot(path, offset, store))
        except InputError:
            raise
        except CorruptSnapshotError as exc:
            notes.append(f"{exc.describe()}: skipped (Kafka deletes a corrupt snapshot and uses an older one)")
    return out
