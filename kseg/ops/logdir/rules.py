"""The checks of a partition's checkpointed offsets and leader epochs against its log.

Offsets (``UnifiedLog``): the high watermark (``replication-offset-checkpoint``) and the recovery point
(``recovery-point-offset-checkpoint``) are at most the log end offset -- past it, committed or flushed
data is missing; the log start offset (``log-start-offset-checkpoint``) lies in ``[first segment's base
offset, log end]`` (``UnifiedLog.maybeIncrementLogStartOffset`` never moves it past the high watermark).
Below the first segment is a problem only after a clean shutdown: the checkpoint is written periodically
(``log.checkpoint.interval.ms``), so after a crash it may predate a retention deletion, and Kafka's load
raises it to the first segment's base offset.

Leader epochs (``LeaderEpochFileCache``): entries have increasing epochs and non-decreasing start
offsets (``assign`` ignores any other); an entry's start offset is the base offset of the first batch of
its epoch in the log -- except the first entry, which ``truncateFromStart`` moves up to the log start
offset, past that batch's base, and which a crash may leave below the log's first batch (the cache is
flushed asynchronously, ``truncateFromStartAsyncFlush``); a batch at or after the first entry's start
whose partition leader epoch the checkpoint does not hold was written in an epoch the replica never
recorded.  Nothing is checked
against a log not read to its end.
"""

from __future__ import annotations

from kseg.ops.logdir.log import NO_EPOCH, LogFacts
from kseg.storage import checkpoints as cp
from kseg.storage.leader_epochs import EpochEntry


def offset_problems(
    log: LogFacts, hw: int | None, recovery: int | None, start: int | None, clean_shutdown: bool
) -> list[str]:
    """The checkpointed offsets outside the log (module docstring)."""
    end = log.log_end
    if end is None or log.first_offset is None:
        return []
    found = []
    for name, value, what in (
        (cp.HIGH_WATERMARK, hw, "high watermark"),
        (cp.RECOVERY_POINT, recovery, "recovery point"),
    ):
        if value is not None and value > end:
            found.append(
                f"{what} {value} ({name}) is past the log end offset {end}: "
                f"{value - end} {'committed' if name == cp.HIGH_WATERMARK else 'flushed'} offsets missing"
            )
    if start is not None and (start > end or (start < log.first_offset and clean_shutdown)):
        found.append(
            f"log start offset {start} ({cp.LOG_START}) is outside the log [{log.first_offset}, {end}] "
            "(first segment's base offset, log end offset)"
        )
    return found


def epoch_problems(entries: list[EpochEntry], log: LogFacts, path: str) -> list[str]:
    """``leader-epoch-checkpoint`` against itself and the batches' partition leader epochs (module docstring)."""
    found = []
    for i, (prev, cur) in enumerate(zip(entries, entries[1:], strict=False), start=4):
        if cur.epoch <= prev.epoch or cur.start_offset < prev.start_offset:
            found.append(
                f"{path}: line {i}: epoch {cur.epoch} at offset {cur.start_offset} does not follow "
                f"epoch {prev.epoch} at offset {prev.start_offset} (epochs increase, start offsets never decrease)"
            )
    if not log.complete:
        return found
    log_first = min(log.epoch_starts.values(), default=None)
    for i, e in enumerate(entries):
        first = log.epoch_starts.get(e.epoch)
        if first is None or first == e.start_offset or (i == 0 and (first < e.start_offset or first == log_first)):
            continue  # the first entry: moved to the log start (mid-batch), or older than retention's last deletion
        found.append(
            f"{path}: line {i + 3}: epoch {e.epoch} starts at offset {e.start_offset}, but the first batch of "
            f"epoch {e.epoch} in the log is at offset {first}"
        )
    known = {e.epoch for e in entries}
    for epoch, first in sorted(log.epoch_starts.items()):
        if epoch == NO_EPOCH or epoch in known or not entries or log.epoch_last[epoch] < entries[0].start_offset:
            continue
        found.append(
            f"{path}: batches of leader epoch {epoch} (from offset {first}) in the log, an epoch the checkpoint "
            "never recorded"
        )
    return found
