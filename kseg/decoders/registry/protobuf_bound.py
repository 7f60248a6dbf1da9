"""The bound on Protobuf fields printed with their default, checked before protobuf parses a payload.

The registry's console consumer prints every field without presence, absent ones with their default
(``includingDefaultValueFields``).  An element of a repeated message field takes two bytes when empty
(its tag and a zero length) yet prints every field of its type: a payload of 100 KB of them, of a
type of 50 fields, is 20 MB of text and a process of 300 MB (protobuf's message objects and the
dict built for the JSON).  So, for a message type with a repeated message field anywhere below it
(:func:`needs_bound`), the payload's wire format is walked first (:class:`Bound`): each message
read adds its absent fields without presence, and more than :data:`MAX_DEFAULTS` in all refuses the
payload with a reason.  Nothing is built.  Where the wire data is malformed the walk stops and
protobuf's parser gives its own reason (it parses the whole payload before anything is printed).
A payload too short to pass the bound is not walked: each message below the top takes two bytes at
least (a tag and a length, or a group's two tags), so it prints at most ``(len // 2 + 1) * widest``
defaults, ``widest`` the most fields of any of its types.
"""

from __future__ import annotations

from typing import Any

MAX_DEFAULTS = 1 << 19  # at the bound, a process of about 100 MiB (the dict and the text)
REFUSED = (
    f"more than {MAX_DEFAULTS} fields that take no byte (absent, printed with their default) "
    "in the payload's messages: not read"
)
MAX_DEPTH = 100  # protobuf's own recursion limit: deeper, its parser refuses the payload
_MESSAGE = (11, 10)  # FieldDescriptor.TYPE_MESSAGE, TYPE_GROUP
_WIRE = {11: 2, 10: 3}  # the wire type each is read from (another is an unknown field to protobuf)
_UNKNOWN: tuple[dict[tuple[int, int], Any], frozenset[int], bool] = ({}, frozenset(), True)  # an unknown group's


def _types(desc: Any) -> list[Any]:
    """``desc`` and every message type below it, once each."""
    stack, seen, out = [desc], set(), []
    while stack:
        d = stack.pop()
        if d.full_name not in seen:
            seen.add(d.full_name)
            out.append(d)
            stack.extend(f.message_type for f in d.fields if f.type in _MESSAGE)
    return out


def needs_bound(desc: Any) -> bool:
    """Whether a repeated message field (a map's entries aside) lies anywhere in ``desc``'s type."""
    return any(
        f.type in _MESSAGE and f.is_repeated and not f.message_type.GetOptions().map_entry
        for d in _types(desc)
        for f in d.fields
    )


class _End(Exception):
    """Where protobuf's parser stops with its own error."""


class Bound:
    """Walks a payload's wire format with its message type, counting the defaults it would print."""

    def __init__(self, desc: Any) -> None:
        self.desc = desc
        self.plans: dict[str, tuple[dict[tuple[int, int], Any], frozenset[int], bool]] = {}
        self.widest = max(len(self.plan(d)[1]) for d in _types(desc)) or 1

    def plan(self, d: Any) -> tuple[dict[tuple[int, int], Any], frozenset[int], bool]:
        """((field number, wire type) -> the field's message type, the numbers printed when absent, whether
        its defaults go uncounted: a map's entry, whose absent key or value prints nothing of its own)."""
        if d is None:
            return _UNKNOWN
        p = self.plans.get(d.full_name)
        if p is None:
            subs = {(f.number, _WIRE[f.type]): f.message_type for f in d.fields if f.type in _MESSAGE}
            printed = frozenset(f.number for f in d.fields if not f.has_presence)
            p = self.plans[d.full_name] = (subs, printed, d.GetOptions().map_entry)
        return p

    def check(self, data: bytes) -> None:
        """Raises ValueError(:data:`REFUSED`) when ``data`` would print too many defaults; else returns."""
        if (len(data) // 2 + 1) * self.widest <= MAX_DEFAULTS:
            return  # too short to hold more
        self.data, self.count = data, 0
        try:
            self.message(self.desc, 0, len(data), 0, None)
        except _End:
            return  # protobuf's parser refuses the payload, with its reason, before anything is printed
        finally:
            self.data = b""
        if self.count > MAX_DEFAULTS:
            raise ValueError(REFUSED)

    def varint(self, pos: int, end: int) -> tuple[int, int]:
        data, n, shift = self.data, 0, 0
        while True:
            if pos >= end or shift > 63:
                raise _End
            b = data[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n, pos

    def message(self, d: Any, pos: int, end: int, depth: int, group: int | None) -> int:
        """Walks one message from ``pos`` (to ``end``, or to the end tag of ``group``): where it ends."""
        if depth > MAX_DEPTH:
            raise _End
        subs, printed, map_entry = self.plan(d)
        seen: set[int] = set()
        while pos < end:
            tag, pos = self.varint(pos, end)
            number, wire = tag >> 3, tag & 7
            if wire == 4:
                if number != group:
                    raise _End
                break
            if number == 0:
                raise _End
            seen.add(number)
            sub = subs.get((number, wire))
            if wire == 0:
                _, pos = self.varint(pos, end)
            elif wire == 1 or wire == 5:
                pos += 8 if wire == 1 else 4
            elif wire == 2:
                size, pos = self.varint(pos, end)
                if size > end - pos:
                    raise _End
                if sub is not None:
                    self.message(sub, pos, pos + size, depth + 1, None)
                pos += size
            elif wire == 3:  # a group (or an unknown one, sub None): to its end tag
                pos = self.message(sub, pos, end, depth + 1, number)
            else:
                raise _End
        else:
            if group is not None or pos > end:
                raise _End
        if not map_entry:
            self.count += len(printed - seen)
        return pos
