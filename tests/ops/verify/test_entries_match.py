"""verify-index's bulk checks of a run of index entries (issue 34): the engine's ``entries_match`` answers what
the Python rule (:func:`kseg.ops.verify.offset_index._batch_ends`, :func:`kseg.ops.verify.time_index._exact_times`)
answers, on runs of entries that name the recorded batches and on every way one can fail to: a key that names
no batch, a value or a base offset that differs, keys or values that do not increase (from the run before too),
a position past the log's end or below 0; an absolute offset past int64 and a part of an entry are left to the
Python rule.  The engine reads the entries from the index file's bytes."""

from __future__ import annotations

import random
from array import array

import pytest

from kseg import engine
from kseg.format.indexes import OFFSET_ENTRY, TIME_ENTRY
from kseg.limits import INT64_MAX, INT64_MIN
from kseg.ops.verify.offset_index import _batch_ends
from kseg.ops.verify.result import LogScan
from kseg.ops.verify.time_index import _exact_times

pytestmark = pytest.mark.skipif(
    engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)"
)


def _scan(rnd: random.Random, n: int) -> LogScan:
    scan = LogScan()
    position = offset = ts = 0
    for _ in range(n):
        position += rnd.randint(1, 200)
        base = offset + rnd.randint(1, 3)
        offset = base + rnd.randint(0, 4)
        ts += rnd.randint(0, 2)
        scan.positions.append(position)
        scan.base_offsets.append(base)
        scan.last_offsets.append(offset)
        scan.running_max.append(ts)
    scan.valid_end = position + 100
    return scan


INT32 = (-(1 << 31), (1 << 31) - 1)


def _mutate(rnd: random.Random, keys: list[int], values: list[int], wide_values: bool) -> None:
    """One way for a run of entries to fail (numbers kept to the file's field widths)."""
    i = rnd.randrange(len(keys))
    kind = rnd.randrange(7)
    if kind == 0:
        keys[i] += 1  # names no batch (or another one)
    elif kind == 1:
        values[i] += rnd.choice([-1, 1])
    elif kind == 2 and i:
        keys[i] = keys[i - 1]  # does not increase
    elif kind == 3 and i:
        values[i] = values[i - 1]
    elif kind == 4:
        keys[i] = rnd.choice([-5, 10**9, *INT32])
    elif kind == 5:
        values[i] = rnd.choice([-1, *INT32] + ([INT64_MAX, INT64_MIN] if wide_values else []))
    else:
        del keys[i], values[i]
        if not keys:
            keys.append(0)
            values.append(0)


def _offset_entries(base: int, offsets: list[int], positions: list[int]) -> bytes:
    return b"".join(OFFSET_ENTRY.pack(o - base, p) for o, p in zip(offsets, positions, strict=True))


def _time_entries(base: int, timestamps: list[int], offsets: list[int]) -> bytes:
    return b"".join(TIME_ENTRY.pack(t, o - base) for t, o in zip(timestamps, offsets, strict=True))


@pytest.mark.parametrize("seed", range(40))
def test_the_engine_answers_as_the_python_rule(seed: int) -> None:
    rnd = random.Random(seed)
    scan = _scan(rnd, rnd.randint(1, 300))
    base = 0  # the segment's base offset: entries hold offsets relative to it
    n = len(scan.positions)
    end = max(scan.valid_end, 1)
    decided = 0
    for _ in range(60):
        picked = sorted(rnd.sample(range(n), rnd.randint(1, n)))
        positions = [scan.positions[k] for k in picked]
        offsets = [scan.last_offsets[k] for k in picked]
        times = [scan.running_max[k] for k in picked]
        if rnd.random() < 0.6:
            _mutate(rnd, positions, offsets, False)
        if rnd.random() < 0.3:  # a base offset above the entry's offset: the entry names a batch wrongly
            k = rnd.randrange(n)
            scan.base_offsets[k], saved = scan.last_offsets[k] + 1, scan.base_offsets[k]
        else:
            k, saved = -1, 0
        p0, o0 = scan.positions[picked[0]], scan.last_offsets[picked[0]]  # (the run before ends in int64)
        prev = rnd.choice([(INT64_MIN, INT64_MIN), (p0 - 1, o0 - 1), (p0, o0)])
        expected = _batch_ends(offsets, positions, prev[1], prev[0], end, scan)
        data = _offset_entries(base, offsets, positions)
        args = (scan.positions, scan.last_offsets, scan.base_offsets)
        got = engine.C.entries_match(data, 0, base, prev[0], prev[1], 0, end - 1, *args)
        assert got == expected, (positions, offsets, prev)
        if k >= 0:
            scan.base_offsets[k] = saved
        toffsets = [scan.last_offsets[k] for k in picked]
        if rnd.random() < 0.6:
            _mutate(rnd, toffsets, times, True)
        t0 = scan.running_max[picked[0]]
        tprev = rnd.choice([(INT64_MIN, INT64_MIN), (o0 - 1, t0 - 1), (o0, t0)])
        expected = _exact_times(times, toffsets, tprev[1], tprev[0], scan)
        data = _time_entries(base, times, toffsets)
        args = (scan.last_offsets, scan.running_max, None)
        got = engine.C.entries_match(data, 1, base, tprev[0], tprev[1], INT64_MIN, INT64_MAX, *args)
        assert got == expected, (toffsets, times, tprev)
        decided += 2
    assert decided == 120


def test_offsets_past_int64_and_partial_entries_are_left_to_the_python_rule() -> None:
    keys = array("q", [10, 20])
    near = INT64_MAX - 5  # a base offset whose entries' absolute offsets pass int64
    data = OFFSET_ENTRY.pack(0, 10) + OFFSET_ENTRY.pack(10, 20)
    assert engine.C.entries_match(data, 0, near, INT64_MIN, INT64_MIN, 0, 99, keys, array("q", [near, 0]), None) is None
    assert engine.C.entries_match(data[:-1], 0, 0, INT64_MIN, INT64_MIN, 0, 99, keys, keys, None) is None
    data = OFFSET_ENTRY.pack(10, 10) + OFFSET_ENTRY.pack(20, 20)
    assert engine.C.entries_match(data, 0, 0, INT64_MIN, INT64_MIN, 0, 99, keys, keys, None) is True
    assert engine.C.entries_match(data, 0, 0, INT64_MIN, INT64_MIN, 0, 19, keys, keys, None) is False
