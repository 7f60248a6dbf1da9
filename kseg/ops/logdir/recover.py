"""What a broker starting on a partition's files recovers, and what that recovery truncates.

Which segments are recovered (``LogLoader``; ``LogManager.loadLogs`` reads the clean-shutdown marker and
the recovery points):

* without ``.kafka_cleanshutdown``, ``recoverLog`` recovers every segment holding offsets at or past the
  partition's recovery point (``LogSegments.values(recoveryPoint, MAX)``: the segment the recovery point
  falls in, and every later one); the recovery point is the partition's entry in
  ``recovery-point-offset-checkpoint``, else 0 (no entry, no file, or a file Kafka cannot read: "resetting
  the recovery checkpoint to 0") -- the whole log.  After a clean shutdown, none;
* whatever the shutdown, a segment without its offset index (``.index``) is recovered as it is loaded
  (``loadSegmentFiles``: ``sanityCheck`` raises ``NoSuchFileException``), and so is one whose ``.txnindex``
  has an entry whose ``lastOffset`` is below its base offset (``CorruptIndexException``:
  :mod:`kseg.ops.logdir.sanity`).

What ``LogSegment.recover`` checks of each batch, in file order (``FileRecords.batches``): the framing (a
length field below 14 is ``CorruptRecordException``), ``ensureValid`` (a v2 batch below its 61-byte header,
or a CRC that does not match: CRC-32C of a v2 batch, CRC-32 of a v0/v1 message's outer record).  Records are
not decoded and compressed batches are not decompressed.  At the first invalid batch, or at bytes after the
last whole batch (a partial batch: the iteration ends without an error), the segment is truncated there;
``recoverLog`` then deletes every later segment.  Brokers from 0.10 on recover the same way (0.10 also
refused an entry larger than ``max.message.bytes``, a setting not on disk).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kseg.errors import CorruptRecordError
from kseg.format import v2
from kseg.storage.batch import FileBatch, LegacyBatch, V2Batch
from kseg.storage.records import FileRecords
from kseg.words import plural

RECOVER_LOG = "recoverLog"  # recovered because it holds offsets at or past the recovery point
NO_INDEX = "no index"  # recovered on load: no offset index beside it
CORRUPT_INDEX = "corrupt txnindex"  # recovered on load: its .txnindex failed TransactionIndex.sanityCheck


@dataclass(frozen=True)
class Plan:
    """How a broker starting on these files recovers a partition: ``clean_shutdown``, else from
    ``recovery_point`` (``point_entry``: whether the checkpoint had an entry for it)."""

    clean_shutdown: bool
    recovery_point: int = 0
    point_entry: bool = False
    metadata: bool = False  # KRaft's metadata log: recovered whole on every start

    def first_recovered(self, bases: list[int]) -> int | None:
        """The index of the first segment ``recoverLog`` recovers (the last whose base offset is at most the
        recovery point, else the first), or None after a clean shutdown or when there is no segment."""
        if self.clean_shutdown or not bases:
            return None
        at = 0
        for i, base in enumerate(bases):
            if base <= self.recovery_point:
                at = i
        return at

    def why(self) -> str:
        if self.metadata:
            return (
                "KRaft's metadata log, recovered whole on every start (KafkaMetadataLog: recovery point 0, "
                "never a clean shutdown)"
            )
        if self.point_entry:
            return f"no .kafka_cleanshutdown, recovery point {self.recovery_point}"
        return "no .kafka_cleanshutdown and no recovery point: the whole log is recovered"


@dataclass
class Truncation:
    """Where recovery truncates a segment, and what the files hold past it (lost)."""

    name: str  # the segment's file name
    position: int
    reason: str
    end: int  # the offset it truncates at: the segment's next offset after its last valid batch
    rule: str  # RECOVER_LOG (every later segment deleted), NO_INDEX or CORRUPT_INDEX (this segment only)
    bytes: int = 0  # bytes lost: the segment's from the position on, and every segment deleted
    segments: int = 1  # segments losing data: this one, and every segment deleted
    last: int | None = None  # the last offset of the whole batches lost (None: none found)
    known: bool = True  # every lost file's headers were read to its end (else offsets "from end on")
    cause: str = ""  # CORRUPT_INDEX: what sanityCheck found in the .txnindex (kseg.ops.logdir.sanity)

    def lost(self, last: int | None, whole: bool) -> None:
        """A header walk past the truncation found batches up to ``last``; ``whole``: to the file's end."""
        if last is not None:
            self.last = last
        self.known = self.known and whole

    def problem(self, plan: Plan) -> str:
        where = f"{self.name}, position {self.position}: {self.reason}"
        if self.last is None and self.known:
            lost = f"no whole batch is lost, only the {plural(self.bytes, 'byte')} after the last one"
        else:
            held = f"offsets {self.end}-{self.last}" if self.known else f"offsets from {self.end} on"
            lost = f"{held} ({plural(self.segments, 'segment')}, {plural(self.bytes, 'byte')}) are lost"
        if self.rule == NO_INDEX:
            return (
                f"recovery truncates {self.name} at offset {self.end} ({where}): {lost}; the segment has no "
                ".index, so a broker recovers it on load whatever the shutdown (LogLoader.loadSegmentFiles, "
                "LogSegment.recover); later segments are kept"
            )
        if self.rule == CORRUPT_INDEX:
            return (
                f"recovery truncates {self.name} at offset {self.end} ({where}): {lost}; {self.cause}, so a "
                'broker recovers the segment on load whatever the shutdown (LogLoader.loadSegmentFiles: "Found a '
                'corrupted index file", LogSegment.recover); later segments are kept'
            )
        return (
            f"recovery truncates at offset {self.end} ({where}): {lost}, log end {self.end} after recovery "
            f"({plan.why()}; LogLoader.recoverLog validates each batch from the recovery point on, "
            "truncates at the first invalid one and deletes every later segment)"
        )


def plan_of(clean_shutdown: bool, recovery_point: int | None, metadata: bool = False) -> Plan:
    """The recovery of a partition whose log directory had ``clean_shutdown`` and whose entry in
    ``recovery-point-offset-checkpoint`` is ``recovery_point`` (None: no entry, or no file Kafka reads);
    ``metadata``: KRaft's ``__cluster_metadata``, which the raft layer opens with recovery point 0 and no
    clean shutdown, whatever the marker says (``KafkaMetadataLog.apply``)."""
    if metadata:
        return Plan(False, 0, False, metadata=True)
    return Plan(clean_shutdown, recovery_point or 0, recovery_point is not None)


def problems(
    truncations: list[Truncation], plan: Plan, log_start: int | None, log_end: int | None
) -> tuple[list[str], int | None]:
    """What recovery truncates, one problem each, and the log end it leaves: when that is below the log
    start checkpoint's entry, every segment goes and an empty one is made at the log start
    (``deleteSegmentsIfLogStartGreaterThanLogEnd``)."""
    found = [cut.problem(plan) for cut in truncations]
    if truncations and log_start is not None and log_end is not None and log_end < log_start:
        found.append(
            f"recovery deletes every segment: the log end {log_end} it leaves is below the log start offset "
            f"{log_start} (log-start-offset-checkpoint); Kafka makes an empty segment there, log end {log_start} "
            "(LogLoader.recoverLog)"
        )
        log_end = log_start
    return found, log_end


def unchecked_note(where: str, plan: Plan, segments: int) -> str | None:
    """The note for the segments whose CRCs were not checked (a broker does not recover them), or None."""
    if not segments:
        return None
    if plan.clean_shutdown:
        return (
            f"{where}: CRCs not checked ({plural(segments, 'segment')}): after a clean shutdown "
            "(.kafka_cleanshutdown) a broker recovers no segment on start; `kseg verify-index` reads them"
        )
    return (
        f"{where}: CRCs not checked before the recovery point ({plural(segments, 'segment')}): a broker does "
        "not validate them on start; `kseg verify-index` reads them"
    )


# One batch of a recovery walk: (position, size, base offset, last offset, max timestamp, leader epoch,
# valid, the batch object when the scan gave one).
Walked = tuple[int, int, int, int, int, int, bool, FileBatch | None]


def walk(records: FileRecords) -> Iterator[Walked]:
    """Every whole batch of ``records`` in file order with ``ensureValid``'s verdict, through the shallow
    scan (its CRCs by the compiled engine where it is built).  Raises :class:`CorruptRecordError` where the
    framing breaks (a length field below 14)."""
    last_offset = v2.last_offset
    for items in records.scan():
        for pos, size, h, item in items:
            if h is not None:
                base = h[v2.BASE_OFFSET]
                yield (
                    pos,
                    size,
                    base,
                    last_offset(base, h[v2.LAST_OFFSET_DELTA]),
                    h[v2.MAX_TIMESTAMP],
                    h[v2.LEADER_EPOCH],
                    bool(item),
                    None,
                )
            else:
                batch: FileBatch = item
                epoch = batch.h[v2.LEADER_EPOCH] if isinstance(batch, V2Batch) else -1
                valid = batch.is_valid()
                yield (pos, size, batch.base_offset, batch.last_offset, batch.max_timestamp, epoch, valid, batch)


def invalid_reason(records: FileRecords, position: int, batch: FileBatch | None) -> str:
    """Why ``ensureValid`` refuses the batch at ``position``, in Kafka's words (:meth:`FileBatch.invalid`)."""
    if batch is None:
        batch = records.frame_at(position, records.end)
    why = batch.invalid() if isinstance(batch, (V2Batch, LegacyBatch)) else None
    return why or "invalid batch"  # (a batch the walk found invalid: always its reason)


def tail_last(records: FileRecords, position: int) -> tuple[int | None, bool]:
    """The last offset of the whole batches from ``position`` on (header walk, no CRC), and whether they are
    known to be all: the walk framed batches up to the file's last byte, or framed none (the bytes there are
    one partial batch).  A framing fault, or batches ending short of the file's end (a length that lies:
    what follows is unframed), leaves the offsets past it unknown."""
    last, end = None, position
    try:
        for batch in records.batches(position):
            last, end = batch.last_offset, batch.position + batch.size
    except CorruptRecordError:
        return last, False
    return last, last is None or end == records.end


def partial_reason(records: FileRecords, position: int) -> str:
    return (
        f"a partial batch, {plural(records.end - position, 'byte')} after the last whole batch "
        "(a write cut short by a crash)"
    )
