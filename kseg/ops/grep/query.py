"""What ``kseg grep`` looks for: a :class:`Query`, its tests on a batch's header (whole batches skipped
without decompressing) and on a record.

Every filter given must hold (they combine with AND).  Bytes are compared as bytes (``--key``, a
header's name and exact value); regular expressions search the text a decoder makes (``--key-regex``
the key decoder's, ``--value-regex`` the value decoder's, by default Kafka's string decoder: what
``kseg dump --print-data-log`` prints), a header value's regex Kafka's string decoding of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from kseg.format import v2
from kseg.format.strings import decode_text, string_decoder
from kseg.storage.ranges import EVERYTHING, Ranges

SHORTEST_REQUIRED = 3  # a shorter required text would rule out few batches


def required_text(pattern: re.Pattern[str]) -> str:
    """The longest run of ASCII characters every match of ``pattern`` holds, taken from the top level of
    its parse (a branch, a class, a repeat, a group ends a run), or "" when there is none or the pattern
    ignores case.  Kafka's string decoder turns an ASCII byte into that character and no other byte into
    it (a malformed sequence is replaced without taking an ASCII byte), so text holding it came from bytes
    holding its ASCII bytes."""
    if pattern.flags & re.IGNORECASE:
        return ""
    try:
        from re import _parser as parser  # type: ignore[attr-defined]  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as parser
    try:
        parsed = parser.parse(pattern.pattern, pattern.flags)
    except Exception:  # noqa: BLE001 - compiled already: a parse that fails here only forgoes the shortcut
        return ""
    literal = parser.LITERAL if hasattr(parser, "LITERAL") else parser.SRE_PARSE_LITERAL
    best, run = "", []
    for op, av in list(parsed) + [(None, None)]:
        if op is literal and av < 0x80:
            run.append(chr(av))
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    return best if len(best) >= SHORTEST_REQUIRED else ""


@dataclass(frozen=True)
class HeaderTest:
    """``--header NAME[=VALUE]`` (``value`` exact bytes, None: the header is there, whatever its value) or
    ``--header-regex NAME=REGEX`` (``pattern`` searched in the value's text; a null value never matches)."""

    name: bytes
    value: bytes | None = None
    pattern: re.Pattern[str] | None = None

    def holds(self, headers: tuple) -> bool:
        for k, v in headers:
            if k != self.name:
                continue
            if self.pattern is not None:
                if v is not None and self.pattern.search(string_decoder(v)):
                    return True
            elif self.value is None or (v is not None and v == self.value):
                return True
        return False


@dataclass(frozen=True)
class Query:
    """The filters of one ``kseg grep`` run (each None or false when not given)."""

    key: bytes | None = None
    key_regex: re.Pattern[str] | None = None
    value_regex: re.Pattern[str] | None = None
    headers: tuple[HeaderTest, ...] = ()
    ranges: Ranges = EVERYTHING
    producer_id: int | None = None
    transactional: bool = False
    control: bool = False  # control records (transaction markers, KRaft control records) instead of data
    tombstones: bool = False
    key_decoder: Callable[..., str] = string_decoder
    value_decoder: Callable[..., str] = string_decoder
    where: Any = None  # --where: a kseg.ops.grep.where.Condition on the decoded fields

    @property
    def literals(self) -> tuple[bytes, ...]:
        """Bytes every matching record holds verbatim (its key, header names and exact header values, the
        text a regular expression of the string decoder cannot match without): an uncompressed batch
        holding none of one of them holds no match (:mod:`kseg.ops.grep.search`)."""
        found = [] if self.key is None or not self.key else [self.key]
        for test in self.headers:
            found.append(test.name)
            if test.value:
                found.append(test.value)
        for pattern, decoder in ((self.key_regex, self.key_decoder), (self.value_regex, self.value_decoder)):
            if pattern is not None and decoder is string_decoder:
                found.append(required_text(pattern).encode("ascii"))
        return tuple(b for b in found if b)

    def batch_may_match(self, h: tuple) -> bool:
        """Whether a v2 batch with header ``h`` (scan's tuple) may hold a match, from the header alone:
        its producer id, attributes and largest timestamp (offsets: :func:`kseg.storage.ranges.place`)."""
        attrs = h[v2.ATTRIBUTES]
        if bool(attrs & v2.CONTROL_FLAG) != self.control:
            return False
        if self.transactional and not attrs & v2.TRANSACTIONAL_FLAG:
            return False
        if self.producer_id is not None and h[v2.PRODUCER_ID] != self.producer_id:
            return False
        return h[v2.MAX_TIMESTAMP] >= self.ranges.from_time

    def legacy_may_match(self) -> bool:
        """Whether a v0/v1 batch may hold a match: it has no producer, no attributes of a transaction, no
        control records."""
        return not (self.control or self.transactional) and self.producer_id in (None, -1)

    def record_matches(self, offset: int, timestamp: int, key: Any, value: Any, headers: tuple) -> bool:
        """Whether a record matches every record filter (offsets and times: ``ranges.holds``)."""
        if self.ranges is not EVERYTHING and not self.ranges.holds(offset, timestamp):
            return False
        if self.tombstones and value is not None:
            return False
        if self.key is not None and (key is None or key != self.key):
            return False
        for test in self.headers:
            if not test.holds(headers):
                return False
        if self.key_regex is not None:
            if key is None or not self.key_regex.search(decode_text(self.key_decoder, key, headers)):
                return False
        if self.value_regex is not None:
            if value is None or not self.value_regex.search(decode_text(self.value_decoder, value, headers)):
                return False
        if self.where is not None:
            decoders = (self.key_decoder, self.value_decoder)
            return bool(self.where.holds(offset, timestamp, key, value, headers, decoders))
        return True
