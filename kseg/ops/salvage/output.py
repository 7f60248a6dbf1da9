"""The new partition directory: built beside its target (:class:`kseg.storage.atomic.AtomicDirectory`), the
kept batches streamed into ``<base offset>.log`` files, the indexes written as Kafka's recovery writes them
(``rebuild-index``'s :func:`~kseg.ops.rebuild.rebuild.recover_partition`, run on the new logs), the
partition's ``partition.metadata`` and ``leader-epoch-checkpoint`` copied; then renamed into place.

Producer snapshots are not written: with none, Kafka rebuilds producer state by reading the log
(``UnifiedLog.rebuildProducerState``) when it loads the partition."""

from __future__ import annotations

import os
from typing import BinaryIO

from kseg.errors import InputError, KsegError
from kseg.storage import checkpoints, files
from kseg.storage.atomic import AtomicDirectory
from kseg.storage.partition import Partition, scan_partition
from kseg.storage.read import AuxFile
from kseg.storage.records import FileRecords

PIECE = 1 << 20  # bytes copied at a time


class SegmentWriter:
    """One salvaged ``.log``, written as batches are kept: consecutive batches are copied as one range."""

    def __init__(self, path: str, shown: str, source: FileRecords) -> None:
        self.path, self.shown, self.source = path, shown, source
        self.start = self.end = 0  # the range of ``source`` waiting to be copied
        try:
            self.f: BinaryIO = open(path, "xb", buffering=PIECE)  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path=path) from None

    def add(self, position: int, size: int) -> None:
        """Bytes ``[position, position + size)`` of the source, after those added before."""
        if position != self.end or self.end - self.start >= PIECE << 3:
            self._copy(self.source, self.start, self.end - self.start)
            self.start = position
        self.end = position + size

    def _copy(self, source: FileRecords, position: int, size: int) -> None:
        """Bytes ``[position, position + size)`` of ``source``, a window piece at a time."""
        end = position + size
        try:
            while position < end:
                n = min(source.window_size, end - position)
                buf, i = source.window(position, n)
                self.f.write(buf[i : i + n])
                position += n
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path=self.path) from None

    def abandon(self) -> None:
        """Close without writing what waits (the run failed: the directory is discarded)."""
        self.f.close()

    def close(self) -> None:
        try:
            self._copy(self.source, self.start, self.end - self.start)
            self.f.flush()
            os.fsync(self.f.fileno())
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path=self.path) from None
        finally:
            self.f.close()


class Output:
    """The partition directory being salvaged into (``target``, as given: ``shown``)."""

    def __init__(self, target: str, *, force: bool) -> None:
        self.shown = target
        self.directory = AtomicDirectory(target, force=force)

    def segment(self, base_offset: int, source: FileRecords) -> SegmentWriter:
        name = f"{base_offset:020d}{files.LOG}"
        return SegmentWriter(self.directory.file(name), os.path.join(self.shown, name), source)

    def finish(self, source: Partition, limit: int) -> list[str]:
        """Write the indexes of the salvaged logs and copy the partition's metadata; returns the files copied.
        A salvaged log Kafka's recovery would not read whole is a bug, said as an error (nothing is committed)."""
        from kseg.ops.rebuild.rebuild import Target, recover_partition
        from kseg.ops.rebuild.write import rebuilt_files
        from kseg.storage.atomic import write_atomic

        built = scan_partition(self.directory.path)
        for rec in recover_partition(Target(built, None, ""), limit=limit):
            problem = rec.failure or rec.stop
            if problem is not None:
                raise InputError(f"the salvaged log would not pass Kafka's recovery: {problem.message}")
            for kind, data in rebuilt_files(rec).items():
                if data is not None:
                    write_atomic(self.directory.file(rec.segment.stem + kind), data, replace=False)
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
            with open(self.directory.file(name), "x", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))
                f.flush()
                os.fsync(f.fileno())
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
