"""Partitions for ``kseg txn`` and ``kseg diff`` tests, written by kseg's Kafka writer.

:func:`txn_partition` -- three segments, snapshots at every roll and at shutdown:

====  =========================================================================
pid   transaction
====  =========================================================================
1000  committed, from segment 0 into segment 1 (marker in segment 1)
1001  aborted, from segment 0 into segment 1 (-> segment 1's .txnindex)
1002  aborted inside segment 1, while 1000 is open (its lastStableOffset is 1000's first offset)
1003  committed inside segment 2
1004  opened in segment 0 at T, never ended: hanging (latest timestamp is T + 1 h)
1005  opened in segment 2 at T + 1 h: open, not hanging
====  =========================================================================

Non-transactional batches (producer -1 and idempotent producer 2000) sit between.

:func:`replica_appends` -- the appends of two replicas: a shared history
(epoch 0 from 0, epoch 1 from 50), then after offset 100 the old leader's
epoch-1 data (offsets 100..149) on one side and the new leader's epoch-2 data
(100..129, other values) on the other: an unclean leader election.
"""

from __future__ import annotations

from pathlib import Path

from kseg.testing.writer import RecordSpec, build_control_batch, build_v2_batch, write_partition

T = 1_700_000_000_000
HOUR = 3_600_000


class Log:
    """Appends with consecutive offsets."""

    def __init__(self, epoch: int = 0) -> None:
        self.next = 0
        self.appends: list[list[bytes]] = []
        self.epoch = epoch
        self.seq: dict[int, int] = {}

    def data(self, n: int, ts: int, pid: int = -1, *, txn: bool = False, value: bytes = b"v", epoch: int = 0) -> int:
        first = self.next
        seq = self.seq.get(pid, 0) if pid >= 0 else -1
        self.appends.append(
            [
                build_v2_batch(
                    [RecordSpec(b"k%d" % i, value, ts) for i in range(n)],
                    base_offset=first,
                    producer_id=pid,
                    producer_epoch=epoch if pid >= 0 else -1,
                    base_sequence=seq,
                    transactional=txn,
                    partition_leader_epoch=self.epoch,
                )
            ]
        )
        if pid >= 0:
            self.seq[pid] = seq + n
        self.next += n
        return first

    def marker(self, kind: str, pid: int, ts: int, coordinator_epoch: int = 5, epoch: int = 0) -> int:
        first = self.next
        self.appends.append(
            [
                build_control_batch(
                    kind,
                    base_offset=first,
                    producer_id=pid,
                    producer_epoch=epoch,
                    coordinator_epoch=coordinator_epoch,
                    timestamp=ts,
                    partition_leader_epoch=self.epoch,
                )
            ]
        )
        self.next += 1
        return first


def txn_log() -> tuple[Log, list[int]]:
    """The log of :func:`txn_partition` and the append indexes before which segments roll."""
    log = Log()
    log.data(3, T)  # 0..2 plain
    log.data(2, T + 1, 1000, txn=True)  # 3..4   1000 opens
    log.data(2, T + 2, 1001, txn=True, epoch=3)  # 5..6   1001 opens
    log.data(1, T + 3, 1004, txn=True, epoch=7)  # 7      1004 opens: hanging
    log.data(2, T + 4, 2000)  # 8..9   idempotent, not transactional
    rolls = [len(log.appends)]  # segment 1 from offset 10
    log.data(2, T + 5, 1000, txn=True)  # 10..11
    log.data(2, T + 6, 1002, txn=True, epoch=1)  # 12..13 1002 opens
    log.marker("ABORT", 1001, T + 7, epoch=3)  # 14     1001 aborted: first 5, LSO 3 (1000 open)
    log.marker("COMMIT", 1000, T + 8)  # 15     1000 committed
    log.marker("ABORT", 1002, T + 9, 6, epoch=1)  # 16     1002 aborted: first 12, LSO 7 (1004 open)
    rolls.append(len(log.appends))  # segment 2 from offset 17
    log.data(3, T + HOUR - 10, 1003, txn=True)  # 17..19
    log.marker("COMMIT", 1003, T + HOUR - 9, 6)  # 20
    log.data(1, T + HOUR, 1005, txn=True)  # 21     1005 opens, recent
    log.data(1, T + HOUR, 2000)  # 22
    return log, rolls


def txn_partition(directory: Path) -> Path:
    log, rolls = txn_log()
    write_partition(directory, log.appends, roll_before=rolls)
    return directory


EPOCHS_SHARED = "0\n2\n0 0\n1 50\n"


def replica_logs() -> tuple[Log, Log]:
    """(old leader, new leader) of an unclean election at offset 100."""
    old, new = Log(), Log()
    for log in (old, new):
        for i in range(10):
            if i == 5:
                log.epoch = 1
            log.data(10, T + i, 3000 + i % 2, value=b"shared")
    old.epoch = 1
    for i in range(5):
        old.data(10, T + 100 + i, 3000, value=b"old leader")
    new.epoch = 2
    for i in range(3):
        new.data(10, T + 200 + i, 3001, value=b"new leader")
    return old, new


def write_replica(directory: Path, appends, epochs: str | None, rolls=()) -> Path:
    write_partition(directory, appends, roll_before=rolls)
    if epochs is not None:
        (directory / "leader-epoch-checkpoint").write_text(epochs)
    return directory
