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
from pathlib import Path

import pytest

from kseg import engine
from kseg.format.compression import window_codec, xxh32
from kseg.jsonlines import SCHEMA_VERSION
from kseg.ops.dump.dump import WINDOW_SHALLOW, WINDOW_SIZES, WINDOW_STRINGS
from kseg.testing.bombs import null_bomb_batch
from kseg.testing.codecs import compress
from kseg.testing.control import build_control_batch
from kseg.testing.legacy import build_legacy
from kseg.testing.v2 import MAGIC_V2, RecordSpec, attributes_v2, build_v2_batch, encode_record, finish_batch
from tests.conftest import TESTS, run_cli, run_cli_many

pytestmark = pytest.mark.skipif(
    engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)"
)


def dump(args: list[str]) -> tuple:
    """``kseg dump ARGS`` on the compiled engine, in this process: (exit code, stdout, stderr)."""
    r = run_cli(["dump", *args], cwd=TESTS.parent)
    return r.exit_code, r.stdout, r.stderr


def python_dumps(runs: list[list[str]]) -> list[tuple]:
    """``kseg dump ARGS`` of each of ``runs`` on the Python engine (``KSEG_ENGINE=python``), in one child."""
    done = run_cli_many([["dump", *args] for args in runs], cwd=TESTS.parent, env={"KSEG_ENGINE": "python"})
    return [(r.exit_code, r.stdout, r.stderr) for r in done]


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


#: the records of the compressed batches: headers, null key and value, a value past one LZ4 block
RECS = [
    RecordSpec(b"c0", b"zipped", 11, headers=(("h", b"x"), ("n", None))),
    RecordSpec(None, b"null key", 12),
    RecordSpec(b"null value", None, 13),
    RecordSpec(b"c3", bytes(range(32, 127)) * 800, 14),
]


def _body(recs: list[RecordSpec]) -> bytes:
    return b"".join(
        encode_record(i, r.timestamp - recs[0].timestamp, r.key, r.value, r.headers) for i, r in enumerate(recs)
    )


def _batch(codec: str, payload: bytes, offset: int, recs: list[RecordSpec] = RECS, count: int | None = None) -> bytes:
    """A v2 batch of ``recs`` at ``offset`` whose records are ``payload`` as written (its CRC computed)."""
    n = len(recs) if count is None else count
    attrs = attributes_v2(codec, "CreateTime", False, False, False)
    ts = recs[0].timestamp
    return finish_batch(offset, 0, attrs, len(recs) - 1, ts, recs[-1].timestamp, -1, -1, -1, n, payload)


def _lz4_frame(data: bytes, flags: int = 0x60, content_size: bool = False, checksums: bool = False) -> bytes:
    """An LZ4 frame of ``data`` with the options Kafka's writer leaves out: the content size, block checksums,
    and every other block stored uncompressed."""
    import lz4.block

    flg = flags | (0x08 if content_size else 0) | (0x10 if checksums else 0)
    desc = bytes([flg, 0x40]) + (len(data).to_bytes(8, "little") if content_size else b"")
    out = [b"\x04\x22\x4d\x18", desc, bytes([(xxh32(desc) >> 8) & 0xFF])]
    for k, start in enumerate(range(0, len(data), 1 << 16)):
        chunk = data[start : start + (1 << 16)]
        block = lz4.block.compress(chunk, store_size=False) if k % 2 == 0 else chunk
        out.append((len(block) | (0 if k % 2 == 0 else 0x80000000)).to_bytes(4, "little"))
        out.append(block)
        if checksums:
            out.append(xxh32(block).to_bytes(4, "little"))
    out.append(bytes(4))
    return b"".join(out)


def compressed(offset: int) -> dict[str, tuple[bytes, bool]]:
    """Compressed batches at ``offset``, by name: (batch, whether the window loop decompresses and prints it
    itself).  The rest it hands to the per-batch path: gzip and snappy, a damaged stream, more than a MiB
    decompressed, more lines than its bound."""
    body = _body(RECS)
    zstd, lz4 = compress("zstd", body, MAGIC_V2), compress("lz4", body, MAGIC_V2)
    bad_desc = bytearray(lz4)
    bad_desc[6] ^= 0xFF
    framed = _lz4_frame(body, content_size=True, checksums=True)
    bad_sum = bytearray(framed)
    bad_sum[-5] ^= 1  # the last block's checksum
    big = [RecordSpec(b"big", bytes(600_000), 1), RecordSpec(b"big", bytes(600_000), 2)]
    return {
        "lz4": (build_v2_batch(RECS, base_offset=offset, codec="lz4"), True),
        "zstd": (build_v2_batch(RECS, base_offset=offset, codec="zstd"), True),
        "zstd escapes": (build_v2_batch(ESCAPES, base_offset=offset, codec="zstd", producer_id=5), True),
        "zstd two frames": (
            _batch("zstd", compress("zstd", body[:300], MAGIC_V2) + compress("zstd", body[300:], MAGIC_V2), offset),
            True,
        ),
        "lz4 checksums": (_batch("lz4", framed, offset), True),
        "lz4 no records": (_batch("lz4", b"not lz4", offset, count=0), True),
        "gzip": (build_v2_batch(RECS, base_offset=offset, codec="gzip"), False),
        "snappy": (build_v2_batch(RECS, base_offset=offset, codec="snappy"), False),
        "zstd cut": (_batch("zstd", zstd[:-4], offset), False),
        "zstd garbage after": (_batch("zstd", zstd + b"\x00\x01", offset), False),
        "zstd records remaining": (_batch("zstd", compress("zstd", body + b"\x00", MAGIC_V2), offset), False),
        "lz4 no end mark": (_batch("lz4", lz4[:-4], offset), False),
        "lz4 descriptor": (_batch("lz4", bytes(bad_desc), offset), False),
        "lz4 block checksum": (_batch("lz4", bytes(bad_sum), offset), False),
        "zstd past a MiB": (build_v2_batch(big, base_offset=offset, codec="zstd"), False),
        "zstd bomb": (null_bomb_batch(60_000, "zstd", base_offset=offset), False),
    }


#: the compressed batches whose records Kafka's rules refuse (the dump stops there: exit 1)
DAMAGED = {
    "zstd cut",
    "zstd garbage after",
    "zstd records remaining",
    "lz4 no end mark",
    "lz4 descriptor",
    "lz4 block checksum",
}
#: the compressed batches that raise nothing, in the mixed log
MIXED = ("lz4", "zstd", "zstd escapes", "zstd two frames", "lz4 checksums", "snappy", "zstd past a MiB", "zstd bomb")


def _records(batch: bytes) -> int:
    return int.from_bytes(batch[57:61], "big")


def mixed_log(path: Path) -> int:
    """Write the log; returns its size."""
    value = b"v" * 4000  # few batches (the Python engine's cost is per batch), many bytes
    offset = 0
    with open(path, "wb") as f:

        def one(**kw) -> None:
            nonlocal offset
            f.write(build_v2_batch([RecordSpec(b"k%d" % offset, value, 1000 + offset)], base_offset=offset, **kw))
            offset += 1

        for i in range(3000):  # ~12 MiB: past one window
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
            elif 900 <= i < 900 + len(MIXED):
                batch = compressed(offset)[MIXED[i - 900]][0]
                f.write(batch)
                offset += _records(batch)
            elif i == 2500:  # larger than the 8 MiB window
                f.write(build_v2_batch([RecordSpec(b"big", b"x" * (9 << 20), 1)], base_offset=offset))
                offset += 1
            else:
                one()
        f.write(b"\x00" * 12)  # trailing bytes (fewer than a batch head)
    return path.stat().st_size


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The mixed log (read only), written once for the text and the JSON runs, and its size."""
    log = tmp_path_factory.mktemp("mixed") / "00000000000000000000.log"
    return log, mixed_log(log)


def text_runs(log: Path, size: int) -> list[tuple[list[str], list[str], list[str]]]:
    """The text runs of the mixed log: (mode, extra, dump's arguments)."""
    return [
        (mode, extra, [*mode, *extra, "--files", str(log)])
        for mode in ([], ["--deep-iteration"], ["--print-data-log"])
        for extra in ([], ["--max-bytes", str(size // 3)], ["--kafka-version", "4.3"])
    ]


def json_runs(log: Path, size: int) -> list[tuple[list[str], list[str], list[str]]]:
    """The JSON Lines runs of the mixed log: (mode, extra, dump's arguments)."""
    return [
        (mode, extra, ["--format", "json", *mode, *extra, "--files", str(log)])
        for mode in ([], ["--deep-iteration"], ["--print-data-log"])
        for extra in ([], ["--max-bytes", str(size // 3)])
    ]


@pytest.fixture(scope="module")
def python_mixed(mixed: tuple[Path, int]) -> dict[tuple[str, ...], tuple]:
    """What the Python engine prints for each text and JSON run of the mixed log, by its arguments."""
    runs = [args for _, _, args in text_runs(*mixed) + json_runs(*mixed)]
    return dict(zip(map(tuple, runs), python_dumps(runs), strict=True))


def test_window_loop_prints_what_the_python_engine_prints(mixed: tuple[Path, int], python_mixed: dict) -> None:
    for mode, extra, args in text_runs(*mixed):
        c = dump(args)
        assert c == python_mixed[tuple(args)], args
        assert c[1].count(b"baseOffset: ") > 1500, args  # the batches up to --max-bytes at least
        if not extra:
            assert b"Found 12 invalid bytes" in c[1] and b"isvalid: false" in c[1]
            if mode:
                assert b"Non-consecutive offsets" in c[2]
                assert b"headerKeys: [h1,\xc3\xa9]" in c[1]


def test_json_window_loop_writes_what_the_python_sink_writes(mixed: tuple[Path, int], python_mixed: dict) -> None:
    for mode, extra, args in json_runs(*mixed):
        c = dump(args)
        assert c == python_mixed[tuple(args)], args
        rows = [json.loads(line) for line in c[1].splitlines()]
        assert sum(r["type"] == "batch" for r in rows) > 1500, args
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
        memoryview(data),
        0,
        len(data),
        0,
        len(data),
        mode,
        -1,
        False,
        None,
        names,
        1 << 16,
        SCHEMA_VERSION,
        1 << 20,
        None,
    )
    assert (pos, full) == (len(data), False)
    assert last == (-1 if mode == WINDOW_SHALLOW else 5)
    args = [["--format", "json"], ["--format", "json", "--deep-iteration"], ["--format", "json", "--print-data-log"]]
    ((code, stdout, _),) = python_dumps([[*args[mode], "--files", str(log)]])
    assert code == 0
    expected = b"".join(
        line + b"\n" for line in stdout.split(b"\n") if b'"type":"batch"' in line or b'"type":"record"' in line
    )
    assert out == expected
    assert (b"\\u2028" in out and b"\\u0085" in out and b'"base64":true' in out) == (mode != WINDOW_SHALLOW)


@pytest.mark.parametrize("json_version", [0, SCHEMA_VERSION])
@pytest.mark.parametrize("mode", [WINDOW_SIZES, WINDOW_STRINGS])
def test_the_engine_itself_decompresses_lz4_and_zstd_and_hands_back_the_rest(mode: int, json_version: int) -> None:
    """In the deep modes the window loop decompresses an lz4 or zstd batch and prints it itself (it does not
    hand it back); a gzip or snappy batch, a damaged stream, a batch of more than a MiB decompressed, or of more
    lines than its bound, it hands back untouched, after the batch before it."""
    assert engine.C is not None
    names = ("CreateTime", "LogAppendTime")
    parts = ("a", "b", "c")
    head = build_v2_batch([RecordSpec(b"k", b"v", 1)])
    for name, (batch, taken) in compressed(1).items():
        data = head + batch
        out, pos, last, full = engine.C.dump_window(
            memoryview(data), 0, len(data), 0, len(data), mode, -1, False, lambda h: parts, names, 1 << 16,
            json_version, 40 << 20, window_codec,
        )  # fmt: skip
        assert not full
        assert pos == (len(data) if taken else len(head)), name
        assert last == (_records(batch) if taken and _records(batch) else 0), name
        if taken and _records(batch) and json_version:
            assert out.count(b'"type":"record"') == 1 + _records(batch), name


def test_a_compressed_batch_the_engine_hands_back_reads_as_in_the_python_engine(tmp_path: Path) -> None:
    """Each compressed batch, damaged or not, between two it prints, in a log of its own: the same output,
    errors and exit code.  One run a mode and engine takes the intact ones' logs (exit 0: each of them would
    exit 0 alone), one the damaged ones' (each named by its one error line: each would exit 1 alone; the
    dump goes on with the next file)."""
    logs: dict[bool, list[str]] = {False: [], True: []}
    for i, (name, (batch, _)) in enumerate(compressed(1).items()):
        log = tmp_path / f"b{i}-0" / "00000000000000000000.log"
        log.parent.mkdir()
        n = 1 + _records(batch)
        log.write_bytes(
            build_v2_batch([RecordSpec(b"k", b"v", 1)], codec="zstd")
            + batch
            + build_v2_batch([RecordSpec(b"k", b"v", 1)], base_offset=n, codec="lz4")
        )
        logs[name in DAMAGED].append(str(log))
    assert len(logs[True]) == len(DAMAGED)
    runs = [
        (damaged, paths, [*mode, "--files", ",".join(paths)])
        for damaged, paths in logs.items()
        for mode in (["--deep-iteration"], ["--format", "json", "--print-data-log"])  # the mixed log has the rest
    ]
    python = python_dumps([args for _, _, args in runs])
    for (damaged, paths, args), p in zip(runs, python, strict=True):
        mode = args[:-2]
        c = dump(args)
        assert c == p, (paths, args)
        assert c[0] == (1 if damaged else 0), (args, c[2])
        errors = [line for line in c[2].decode().splitlines() if line.startswith("kseg: error: ")]
        assert [line.split(": ")[2] for line in errors] == (paths if damaged else []), c[2]
        assert c[1].count(b"Dumping " if mode[0] != "--format" else b'"type":"file"') == len(paths)
