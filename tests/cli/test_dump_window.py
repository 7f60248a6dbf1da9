"""The compiled engine's window loop (issue 34): ``kseg dump`` prints a window of batches per call and
hands the batch it cannot print to the per-batch path, the same bytes as the Python engine.

The log mixes, among thousands of one-record batches (more lines than one call's output bound, and
more bytes than the reader's 8 MiB window, so batches cross a window's end), every batch the loop
gives back: compressed, control, transactional markers, a legacy entry, a damaged CRC, a gap in the
offsets, headers, null keys and values, invalid UTF-8, LogAppendTime, a batch larger than the window,
and trailing bytes; and runs with ``--max-bytes`` cutting the file mid-window.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kseg import engine
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
