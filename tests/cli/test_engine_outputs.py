"""Both engines print the same bytes (issue 12): ``kseg dump`` with the compiled engine (in the test process)
and with ``KSEG_ENGINE=python`` (the runs of a test or fixture in one child process: the engine is chosen at
import), compared byte for byte (stdout, stderr, exit code).

Inputs: every corpus log (shallow, ``--deep-iteration``, ``--print-data-log``, each as JSON too), a log of
the records the engine's fast paths hand back to Python (headers, null keys and values, invalid
UTF-8 and Java's encoded surrogates, LogAppendTime, sequences that wrap, offsets near 2^63), and
damaged copies of it.  The goldens themselves run on both engines in CI (``.ci/run``).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

from kseg import engine
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.conftest import CORPUS_DATA, TESTS, run_cli, run_cli_many

pytestmark = pytest.mark.skipif(
    engine.C is None, reason="the C engine is not built (KSEG_ENGINE=python or no compiler)"
)

MODES = [
    [],
    ["--deep-iteration"],
    ["--print-data-log"],
    ["--print-data-log", "--format", "json"],
    ["--format", "json"],
    ["--deep-iteration", "--format", "json"],
    ["--deep-iteration", "--key-decoder", "hex", "--value-decoder", "hex", "--print-data-log"],
]


def dump(files: list[Path], mode: list[str]) -> tuple:
    """``kseg dump MODE --files FILES`` on the compiled engine, in this process: (exit code, stdout, stderr)."""
    r = run_cli(["dump", *mode, "--files", ",".join(map(str, files))], cwd=TESTS.parent)
    return r.exit_code, r.stdout, r.stderr


def python_dumps(runs: list[tuple[list[Path], list[str]]], env: dict[str, str] | None = None) -> list[tuple]:
    """``kseg dump MODE --files FILES`` of each of ``runs`` on the Python engine (``KSEG_ENGINE=python``, with
    ``env``), all in one child process."""
    args = [["dump", *mode, "--files", ",".join(map(str, files))] for files, mode in runs]
    done = run_cli_many(args, cwd=TESTS.parent, env={"KSEG_ENGINE": "python", **(env or {})})
    return [(r.exit_code, r.stdout, r.stderr) for r in done]


def tricky_log(directory: Path) -> Path:
    recs = [
        RecordSpec(b"k", b"v", 1000, headers=(("h1", b"x"), ("\u00e9", None))),
        RecordSpec(None, b"value", 1001),
        RecordSpec(b"key", None, 1002),
        RecordSpec(b"\xff\xfe", b"\xed\xa0\x80 surrogate \xed\xbf", 1003),
        RecordSpec("é€😀".encode(), b"\xc0\xaf overlong \xf4\x90\x80\x80", 1004),
        RecordSpec(b"k" * 300, b"v" * 70000, 2**40),
    ]
    path = directory / "00000000000000000000.log"
    with open(path, "wb") as f:
        f.write(build_v2_batch(recs))
        f.write(build_v2_batch(recs, base_offset=6, base_sequence=2**31 - 3, producer_id=9, producer_epoch=2))
        f.write(build_v2_batch(recs, base_offset=12, timestamp_type="LogAppendTime", log_append_time=77))
        f.write(build_v2_batch(recs[:2], base_offset=2**63 - 4))
        f.write(
            build_v2_batch(
                [RecordSpec(b"k", b"v", 5, offset_delta=2**31 - 1)],
                base_offset=2**63 - 4,
                base_sequence=5,
                producer_id=3,
            )
        )  # offsets past int64: the Python formatter
        # offsets out of step inside a batch and between batches ("Non-consecutive offsets")
        f.write(build_v2_batch([RecordSpec(b"a", b"b", 9, offset_delta=d) for d in (0, 2, 1, 1, 7)], base_offset=40))
        f.write(build_v2_batch(recs, base_offset=100, codec="gzip"))  # spans into the decompressed buffer
    return path


LOGS = sorted(CORPUS_DATA.glob("*/*.log"))


@pytest.fixture(scope="module")
def python_corpus() -> dict[tuple[str, ...], tuple]:
    """What the Python engine prints for every corpus log in each mode, by mode."""
    return dict(zip(map(tuple, MODES), python_dumps([(LOGS, mode) for mode in MODES]), strict=True))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: " ".join(m) or "shallow")
def test_corpus_logs_print_the_same(mode: list[str], python_corpus: dict) -> None:
    c = dump(LOGS, mode)
    assert c[1].count(b"Dumping ") + c[1].count(b'{"type":"file"') == len(LOGS)
    assert c == python_corpus[tuple(mode)]


def test_tricky_and_damaged_records_print_the_same(tmp_path: Path) -> None:
    (tmp_path / "good").mkdir()
    good = tricky_log(tmp_path / "good")
    data = good.read_bytes()
    rng = random.Random(3)
    files = [good]
    for i in range(40):
        b = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            b[rng.randrange(61, len(b))] ^= 1 << rng.randrange(8)
        if i % 5 == 0:
            b = b[: rng.randrange(len(b))]
        path = tmp_path / f"bad{i}" / "00000000000000000000.log"
        path.parent.mkdir()
        path.write_bytes(bytes(b))
        files.append(path)
    python = iter(python_dumps([(some, mode) for mode in MODES[1:4] for some in (files[:1], files)]))
    for mode in MODES[1:4]:
        c = dump(files[:1], mode)
        assert c == next(python), mode
        if mode == ["--print-data-log"]:
            assert b"Non-consecutive offsets" in c[2] and b"payload: \xef\xbf\xbd" in c[1]
            assert b"headerKeys: [h1,\xc3\xa9] key: k payload: v" in c[1]
        c = dump(files, mode)
        assert c[1].count(b"Dumping ") + c[1].count(b'{"type":"file"') == len(files)
        assert c == next(python), mode


def test_decoders_other_than_kafkas_string_decoder_still_get_slices(tmp_path: Path, monkeypatch) -> None:
    """--print-data-log prints Kafka's string decoders from spans in the batch; any other decoder
    (a plugin ``module:function``, ``hex``, ``string`` for one side only) receives what it always
    received (a slice of the batch; a plugin its bytes), on either engine."""
    (tmp_path / "log").mkdir()
    log = tricky_log(tmp_path / "log")
    (tmp_path / "kinddec.py").write_text("def kind(b):\n    return type(b).__name__ + ':' + bytes(b)[:8].hex()\n")
    env_path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    modes = [
        ["--print-data-log", "--key-decoder", "kinddec:kind"],
        ["--print-data-log", "--value-decoder", "kinddec:kind"],
        ["--print-data-log", "--key-decoder", "string", "--value-decoder", "hex"],
    ]
    python = python_dumps([([log], mode) for mode in modes], env={"PYTHONPATH": env_path})
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        for mode, p in zip(modes, python, strict=True):
            c = dump([log], mode)
            assert c == p, mode
            if "kinddec:kind" in mode:
                assert c[1].count(b": bytes:") > 20 and b"memoryview:" not in c[1]
    finally:
        sys.modules.pop("kinddec", None)  # this test's plugin, imported by the in-process runs
