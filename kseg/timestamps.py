"""Timestamps as users type them: epoch milliseconds, ISO-8601 with a zone, or ListOffsets' names.

Shared by the commands (``lookup-time``, ``export``) and the Spark data
source, so every entry point reads a time the same way.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re

from kseg.limits import INT64_MAX, INT64_MIN  # noqa: F401 - INT64_MIN re-exported

SPECIAL = {"earliest": -2, "latest": -1, "max-timestamp": -3}


@functools.cache  # (compiled for an ISO-8601 timestamp only)
def _iso() -> re.Pattern[str]:
    return re.compile(
        r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
        r"\s*(Z|z|[+-]\d{2}(?::?\d{2})?)\Z"
    )


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def parse_timestamp(text: str, *, names: bool = True) -> int:
    """``earliest`` (-2), ``latest`` (-1), ``max-timestamp`` (-3), epoch milliseconds,
    or ISO-8601 with a zone (``2024-10-27T03:33:20.1Z``, ``...+01:00``).  A time
    between two milliseconds is rounded up: the first record at or after it
    has a timestamp at or after the next millisecond.  ``names`` False: a time only
    (a range bound such as ``export --from-time``), and errors list only what is accepted."""
    t = text.strip()
    if not names and (t.lower() in SPECIAL or t in ("-1", "-2", "-3")):
        raise ValueError(
            f"{text!r}: give a time (epoch milliseconds or ISO-8601 with a zone, "
            "2024-10-27T03:33:20.100Z); earliest, latest and max-timestamp name lookups, not times"
        )
    if t.lower() in SPECIAL:
        return SPECIAL[t.lower()]
    if re.fullmatch(r"[+-]?\d+", t):
        value = int(t)
        if value < 0 and not names:
            raise ValueError(f"{text!r}: a timestamp is not negative (epoch milliseconds or ISO-8601 with a zone)")
        if value < 0 and value not in SPECIAL.values():
            raise ValueError(f"{text!r}: a negative timestamp must be -1 (latest), -2 (earliest) or -3 (max-timestamp)")
        if value > INT64_MAX:
            raise ValueError(f"{text!r}: beyond a 64-bit timestamp")
        return value
    m = _iso().match(t)
    if not m:
        if not names:
            raise ValueError(f"{text!r}: give epoch milliseconds or ISO-8601 with a zone (2024-10-27T03:33:20.100Z)")
        raise ValueError(
            f"{text!r}: give epoch milliseconds, ISO-8601 with a zone (2024-10-27T03:33:20.100Z), "
            "earliest, latest or max-timestamp"
        )
    year, month, day, hour, minute, second = (int(g or 0) for g in m.groups()[:6])
    frac, zone = m.group(7) or "", m.group(8)
    if zone in ("Z", "z"):
        offset = _dt.timedelta(0)
    else:
        digits = zone[1:].replace(":", "")
        offset = _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
        if zone[0] == "-":
            offset = -offset
    try:
        when = _dt.datetime(year, month, day, hour, minute, second, tzinfo=_dt.timezone(offset))
    except ValueError as exc:
        raise ValueError(f"{text!r}: {exc}") from None
    delta = when - _EPOCH
    ns = int((frac + "000000000")[:9]) if frac else 0
    total_ns = (delta.days * 86400 + delta.seconds) * 1_000_000_000 + ns
    ms = -(-total_ns // 1_000_000)  # ceil
    if ms < 0:
        raise ValueError(f"{text!r}: before 1970; Kafka timestamps are not negative")
    return ms
