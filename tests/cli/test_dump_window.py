"""The compiled engine's window loop (issue 34): ``kseg dump`` prints a window of batches per call and
hands the batch it cannot print to the per-batch path, the same bytes as the Python engine.

The log mixes, among thousands of one-record batches (more lines than one call's output bound, and
more bytes than the reader's 8 MiB window, so batches cross a window's end), every batch the loop
gives back: compressed, control, transactional markers, a legacy entry, a damaged CRC, a gap in the
offsets, headers, null keys and values, invalid UTF-8, LogAppendTime, a batch larger than the window,
and trailing bytes; and runs with ``--max-bytes`` cutting the file mid-window.  The same log as JSON
Lines (shallow, ``--deep-iteration``, ``--print-data-log``), with a batch of every character JSON escapes;
and the engine's JSON rows of that batch, written by the window loop itself, against the Python sink's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kseg import engine
from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.dump.dump import WINDOW_SHALLOW, WINDOW_SIZES, WINDOW_STRINGS
from kseg.testing.control import build_control_batch
from kseg.testing.legacy import build_legacy
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import TESTS

pytestmark = pytest.mark.skipif(
    engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)"
)


def dump(args: list[str], eng: str) -> tuple:
    p = subprocess.run(
        [sys.executable, "-m", "kseg", "dump", *args],
        capture_output=True,
        env={**os.environ, "KSEG_ENGINE": eng},
        cwd=TESTS.parent,
        timeout=600,
    )
    return p.returncode, p.stdout, p.stderr


#: records whose JSON rows escape every character JSON Lines escapes (controls, quote, backslash, U+0085,
#: U+2028, U+2029), keep what they need not (DEL, other non-ASCII), and header values that are not UTF-8
#: (base64), null, empty: a batch the window loop writes itself in every mode
ESCAPES = [
    RecordSpec(
        bytes(range(32)) + b'"\\\x7f',
        "\u0085\u2028\u2029\u00c5\u0085 \u20ac\U0001f600".encode(),
        7,
        headers=(
            ('q"\\\n', b"\xff\xfe\x00"),
            ("\u2028", None),
            ("", b""),
            ("b", b"\x80abc"),
            ("c", b"\t" + "\u0085".encode()),
        ),
    ),
    RecordSpec(None, None, 8, headers=(("k", b"v"),)),
    RecordSpec(b"", b"", 9),
]


def mixed_log(path: Path) -> int:
    """Write the log; returns its size."""
    value = b"v" * 400
    offset = 0
    with open(path, "wb") as f:

        def one(**kw) -> None:
            nonlocal offset
            f.write(build_v2_batch([RecordSpec(b"k%d" % offset, value, 1000 + offset)], base_offset=offset, **kw))
            offset += 1

        for i in range(24000):  # ~11 MiB: past one window
            if i == 100:
                f.write(build_v2_batch([RecordSpec(b"a", b"b", 5)] * 3, base_offset=offset, codec="gzip"))
                offset += 3
            elif i == 200:
                f.write(
                    build_control_batch(
                        "COMMIT", base_offset=offset, producer_id=7, producer_epoch=1, coordinator_epoch=2, timestamp=9
                    )
                )
                offset += 1
            elif i == 300:
                f.write(build_legacy([RecordSpec(b"l", b"legacy", 77)], base_offset=offset))
                offset += 1
            elif i == 400:
                one(crc=12345)
            elif i == 500:
                offset += 5  # a gap: "Non-consecutive offsets"
                one()
            elif i == 600:
                recs = [
                    RecordSpec(b"h", b"x", 1, headers=(("h1", b"x"), ("\u00e9", None))),
                    RecordSpec(None, b"null key", 2),
                    RecordSpec(b"null value", None, 3),
                    RecordSpec(b"\xff", b"\xed\xa0\x80", 4),
                ]
                f.write(build_v2_batch(recs, base_offset=offset, producer_id=3, base_sequence=2**31 - 2))
                offset += len(recs)
            elif i == 700:
                one(timestamp_type="LogAppendTime", log_append_time=123)
            elif i == 800:
                f.write(build_v2_batch(ESCAPES, base_offset=offset, producer_id=5, base_sequence=4))
                offset += len(ESCAPES)
            elif i == 20000:  # larger than the 8 MiB window
                f.write(build_v2_batch([RecordSpec(b"big", b"x" * (9 << 20), 1)], base_offset=offset))
                offset += 1
            else:
                one()
        f.write(b"\x00" * 12)  # trailing bytes (fewer than a batch head)
    return path.stat().st_size


def test_window_loop_prints_what_the_python_engine_prints(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    size = mixed_log(log)
    for mode in ([], ["--deep-iteration"], ["--print-data-log"]):
        for extra in ([], ["--max-bytes", str(size // 3)], ["--kafka-version", "4.3"]):
            args = [*mode, *extra, "--files", str(log)]
            c = dump(args, "c")
            assert c == dump(args, "python"), args
            assert c[1].count(b"baseOffset: ") > 7000, args
            if not extra:
                assert b"Found 12 invalid bytes" in c[1] and b"isvalid: false" in c[1]
                if mode:
                    assert b"Non-consecutive offsets" in c[2]
                    assert b"headerKeys: [h1,\xc3\xa9]" in c[1]


def test_json_window_loop_writes_what_the_python_sink_writes(tmp_path: Path) -> None:
    log = tmp_path / "00000000000000000000.log"
    size = mixed_log(log)
    for mode in ([], ["--deep-iteration"], ["--print-data-log"]):
        for extra in ([], ["--max-bytes", str(size // 3)]):
            args = ["--format", "json", *mode, *extra, "--files", str(log)]
            c = dump(args, "c")
            assert c == dump(args, "python"), args
            rows = [json.loads(line) for line in c[1].splitlines()]
            assert sum(r["type"] == "batch" for r in rows) > 7000, args
            if mode and not extra:
                assert any(h.get("base64") for r in rows if r["type"] == "record" for h in r.get("headers", []))
                assert any(r["type"] == "problem" and r["kind"] == "non_consecutive_offsets" for r in rows)


@pytest.mark.parametrize("mode", [WINDOW_SHALLOW, WINDOW_SIZES, WINDOW_STRINGS])
def test_the_engine_itself_writes_the_json_rows_of_escapes(tmp_path: Path, mode: int) -> None:
    """The window loop takes the batch of escapes whole (it does not hand it back) and writes the rows
    the Python sink writes for it."""
    log = tmp_path / "00000000000000000000.log"
    data = build_v2_batch(ESCAPES, producer_id=5, base_sequence=4) + build_v2_batch(ESCAPES, base_offset=3)
    log.write_bytes(data)
    assert engine.C is not None
    names = ("CreateTime", "LogAppendTime")
    out, pos, last, full = engine.C.dump_window(
        memoryview(data), 0, len(data), 0, len(data), mode, -1, False, None, names, 1 << 16, SCHEMA_VERSION
    )
    assert (pos, full) == (len(data), False)
    assert last == (-1 if mode == WINDOW_SHALLOW else 5)
    args = [["--format", "json"], ["--format", "json", "--deep-iteration"], ["--format", "json", "--print-data-log"]]
    code, stdout, _ = dump([*args[mode], "--files", str(log)], "python")
    assert code == 0
    expected = b"".join(
        line + b"\n" for line in stdout.split(b"\n") if b'"type":"batch"' in line or b'"type":"record"' in line
    )
    assert out == expected
    assert (b"\\u2028" in out and b"\\u0085" in out and b'"base64":true' in out) == (mode != WINDOW_SHALLOW)
