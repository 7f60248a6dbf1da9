"""``TimeIndexView.order_problem``: the first time-index entry whose timestamp is not above the one before it
(``TimeIndex`` appends only larger timestamps), found a window at a time -- the same answer as comparing
every pair of entries, on indexes of one window and of several."""

from __future__ import annotations

import struct

import pytest

from kseg.format.indexes import WINDOW, TimeIndexView

PER_WINDOW = WINDOW // 12


def _index(timestamps: list[int]) -> TimeIndexView:
    fields = [x for n, ts in enumerate(timestamps) for x in (ts, n)]
    return TimeIndexView(struct.pack(">" + "qi" * len(timestamps), *fields), 1000)  # (one C call)


def _pairwise(timestamps: list[int]) -> str | None:
    for n in range(1, len(timestamps)):
        if timestamps[n] <= timestamps[n - 1]:
            return f"entry #{n} ({timestamps[n]}) is not above entry #{n - 1} ({timestamps[n - 1]})"
    return None


@pytest.mark.parametrize(
    "timestamps",
    [
        [],
        [5],
        [1, 2, 3],
        [3, 2],
        [1, 1],  # equal: not above
        [-9, -3, 0, 2**63 - 1],
        [1, 5, 4, 3],  # the first fault is named
        [10, 20, 30, 25, 40],
    ],
)
def test_the_first_entry_out_of_order(timestamps: list[int]) -> None:
    assert _index(timestamps).order_problem() == _pairwise(timestamps)


@pytest.mark.parametrize("at", [1, PER_WINDOW - 1, PER_WINDOW, PER_WINDOW + 1, 2 * PER_WINDOW + 7])
def test_a_fault_across_the_windows_is_found_where_it_is(at: int) -> None:
    timestamps = list(range(0, 3 * PER_WINDOW * 2, 2))
    timestamps[at] = timestamps[at - 1]  # equal to the entry before it (in the previous window, at a window's start)
    view = _index(timestamps)
    assert (
        view.order_problem()
        == _pairwise(timestamps)
        == (f"entry #{at} ({timestamps[at]}) is not above entry #{at - 1} ({timestamps[at - 1]})")
    )


def test_increasing_across_the_windows_is_no_problem() -> None:
    assert _index(list(range(3 * PER_WINDOW))).order_problem() is None
