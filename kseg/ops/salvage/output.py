"""The new partition directory: built beside its target (:class:`kseg.storage.atomic.AtomicDirectory`), the
kept batches copied into ``<base offset>.log`` files as they are kept and fed, at the positions they get
there, to Kafka's recovery rule (:class:`~kseg.ops.rebuild.recovery.Recovery`, ``rebuild-index``'s), which
makes the ``.index``, ``.timeindex`` and ``.txnindex`` recovery would write for the new logs -- without
reading them back; the partition's ``partition.metadata`` and ``leader-epoch-checkpoint`` copied; then
renamed into place.  Each file is synced once, when whole.

Producer snapshots are not written: with none, Kafka rebuilds producer state by reading the log
(``UnifiedLog.rebuildProducerState``) when it loads the partition."""

from __future__ import annotations

import os
from typing import Iterator, Sequence

from kseg.errors import CorruptRecordError, InputError, KsegError, RecoveryFailure
from kseg.ops.rebuild.recovery import Recovery
from kseg.ops.rebuild.write import rebuilt_files
from kseg.ops.salvage.found import Found
from kseg.storage import checkpoints, files
from kseg.storage.atomic import AtomicDirectory
from kseg.storage.copy import CopyThread, copy_range, threaded
from kseg.storage.outputs import destination
from kseg.storage.partition import Partition, Segment
from kseg.storage.producer_state import ProducerState
from kseg.storage.read import AuxFile
from kseg.storage.records import FileRecords, ScanItem, SecondReader

PENDING = 32 << 20  # kept bytes that follow each other, copied at once (while the reader's pages are cached)
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


class SegmentWriter:
    """One salvaged segment: the kept batches' bytes appended to its ``.log`` (batches that follow each
    other in the input copied as one range, :func:`~kseg.storage.copy.copy_range`, by a second thread
    where the kernel copies, :class:`~kseg.storage.copy.CopyThread`, while the next batches are read) and
    fed to recovery's rule as they are kept (a batch's index position: the bytes queued before it);
    :meth:`close` waits for the copies, syncs the log, writes the indexes it made and syncs each.
    ``source`` is the copy's alone (its reads may be the copying thread's)."""

    def __init__(self, path: str, shown: str, source: FileRecords, reader: SecondReader, recovery: Recovery) -> None:
        self.path, self.shown, self.source, self.reader, self.recovery = path, shown, source, reader, recovery
        self.start = self.end = 0  # the range of ``source`` waiting to be copied
        self.fd = _create(path)
        self.pipe = CopyThread(source, self.fd) if threaded(source) else None

    def keep(self, fs: Sequence[Found]) -> None:
        """Batches of the source that follow each other in it, kept after those kept before."""
        first, last = fs[0], fs[-1]
        if first.position != self.end or self.end - self.start >= PENDING:
            self._copy()
            self.start = first.position
        self.end = last.position + last.size
        items = [(f.position, f.size, f.h, True) for f in fs if f.h]
        try:
            self.recovery.feed(items if len(items) == len(fs) else self._items(fs))
        except (CorruptRecordError, RecoveryFailure) as exc:  # a kept end marker whose records do not parse...
            raise _unrecoverable(exc) from None

    def _items(self, fs: Sequence[Found]) -> Iterator[ScanItem]:
        """Recovery's items for ``fs``: a v0/v1 message's as a batch object, read when its turn comes (an
        object's bytes live in the reader's window until the next is read)."""
        for f in fs:
            yield (f.position, f.size, f.h, True) if f.h else (f.position, f.size, None, self.reader.batch(f.position))

    def _copy(self) -> None:
        if self.end > self.start:
            try:
                if self.pipe is None:
                    copy_range(self.source, self.fd, self.start, self.end - self.start)
                else:
                    self.pipe.put(self.start, self.end - self.start)
            except OSError as exc:
                raise _unwritable(exc, self.path) from None
        self.start = self.end

    def abandon(self) -> None:
        """Close without writing what waits (the run failed: the directory is discarded).  The copying
        thread is stopped first: were that interrupted, the file stays open rather than closed under it."""
        if self.pipe is not None:
            self.pipe.abandon()
        os.close(self.fd)

    def close(self) -> None:
        """The rest copied, the log synced, its indexes written (each synced)."""
        try:
            self._copy()
            if self.pipe is not None:
                try:
                    self.pipe.finish()
                except OSError as exc:
                    raise _unwritable(exc, self.path) from None
            _sync(self.fd, self.path)
        except BaseException:
            self.abandon()
            raise
        os.close(self.fd)
        try:
            self.recovery.end()
        except RecoveryFailure as exc:
            raise _unrecoverable(exc.at(self.path)) from None
        stem = self.path[: -len(files.LOG)]
        for kind, data in rebuilt_files(self.recovery.rec).items():
            if data is not None:
                _write_new(stem + kind, data)


def _unrecoverable(exc: KsegError) -> InputError:
    """A salvaged log Kafka's recovery would stop in or fail on: an error (nothing is committed)."""
    return InputError(
        f"the salvaged log would not pass Kafka's recovery: {exc.message}", path=exc.path, position=exc.position
    )


def _unwritable(exc: OSError, path: str) -> InputError:
    return InputError(f"cannot write: {exc.strerror or exc}", path=path)


def _create(path: str) -> int:
    try:
        return os.open(path, _NEW, 0o666)
    except OSError as exc:
        raise _unwritable(exc, path) from None


def _sync(fd: int, path: str) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:
        raise _unwritable(exc, path) from None


def _write_new(path: str, data: bytes) -> None:
    """A new file of the directory being built, written whole and synced (the directory is renamed into
    place only when every file is)."""
    fd = _create(path)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except OSError as exc:
        raise _unwritable(exc, path) from None
    finally:
        os.close(fd)


class Output:
    """The partition directory being salvaged into (``target``, as given: ``shown``); producer state
    carried across its segments, as recovery carries it."""

    def __init__(self, target: str, *, force: bool, limit: int) -> None:
        self.shown = target
        self.store = destination(target).store  # the output's store, chosen once: its segments are written there
        self.directory = AtomicDirectory(target, force=force)
        self.state = ProducerState()
        self.limit = limit

    def segment(self, base_offset: int, source: FileRecords, reader: SecondReader) -> SegmentWriter:
        """The writer of the salvaged segment of ``base_offset`` (the next in offset order); ``reader``: a
        second reader of ``source`` (recovery reads end markers and v0/v1 messages through it)."""
        name = f"{base_offset:020d}{files.LOG}"
        path = self.directory.file(name)
        recovery = Recovery(
            Segment(base_offset, log=path, store=self.store),
            self.state,
            reader.batch,
            path=files.display(source.path, store=reader.store),  # (the second reader of the same log)
            limit=self.limit,
        )
        return SegmentWriter(path, os.path.join(self.shown, name), source, reader, recovery)

    def finish(self, source: Partition) -> list[str]:
        """Copy the partition's metadata; returns the files copied."""
        return self._copy_metadata(source)

    def _copy_metadata(self, source: Partition) -> list[str]:
        copied = []
        kinds = (
            (checkpoints.PARTITION_METADATA, checkpoints.PARTITION_METADATA_KIND, 2),
            ("leader-epoch-checkpoint", checkpoints.LEADER_EPOCHS, None),
        )
        for name, kind, most in kinds:
            path = os.path.join(source.path, name)
            if not os.path.isfile(path):
                continue
            lines = []
            for line in AuxFile.local(path, kind).lines():
                lines.append(line)
                if most is not None and len(lines) >= most:  # PartitionMetadataReadBuffer reads two lines
                    break
            _write_new(self.directory.file(name), "".join(line + "\n" for line in lines).encode())
            copied.append(name)
        return copied

    def commit(self) -> None:
        self.directory.commit()

    def discard(self) -> None:
        self.directory.discard()


def discard_quietly(output: Output | None) -> None:
    if output is not None:
        try:
            output.discard()
        except KsegError:
            pass
