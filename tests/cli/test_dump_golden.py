"""``kseg dump`` against every golden output of Kafka's own tool in the corpus.

Each golden run used ``kafka-dump-log.sh <args>`` with the working directory
``data/``; stderr paths are written ``@CORPUS@/``.  stdout must match byte
for byte, and so must stderr, except where Kafka died with a Java exception
(exit 1): there kseg prints one positioned ``kseg: error:`` line instead.

The corpus was written and dumped at Kafka trunk ``1eb7644`` (October 2024,
between 3.9 and 4.0); Kafka 3.9's and 4.0's tools print these files the same,
so every golden runs under ``--kafka-version 3.9`` and ``4.0``.
"""

from __future__ import annotations

import shlex

import pytest

from tests.conftest import CORPUS_DATA, CORPUS_GOLDEN, golden_rows, run_cli, run_subprocess

ROWS = golden_rows()


def _id(row: dict) -> str:
    return f"{row['partition']}/{row['file']}:{row['set']}"


def _expected(row: dict) -> tuple[bytes, bytes]:
    stem = CORPUS_GOLDEN / row["partition"] / f"{row['file']}.{row['set']}"
    out = (stem.parent / (stem.name + ".stdout")).read_bytes()
    err = (stem.parent / (stem.name + ".stderr")).read_bytes()
    return out, err.replace(b"@CORPUS@/", (str(CORPUS_DATA) + "/").encode())


@pytest.mark.parametrize("version", ["3.9", "4.0"])
@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_golden(row: dict, version: str) -> None:
    want_out, want_err = _expected(row)
    result = run_cli(["dump", "--kafka-version", version, *shlex.split(row["args"])], cwd=CORPUS_DATA)
    assert result.exit_code == int(row["exit_code"])
    assert result.stdout == want_out
    if want_err.startswith(b"Exception in thread"):
        # Kafka died with an uncaught exception; kseg says what and where in one line.
        lines = result.stderr.decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith("kseg: error: "), result.errtext
        assert row["partition"] in lines[0] and (" at byte " in lines[0] or "index" in lines[0]), lines[0]
    else:
        assert result.stderr == want_err


@pytest.mark.parametrize(
    "args",
    [
        "--print-data-log --files plain-v2-0/00000000000000000000.log",
        "--verify-index-only --files follower-v2-0/00000000000000000000.index",
        "--deep-iteration --files corrupt-compressed-0/00000000000000000000.log",
    ],
)
def test_golden_as_real_process(args: str) -> None:
    """A few goldens through ``python -m kseg`` itself, not the in-process runner."""
    row = next(r for r in ROWS if r["args"] == args)
    want_out, want_err = _expected(row)
    result = run_subprocess(["dump", "--kafka-version", "4.0", *shlex.split(args)], cwd=CORPUS_DATA)
    assert result.stdout == want_out
    assert result.exit_code == int(row["exit_code"])
    assert b"Traceback" not in result.stderr
