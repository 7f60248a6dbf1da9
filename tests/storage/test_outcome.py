"""``kseg.storage.outcome.exit_code``: the one mapping of what was read and found to 0, 1 or 2."""

from __future__ import annotations

import pytest

from kseg.limits import EXIT_ERROR, EXIT_OK, EXIT_PROBLEMS
from kseg.storage.outcome import COMPLETE, CORRUPT, TRUNCATED, UNREADABLE, VANISHED, ReadOutcome, exit_code


@pytest.mark.parametrize(
    "stops, problems, failed, code",
    [
        ((), False, False, EXIT_OK),
        ((COMPLETE, COMPLETE), False, False, EXIT_OK),
        ((COMPLETE,), True, False, EXIT_PROBLEMS),
        ((COMPLETE, CORRUPT), False, False, EXIT_PROBLEMS),
        ((TRUNCATED,), False, False, EXIT_PROBLEMS),
        ((CORRUPT, UNREADABLE), True, False, EXIT_ERROR),
        ((VANISHED,), False, False, EXIT_ERROR),
        ((), False, True, EXIT_ERROR),
        ((COMPLETE,), True, True, EXIT_ERROR),
    ],
)
def test_exit_code(stops, problems, failed, code) -> None:
    outcomes = [ReadOutcome(f"{i}.log", stop=s) for i, s in enumerate(stops)] + [None]
    assert exit_code(outcomes, problems=problems, failed=failed) == code
