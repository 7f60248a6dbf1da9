"""``tests/durations.tsv``, the order the test files are handed out in (tests/conftest.py): every file it
names exists, and ``tests/durations.py`` names a JUnit class's file."""

from __future__ import annotations

from tests.conftest import TESTS, recorded_durations
from tests.durations import file_of


def test_every_recorded_file_exists() -> None:
    took = recorded_durations()
    assert took and all(seconds > 0 for seconds in took.values())
    missing = [path for path in took if not (TESTS.parent / path).is_file()]
    assert missing == [], "renamed or removed: rewrite tests/durations.tsv (tests/durations.py)"


def test_a_junit_class_name_is_its_file() -> None:
    assert file_of("tests.cli.test_verify") == "tests/cli/test_verify.py"
    assert file_of("tests.test_durations.SomeClass") == "tests/test_durations.py"
