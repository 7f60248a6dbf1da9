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
