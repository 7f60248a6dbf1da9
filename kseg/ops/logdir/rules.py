"""The checks of a partition's checkpointed offsets and leader epochs against its log.

Offsets (``UnifiedLog``): the high watermark (``replication-offset-checkpoint``) and the recovery point
(``recovery-point-offset-checkpoint``) are at most the log end offset -- past it, committed or flushed
data is missing; the log start offset (``log-start-offset-checkpoint``) lies in ``[first segment's base
offset, log end]`` (``UnifiedLog.maybeIncrementLogStartOffset`` never moves it past the high watermark).
Below the first segment is a problem only after a clean shutdown: the checkpoint is written periodically
(``log.checkpoint.interval.ms``), so after a crash it may predate a retention deletion, and Kafka's load
raises it to the first segment's base offset.

Leader epochs: :mod:`kseg.storage.leader_epochs` (the rule ``verify-index`` uses too).
"""

from __future__ import annotations

from kseg.ops.logdir.log import LogFacts
from kseg.storage import checkpoints as cp


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
