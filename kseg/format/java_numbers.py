"""Numbers in text as Kafka's Java code reads them: the one rule for file names and auxiliary files.

Kafka reads a number out of text with ``Integer.parseInt`` / ``Long.parseLong`` (checkpoint lines, a
partition directory's ``<topic>-<partition>`` through Scala's ``toInt``, a segment file's base offset
through ``toLong``).  Both take an optional ``+`` or ``-`` and at least one digit as ``Character.digit``
knows them: any Unicode decimal digit (category Nd: ``"٣٤"`` is 34) *of one UTF-16 unit*, since Java
parses ``char`` by ``char`` -- so ``"𝟎"`` (U+1D7CE, an Nd digit outside the BMP) is no number, and
neither is ``"²"`` (U+00B2, category No), nor a blank or an underscore.  Python's ``str.isdigit`` accepts
``"²"`` (and ``int("²")`` then fails), ``int()`` accepts blanks, underscores and digits beyond the BMP:
none of them is Java's rule.  Facts checked against Java 17.
"""

from __future__ import annotations

from kseg.limits import INT32_MAX, INT64_MAX, INT64_MIN

INT32_MIN = -INT32_MAX - 1
_BMP = 0x10000


def is_digit(ch: str) -> bool:
    """``Character.isDigit(char)``: a decimal digit (Nd) of one UTF-16 unit."""
    return ch.isdecimal() and ord(ch) < _BMP


def is_digits(text: str) -> bool:
    """``text`` is one or more :func:`is_digit` characters."""
    return bool(text) and text.isdecimal() and all(ord(ch) < _BMP for ch in text)


def parse_int(text: str, low: int = INT32_MIN, high: int = INT32_MAX) -> int | None:
    """``text`` as ``Integer.parseInt`` reads it (with ``low``/``high`` of ``long``: ``Long.parseLong``),
    or None where Java throws ``NumberFormatException``."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isdigit() if digits.isascii() else is_digits(digits)):  # (ASCII's digits: 0-9, the usual case)
        return None
    value = int(text)  # int() reads every Nd digit as Character.digit does
    return value if low <= value <= high else None


def parse_long(text: str) -> int | None:
    """``Long.parseLong(text)``, or None."""
    return parse_int(text, INT64_MIN, INT64_MAX)
