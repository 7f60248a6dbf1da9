"""The join of a topic-partition's remote segments with its local log (``--logdir``).

With tiered storage a partition's log is its remote segments, then its local ones: ``UnifiedLog`` serves
offsets below the local log start offset (the first local segment's base offset,
``localLogStartOffset``) from the remote store, and ``logStartOffset`` (checkpointed in
``log-start-offset-checkpoint``) is where the whole log starts.  A local log starting past the highest
remote end offset + 1 leaves offsets neither copy holds (``RemoteLogManager`` copies a segment only once
it is rolled, and local retention deletes only segments already copied: such a gap is a lost copy, or
local retention run without the remote copy); a log start below both the first remote segment and the
local log start names offsets no fetch can return.  The local directory is ``<topic>-<partition>`` in the
log directory; its ``partition.metadata`` topic ID must be the metadata's (else a re-created topic: not
joined).
"""

from __future__ import annotations

from kseg.errors import InputError, KsegError
from kseg.ops.tiered.reconcile import PartitionCheck, Problem, finished, highest_remote_end
from kseg.storage import checkpoints as cp
from kseg.storage import files, location
from kseg.storage.partition import scan_partition
from kseg.storage.stores.find import Root


def read_log_starts(log_dir: Root) -> dict[tuple[str, int], int]:
    """``log-start-offset-checkpoint`` of ``log_dir`` (empty when absent); raises :class:`KsegError`."""
    text = cp.open_text(log_dir.path, cp.LOG_START, store=log_dir.store)
    if text is None:
        return {}
    entries = cp.parse_offsets(text, files.display(location.join(log_dir.path, cp.LOG_START), store=log_dir.store))
    return {k: e.offset for k, e in entries.items()}


def join_local(check: PartitionCheck, log_dir: Root, log_starts: dict[tuple[str, int], int], notes: list[str]) -> None:
    """Compare ``check``'s remote segments with ``<log_dir>/<topic>-<partition>``; problems into ``check``."""
    tp, store = check.tp, log_dir.store
    directory = location.join(log_dir.path, tp.name)
    if not files.isdir(directory, store=store):
        notes.append(f"{tp.name}: no local directory in {log_dir.path}: not joined")
        return
    try:
        text = cp.open_text(directory, cp.PARTITION_METADATA, store=store)
        topic_id = None if text is None else cp.parse_partition_metadata(text, files.display(directory, store=store))
        part = scan_partition(directory, store=store)
    except InputError:  # unreadable, unlistable (the OS's reason): exit 2, never joined in silence
        raise
    except KsegError as exc:
        notes.append(f"{tp.name}: the local partition not joined: {exc.describe()}")
        return
    if topic_id is not None and topic_id != tp.topic_id:
        notes.append(f"{tp.name}: the local partition has topic ID {topic_id}, the metadata {tp.topic_id}: not joined")
        return
    logs = [s for s in part.segments if s.log is not None]
    check.local_start = logs[0].base_offset if logs else None
    check.log_start = log_starts.get((tp.topic, tp.partition))
    high = highest_remote_end(check.tp)
    if check.local_start is not None and high is not None and check.local_start > high + 1:
        check.problems.append(
            Problem(
                "local-gap",
                f"offsets {high + 1}-{check.local_start - 1} are neither remote (highest remote end offset {high}) "
                f"nor local (local log start offset {check.local_start}): no consumer can fetch them",
            )
        )
    starts = [s.start for s in finished(check.tp)] + ([check.local_start] if check.local_start is not None else [])
    if check.log_start is not None and starts and check.log_start < min(starts):
        check.problems.append(
            Problem(
                "log-start",
                f"the log start offset {check.log_start} (log-start-offset-checkpoint) is below the first offset "
                f"held remotely or locally ({min(starts)}): offsets {check.log_start}-{min(starts) - 1} cannot "
                "be fetched",
            )
        )
