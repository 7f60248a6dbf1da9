"""``kseg.storage.leader_epochs.EpochCheck``: the checkpoint against the batches' partition leader epochs.

Each case is a cache as ``LeaderEpochFileCache`` leaves it (``assign`` before each v2 append,
``truncateFromStart`` on retention or ``DeleteRecords``, ``truncateFromEnd`` on a follower's truncation)
and the batches (base offset, last offset, partition leader epoch; -1 for magic v0/v1) of a log.
"""

from __future__ import annotations

import pytest

from kseg.storage.leader_epochs import EpochCheck, EpochEntry

E = EpochEntry


def _check(entries: list[tuple[int, int]], batches: list[tuple[int, int, int]]) -> list[str]:
    check = EpochCheck([E(*e) for e in entries], "p-0/leader-epoch-checkpoint")
    for batch in batches:
        check.batch(*batch)
    return check.problems()


HEALTHY = {
    "each epoch's first batch at its entry": ([(0, 0), (1, 100), (3, 150)], [(0, 99, 0), (100, 149, 1), (150, 180, 3)]),
    # DeleteRecords to 105: truncateFromStart moves epoch 1's entry into the middle of the batch 100..149
    "log start inside a batch": ([(1, 105)], [(0, 99, 0), (100, 149, 1), (150, 160, 1)]),
    # retention deleted segments; the asynchronous flush did not happen before a crash: older entries stay
    "entries older than the log": ([(0, 0), (1, 100), (2, 200)], [(150, 199, 1), (200, 210, 2)]),
    # a leader elected and not yet written to; Kafka 1.x: two elections at one offset
    "entries without batches": ([(0, 0), (1, 50), (2, 50), (4, 60)], [(0, 49, 0), (50, 59, 2)]),
    # compaction removed epoch 1's first batches (and every batch of epoch 2)
    "compacted away": ([(0, 0), (1, 100), (2, 120), (3, 150)], [(0, 49, 0), (105, 110, 1), (150, 160, 3)]),
    # magic v0/v1 batches carry no partition leader epoch: never judged
    "magic v0/v1 batches": ([(5, 10)], [(0, 9, -1), (10, 19, -1), (20, 29, 5)]),
    "empty checkpoint": ([], [(0, 9, 0), (10, 19, 3)]),
}


@pytest.mark.parametrize("entries,batches", HEALTHY.values(), ids=HEALTHY.keys())
def test_a_healthy_partition_is_clean(entries, batches) -> None:
    assert _check(entries, batches) == []


def test_a_batch_of_an_epoch_below_its_entry() -> None:
    assert _check([(0, 0), (1, 140), (3, 193)], [(0, 131, 0), (132, 192, 1), (193, 200, 3)]) == [
        "p-0/leader-epoch-checkpoint: line 4: epoch 1 starts at offset 140, but the first batch of epoch 1 "
        "in the log is at offset 132"
    ]


def test_a_batch_of_an_earlier_epoch_inside_an_entry() -> None:
    assert _check([(0, 0), (1, 100)], [(0, 99, 0), (100, 149, 0), (150, 199, 1)]) == [
        "p-0/leader-epoch-checkpoint: line 4: epoch 1 starts at offset 100, but the log has a batch of the earlier "
        "epoch 0 at offset 100, inside epoch 1's range (the first batch of epoch 1 is at offset 150)"
    ]


def test_an_epoch_the_checkpoint_never_recorded() -> None:
    assert _check([(0, 0), (3, 193)], [(0, 131, 0), (132, 192, 1), (193, 200, 3)]) == [
        "p-0/leader-epoch-checkpoint: batches of leader epoch 1 (from offset 132) in the log, an epoch the "
        "checkpoint never recorded"
    ]


def test_entries_not_increasing_stand_alone() -> None:
    problems = _check([(0, 0), (3, 132), (1, 193)], [(0, 131, 0), (132, 192, 1), (193, 200, 3)])
    assert problems == [
        "p-0/leader-epoch-checkpoint: line 5: epoch 1 at offset 193 does not follow epoch 3 at offset 132 "
        "(epochs increase, start offsets never decrease)"
    ]


def test_batches_are_judged_alone_in_any_number_of_calls() -> None:
    """verify-index feeds each segment's batches to its own check: the same verdicts."""
    entries, batches = [E(0, 0), E(1, 140)], [(0, 131, 0), (132, 192, 1)]
    whole = EpochCheck(entries, "f")
    for b in batches:
        whole.batch(*b)
    parts = [EpochCheck(entries, "f") for _ in batches]
    for check, b in zip(parts, batches, strict=True):
        check.batch(*b)
    assert whole.problems() == [p for c in parts for p in c.problems()]
