"""One JSON object is one line, whatever characters its strings hold."""

from __future__ import annotations

import json

from kseg.jsonlines import dumps


def test_unicode_line_breaks_are_escaped_and_round_trip() -> None:
    obj = {"payload": "a\u2028b\u2029c\x85d\ne", "k": "ünicöde ✓"}
    line = dumps(obj)
    assert line.splitlines() == [line]  # str.splitlines splits on U+0085/U+2028/U+2029 too
    assert "ünicöde ✓" in line  # other non-ASCII kept as is
    assert json.loads(line) == obj


def test_a_raw_value_is_written_as_it_is_where_it_stands() -> None:
    """A :class:`Raw` (JSON text already in the row's form) takes its place in the row, at any depth, in
    the encoder's order; its line breaks are escaped with the row's."""
    from kseg.jsonlines import Raw

    obj = {"a": 1, "key": Raw('{"k":"x\u2028"}'), "h": [{"x": Raw("[1,2.5]")}], "r": {"payload": Raw("null")}}
    line = dumps(obj)
    assert line == '{"a":1,"key":{"k":"x\\u2028"},"h":[{"x":[1,2.5]}],"r":{"payload":null}}'
    assert json.loads(line) == {"a": 1, "key": {"k": "x\u2028"}, "h": [{"x": [1, 2.5]}], "r": {"payload": None}}


def test_a_string_cannot_pose_as_a_raw_value() -> None:
    """What a Raw is first encoded as is random to the process: a string of the data is never replaced."""
    from kseg.jsonlines import _TOKEN, Raw

    assert dumps({"s": "\0kseg-raw-", "p": Raw("1")}) == '{"s":"\\u0000kseg-raw-","p":1}'
    assert _TOKEN.startswith("\0kseg-raw-") and len(_TOKEN) > 30
