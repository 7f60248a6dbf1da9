"""The sieve keeps, of a log whose offsets go back, every batch an index check can answer with: each search
the checks make (in file order, or by bisection on a log in order) finds on the batches kept the batch it
finds on every batch, on random batch tables (offsets that repeat, overlap, go back and leap, a last offset
below its base, int64's extremes) and random entries, sifted in random runs of rows."""

from __future__ import annotations

import random
from array import array
from bisect import bisect_left, bisect_right

import pytest

from kseg.ops.verify import sieve as sieve_module
from kseg.ops.verify.index import batch_holding
from kseg.ops.verify.result import LogScan
from kseg.ops.verify.sieve import Marks, Sieve

LOW, HIGH = -(2**63), 2**63 - 1


def _log(rng: random.Random, n: int, ordered: bool) -> LogScan:
    scan = LogScan()
    pos, last = 0, -1
    for _ in range(n):
        if ordered:  # last offsets strictly increasing; a base may reach back over the batch before
            top = last + rng.choice([1, 1, 1, 2, 5])
            base = top - rng.choice([0, 0, 1, 3]) - rng.choice([0, 0, 0, 2])
        else:
            base = rng.choice([rng.randrange(40), rng.randrange(40), min(last + 1, HIGH), 0, LOW, HIGH - 1])
            top = min(base + rng.choice([0, 0, 1, 4, -2]), HIGH) if LOW < base else base
        pos += rng.randrange(1, 4)
        scan.positions.append(pos)
        scan.base_offsets.append(base)
        scan.last_offsets.append(top)
        scan.running_max.append(rng.randrange(100))
        last = max(last, top)
    scan.batches = n
    return scan


def _sift(scan: LogScan, sieve: Sieve, rng: random.Random) -> LogScan:
    """The rows of ``scan`` given to ``sieve`` in random runs, as the log pass records them."""
    kept = LogScan()
    columns = ("positions", "base_offsets", "last_offsets", "running_max")
    at = 0
    while at < len(scan.positions):
        step = rng.choice([1, 2, 7, 50])
        for name in columns:
            getattr(kept, name).extend(getattr(scan, name)[at : at + step])
        at += step
        sieve.sift(kept)
    return kept


def _first_ending(scan: LogScan, offset: int) -> int:
    """The time-index check's search on a log out of order: the first batch whose last offset is ``offset``."""
    return next((k for k, last in enumerate(scan.last_offsets) if last == offset), -1)


@pytest.mark.parametrize("ordered", [False, True], ids=["going-back", "in-order"])
@pytest.mark.parametrize("seed", range(40))
def test_the_batches_kept_answer_every_search_as_all_batches_do(monkeypatch, seed: int, ordered: bool) -> None:
    """Every other seed sorts keys that do not ascend in runs of 3, then merges them."""
    rng = random.Random(seed)
    if seed % 2:
        monkeypatch.setattr(sieve_module, "RUN", 3)
    full = _log(rng, rng.randrange(0, 120), ordered)
    positions = list(full.positions)
    entries = rng.randrange(0, 40)
    pos_pool = [*positions, 0, 10**6, -4] if positions else [0, 3]
    at = [rng.choice(pos_pool) for _ in range(entries)]
    if rng.random() < 0.5:
        at.sort()
    xs = [rng.choice([rng.randrange(-3, 60), HIGH, LOW]) for _ in at]
    times = sorted(rng.randrange(-3, 60) for _ in range(rng.randrange(0, 40)))
    if rng.random() < 0.3:
        rng.shuffle(times)
    sieve = Sieve(array("q", at), array("q", xs), array("q", times))
    kept = _sift(full, sieve, rng)
    assert len(kept.positions) <= 3 * (len(at) + len(times))  # a few batches a question, never every batch
    where = {p: k for k, p in enumerate(kept.positions)}  # a batch kept: its number among those kept

    def same(k_full: int, k_kept: int) -> bool:
        return (k_full, k_kept) == (-1, -1) or (k_full >= 0 and kept.positions[k_kept] == positions[k_full])

    for p, x in zip(at, xs, strict=True):
        k = bisect_left(full.positions, p)
        if k == len(positions) or positions[k] != p:
            continue
        assert p in where  # the batch at an entry's position
        assert same(batch_holding(full, x, k, False), batch_holding(kept, x, where[p], False))
        if ordered:
            assert same(batch_holding(full, x, k, True), batch_holding(kept, x, where[p], True))
    for o in times:
        assert same(batch_holding(full, o, 0, False), batch_holding(kept, o, 0, False))
        assert same(_first_ending(full, o), _first_ending(kept, o))
        if ordered:
            assert same(batch_holding(full, o, 0, True), batch_holding(kept, o, 0, True))
            k_full, k_kept = bisect_right(full.last_offsets, o) - 1, bisect_right(kept.last_offsets, o) - 1
            exact = 0 <= k_full and full.last_offsets[k_full] == o
            assert exact == (0 <= k_kept and kept.last_offsets[k_kept] == o)
            assert not exact or same(k_full, k_kept)


@pytest.mark.parametrize("seed", range(20))
def test_marks_take_every_set_slot_of_a_range_once(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(0, 70)
    on = rng.random() < 0.5
    marks, model = Marks(n, on), [on] * n
    for _ in range(200):
        if n and rng.random() < 0.4:
            slot = rng.randrange(n)
            marks.set(slot)
            model[slot] = True
            continue
        lo = rng.randrange(n + 1)
        hi = rng.randrange(lo, n + 1)
        assert marks.take(lo, hi) == any(model[lo:hi])
        model[lo:hi] = [False] * (hi - lo)
