"""Numbers in text as Java reads them (``Integer.parseInt``, ``Long.parseLong``, ``Character.isDigit``):
each answer here was checked against Java 17."""

from __future__ import annotations

import pytest

from kseg.format.java_numbers import INT32_MIN, is_digit, is_digits, parse_int, parse_long
from kseg.limits import INT32_MAX, INT64_MAX, INT64_MIN

JAVA_17 = [  # text, Integer.parseInt (None: NumberFormatException)
    ("0", 0),
    ("+5", 5),
    ("-5", -5),
    ("\u0663\u0664", 34),  # Arabic-Indic digits: Nd
    ("\uff11\uff12", 12),  # fullwidth digits: Nd
    ("\u0967", 1),  # Devanagari one
    ("\u00b2", None),  # superscript two: No, not Nd (Python's isdigit says yes)
    ("\u2460", None),  # circled one: No
    ("\U0001d7ce", None),  # mathematical bold zero: Nd, but two UTF-16 units (Java parses char by char)
    ("1_0", None),
    (" 1", None),
    ("1 ", None),
    ("+", None),
    ("-", None),
    ("", None),
    ("0x1", None),
    ("2147483647", INT32_MAX),
    ("2147483648", None),
    ("-2147483648", INT32_MIN),
    ("-2147483649", None),
]


@pytest.mark.parametrize("text,value", JAVA_17)
def test_parse_int_is_javas(text: str, value: int | None) -> None:
    assert parse_int(text) == value


def test_parse_long_takes_the_long_range() -> None:
    assert parse_long(str(INT64_MAX)) == INT64_MAX and parse_long(str(INT64_MIN)) == INT64_MIN
    assert parse_long(str(INT64_MAX + 1)) is None and parse_long("\u00b2") is None


def test_character_is_digit() -> None:
    assert is_digit("7") and is_digit("\u0663") and not is_digit("\u00b2") and not is_digit("\U0001d7ce")
    assert is_digits("0123") and not is_digits("") and not is_digits("12\u00b2")
