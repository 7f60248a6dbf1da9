"""The checks of a partition's checkpointed offsets and leader epochs against its log.

Offsets (``UnifiedLog``): the high watermark (``replication-offset-checkpoint``) and the recovery point
(``recovery-point-offset-checkpoint``) are at most the log end offset -- past it, committed or flushed
data is missing; the log start offset (``log-start-offset-checkpoint``) lies in ``[first segment's base
offset, log end]`` (``UnifiedLog.maybeIncrementLogStartOffset`` never moves it past the high watermark).
Below the first segment is a problem only after a clean shutdown: the checkpoint is written periodically
(``log.checkpoint.interval.ms``), so after a crash it may predate a retention deletion, and Kafka's load
raises it to the first segment's base offset.  The cleaner's checkpoint (``cleaner-offset-checkpoint``)
past the log end is reset to the log start (``LogCleanerManager.cleanableOffsets``: the whole log cleaned
again).

A partition directory with no segment at all is never Kafka's (a log always keeps its active segment):
``LogLoader.load`` makes a new empty segment at the log start offset (the ``log-start-offset-checkpoint``
entry, else 0: ``LogManager.loadLog``), so that is the log end the checkpoints are judged against.

Leader epochs: :mod:`kseg.storage.leader_epochs` (the rule ``verify-index`` uses too).
"""

from __future__ import annotations

from kseg.ops.logdir.log import LogFacts
from kseg.storage import checkpoints as cp


def offset_problems(
    log: LogFacts, checkpointed: dict[str, int | None], start: int | None, clean_shutdown: bool
) -> list[str]:
    """The checkpointed offsets outside the log (module docstring); ``checkpointed`` holds the partition's
    entry in each offset checkpoint by file name (None: no entry), ``start`` its log start offset."""
    if log.segments == 0 and log.complete:
        return _no_segment(checkpointed)
    end = log.log_end
    if end is None or log.first_offset is None:
        return []
    found = [
        f"{what} {value} ({name}) is past the log end offset {end}: {value - end} {lost}"
        for name, what, lost in _PAST_END
        if (value := checkpointed.get(name)) is not None and value > end
    ]
    if start is not None and (start > end or (start < log.first_offset and clean_shutdown)):
        found.append(
            f"log start offset {start} ({cp.LOG_START}) is outside the log [{log.first_offset}, {end}] "
            "(first segment's base offset, log end offset; UnifiedLog.maybeIncrementLogStartOffset keeps it inside)"
        )
    return found


_PAST_END = (
    (
        cp.HIGH_WATERMARK,
        "high watermark",
        "committed offsets missing (UnifiedLog.updateHighWatermark: never past the log end)",
    ),
    (cp.RECOVERY_POINT, "recovery point", "flushed offsets missing (LogLoader.recoverLog lowers it to the log end)"),
    (cp.CLEANER, "cleaner checkpoint", "offsets never cleaned: Kafka cleans the whole log again (LogCleanerManager)"),
)


def _no_segment(checkpointed: dict[str, int | None]) -> list[str]:
    start = checkpointed.get(cp.LOG_START) or 0
    named = ", ".join(
        f"{what} {value} ({name})"
        for name, what, _ in _PAST_END
        if (value := checkpointed.get(name)) is not None and value > start
    )
    found = "no segment: Kafka always keeps the active one; LogLoader.load makes an empty segment at the log start "
    found += f"offset {start}"
    return [found + (f", below {named}: those offsets are lost" if named else "")]
