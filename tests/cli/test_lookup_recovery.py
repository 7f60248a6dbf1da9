"""Lookups recover from an ``.index`` entry pointing into the middle of a batch (issue 19): the log end
and the scan are read from the previous entry naming a whole valid batch (else the segment start),
with a note, so an offset in the log is found -- never "past the log end offset 0"."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import assert_no_traceback, run_subprocess


def _partition(tmp_path: Path, entries: list[tuple[int, int]]) -> Path:
    """Three batches of three records (offsets 0-2, 3-5, 6-8; 88 bytes each) and an index of ``entries``
    (relative offset, position)."""
    d = tmp_path / "t-0"
    d.mkdir()
    batches = [
        build_v2_batch(
            [RecordSpec(None, b"v%d" % (b * 3 + i), 1000 * (b + 1) + i) for i in range(3)], base_offset=b * 3
        )
        for b in range(3)
    ]
    assert [len(b) for b in batches] == [88, 88, 88]
    (d / "00000000000000000000.log").write_bytes(b"".join(batches))
    (d / "00000000000000000000.index").write_bytes(b"".join(struct.pack(">ii", o, p) for o, p in entries))
    return d


@pytest.mark.parametrize(
    "entries, start, at",
    [
        ([(3, 20)], 0, "the segment start"),  # the only entry points inside batch 0-2
        ([(3, 88), (6, 100)], 88, "entry #0"),  # the last entry points inside batch 3-5: back to entry #0
    ],
)
def test_an_entry_inside_a_batch_is_recovered_from_the_previous_good_position(
    tmp_path: Path, entries: list, start: int, at: str
) -> None:
    d = _partition(tmp_path, entries)
    slot, (_, bad) = len(entries) - 1, entries[-1]
    for target in (3, 7, 8):
        r = run_subprocess(["lookup-offset", str(target), str(d)])
        assert r.exit_code == 0, r.errtext
        assert "log start offset 0, log end offset 9" in r.text
        assert f"Found: offset {target} in batch" in r.text
        assert_no_traceback(r)
    note = (
        f"00000000000000000000.index: entry #{slot} points at position {bad}, where no whole valid batch starts "
        f"(the index is damaged, see kseg verify-index); the log end is read from position {start} ({at}) instead"
    )
    assert note in r.errtext, r.errtext
    assert f"the scan reads from position {start} ({at}) instead" in r.errtext
    assert f"Scan: from position {start}," in r.text
    r = run_subprocess(["lookup-offset", "9", str(d)])
    assert r.exit_code == 1 and "offset 9 is the log end offset" in r.errtext


def test_lookup_time_recovers_too(tmp_path: Path) -> None:
    d = _partition(tmp_path, [(3, 20)])
    r = run_subprocess(["lookup-time", "2001", str(d)])
    assert r.exit_code == 0, r.errtext
    assert "Found: offset 4, timestamp 2001" in r.text and "log end offset 9" in r.text
