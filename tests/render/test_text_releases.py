"""``TextSink`` per Kafka release: the end-of-run reports and the lines 4.3's Java tool changed."""

from __future__ import annotations

import io

from kseg.format.releases import K40, K42, K43, K44
from kseg.ops.dump.dump import Problems
from kseg.render.text import TextSink, skip_metadata_line


def _problems() -> Problems:
    p = Problems()
    for pair in [(10, 9), (30, 29), (20, 19), (30, 28)]:  # discovery order; 30 twice
        p.add("index_mismatches", "/d/0.index", pair)
    for pair in [(-1, 100), (105, 107), (103, 105), (105, 108)]:
        p.add("non_consecutive", "/d/100.log", pair)
    p.add("not_found", "/d/0.timeindex", (7, -1))
    return p


def _stderr(release) -> str:
    err = io.BytesIO()
    sink = TextSink(io.BytesIO(), err, release=release)
    sink.problems(_problems())
    sink.flush()
    return err.getvalue().decode()


def test_scala_tools_print_reverse_discovery_order() -> None:
    assert (
        _stderr(K40)
        == _stderr(K42)
        == (
            "Mismatches in :/d/0.index\n"
            "  Index offset: 30, log offset: 28\n  Index offset: 20, log offset: 19\n"
            "  Index offset: 30, log offset: 29\n  Index offset: 10, log offset: 9\n"
            "The following indexed offsets are not found in the log.\n"
            "Indexed offset: 7, found log offset: -1\n"
            "Non-consecutive offsets in /d/100.log\n"
            "  105 is followed by 108\n  103 is followed by 105\n  105 is followed by 107\n  -1 is followed by 100\n"
        )
    )


def test_java_tool_sorts_and_keeps_one_entry_per_key() -> None:
    """4.3+: TreeMap(reverseOrder) of index offset -> log offset; TreeMap of first -> next offset; the
    last value put for a key wins; the not-found header names the file."""
    assert (
        _stderr(K43)
        == _stderr(K44)
        == (
            "Mismatches in :/d/0.index\n"
            "  Index offset: 30, log offset: 28\n  Index offset: 20, log offset: 19\n"
            "  Index offset: 10, log offset: 9\n"
            "The following indexed offsets are not found in :/d/0.timeindex\n"
            "Indexed offset: 7, found log offset: -1\n"
            "Non-consecutive offsets in /d/100.log\n"
            "  -1 is followed by 100\n  103 is followed by 105\n  105 is followed by 108\n"
        )
    )


def test_skip_metadata_without_a_key() -> None:
    assert skip_metadata_line(None, "v") == " payload: v\n"
    assert skip_metadata_line(None, "v", java_tool=True) == "| payload: v\n"
    assert skip_metadata_line("k", "v", java_tool=True) == skip_metadata_line("k", "v") == "| key: k payload: v\n"
    assert skip_metadata_line(None, None, java_tool=True) == "\n"
