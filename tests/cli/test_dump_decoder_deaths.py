"""Where a topic decoder dies or cannot decode a record, under ``--kafka-version`` (issue 33).

Kafka's tool prints a record's line with ``print`` and calls the decoder last, so when the decoder throws
an exception the tool does not catch, stdout ends with that record's line up to its last field, without a
newline.  ``tests/data/kafka4x/kafka-4.4/deaths/`` holds what Kafka 4.4's own tool, built from its source,
printed (stdout, stderr, exit code) for each topic decoder on Kafka-written data that it cannot decode:
records without a key, null values, other topics' bytes (``tests/data/kafka4x/MANIFEST.md``, "Decoder
deaths").  kseg must print the same stdout and exit code; where the JVM died, kseg's one-line error quotes
the JVM's first line, and every other stderr is Kafka's byte for byte.  Each case runs on both engines.
"""

from __future__ import annotations

import csv
import shlex
from pathlib import Path

import pytest

from kseg import engine
from kseg.format import releases
from tests.conftest import CORPUS_DATA, Result, run_cli, run_cli_many

KAFKA4X = Path(__file__).resolve().parent.parent / "data" / "kafka4x"
DEATHS = KAFKA4X / "kafka-4.4" / "deaths"
ROOTS = {"corpus": CORPUS_DATA, "kafka4x": KAFKA4X / "data"}
HINT = "(hint: kafka-dump-log.sh stops here with: "


def _rows() -> list[dict]:
    with open(DEATHS / "INDEX.tsv", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


ROWS = _rows()


def _id(row: dict) -> str:
    return f"{row['root']}/{row['partition']}:{row['set']}"


def _golden(row: dict) -> tuple[int, bytes, bytes]:
    stem = DEATHS / row["root"] / row["partition"] / f"{row['file']}.{row['set']}"
    out = stem.with_name(stem.name + ".stdout").read_bytes()
    err = stem.with_name(stem.name + ".stderr").read_bytes()
    return int(row["exit_code"]), out, err.replace(b"@DATA@/", (str(ROOTS[row["root"]]) + "/").encode())


def _check(r: Result, row: dict) -> None:
    code, want_out, want_err = _golden(row)
    assert r.exit_code == code
    assert r.stdout == want_out
    if want_err.startswith(b"Exception in thread"):
        jvm = want_err.decode().split("\n", 1)[0]
        lines = r.stderr.decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"kseg: error: {row['partition']}/"), r.errtext
        assert lines[0].endswith(f"{HINT}{jvm})"), (lines[0], jvm)
    else:
        assert r.stderr == want_err


def test_the_goldens_cover_each_death() -> None:
    """Every topic decoder's death on a missing key (v2 and legacy records, with and without
    ``--skip-record-metadata``), and a null value under the remote-log-metadata decoder."""
    died = {(r["set"], r["partition"]) for r in ROWS if r["exit_code"] == "1"}
    for decoder in ("offsets", "txn", "share"):
        assert {(decoder, p) for p in ("plain-v2-0", "v1-gzip-0", "v0-none-0")} <= died
        assert (f"{decoder}-skip", "plain-v2-0") in died
    assert any(r["set"] == "remote" and r["partition"] == "__consumer_offsets-0" for r in ROWS)
    for row in ROWS:
        _, out, err = _golden(row)
        if row["exit_code"] == "1" and not row["set"].endswith("-skip"):
            assert not out.endswith(b"\n") and out.rsplit(b"\n", 1)[-1].startswith(b"| offset: ")
            assert err.startswith(b'Exception in thread "main" java.lang.RuntimeException: Failed to decode')


@pytest.mark.parametrize("row", ROWS, ids=_id)
def test_as_kafka_44(row: dict) -> None:
    r = run_cli(["dump", "--kafka-version", "4.4", *shlex.split(row["args"])], cwd=ROOTS[row["root"]])
    _check(r, row)


PYTHON_ROWS = [r for r in ROWS if r["exit_code"] == "1" or r["set"].startswith("remote")]


@pytest.fixture(scope="module")
def python_engine_runs() -> dict[str, Result]:
    """Each row of PYTHON_ROWS run with ``KSEG_ENGINE=python``, by its id: the rows of a root in one child
    process (the engine is chosen at import)."""
    runs: dict[str, Result] = {}
    for root, where in ROOTS.items():
        rows = [row for row in PYTHON_ROWS if row["root"] == root]
        args = [["dump", "--kafka-version", "4.4", *shlex.split(row["args"])] for row in rows]
        done = run_cli_many(args, cwd=where, env={"KSEG_ENGINE": "python"})
        runs.update(zip(map(_id, rows), done, strict=True))
    return runs


@pytest.mark.skipif(engine.C is None, reason="the in-process runs above used the Python engine already")
@pytest.mark.parametrize("row", PYTHON_ROWS, ids=_id)
def test_as_kafka_44_python_engine(row: dict, python_engine_runs: dict[str, Result]) -> None:
    _check(python_engine_runs[_id(row)], row)


@pytest.mark.parametrize("line", releases.LINES)
@pytest.mark.parametrize("partition", ["plain-v2-0", "v1-gzip-0", "v0-none-0"])
def test_every_release_prints_the_dead_records_line(line: str, partition: str) -> None:
    """Under every release the run that dies on the first record (no key) prints exactly the
    deep-iteration text up to that record's line, without its newline: the same ``print`` calls
    precede the decoder in every release's ``dumpLog``."""
    files = ["--files", f"{partition}/00000000000000000000.log"]
    deep = run_cli(["dump", "--kafka-version", line, "--deep-iteration", *files], cwd=CORPUS_DATA)
    died = run_cli(["dump", "--kafka-version", line, "--offsets-decoder", *files], cwd=CORPUS_DATA)
    assert died.exit_code == 1 and deep.exit_code == 0
    assert not died.stdout.endswith(b"\n") and deep.stdout.startswith(died.stdout + b"\n")
    assert died.stdout.rsplit(b"\n", 1)[-1].startswith(b"| offset: 0 ")
    skipped = run_cli(
        ["dump", "--kafka-version", line, "--skip-record-metadata", "--offsets-decoder", *files], cwd=CORPUS_DATA
    )
    assert skipped.exit_code == 1 and skipped.stdout == died.stdout[: died.stdout.rindex(b"\n") + 1]
    missing_key = (
        "org.apache.kafka.common.KafkaException: Failed to decode message using offset topic decoder"
        if line <= "3.7"
        else "java.lang.RuntimeException: Failed to decode message at offset 0 using "
        + ("the specified" if line >= "4.1" else "offset topic")
        + " decoder"
    )
    assert f'{HINT}Exception in thread "main" {missing_key} (message had a missing key))' in died.errtext


@pytest.mark.parametrize("line", [x for x in releases.LINES if x >= "3.9"])
def test_remote_decoder_names_the_releases_record_interface(line: str) -> None:
    """A null value under ``--remote-log-metadata-decoder``: the JVM's message names ``Record`` where the
    release's tool has it (``org.apache.kafka.common.record.internal`` in 4.3 and 4.4)."""
    r = run_cli(
        [
            "dump",
            "--kafka-version",
            line,
            "--remote-log-metadata-decoder",
            "--files",
            "__consumer_offsets-0/00000000000000000000.log",
        ],
        cwd=ROOTS["kafka4x"],
    )
    package = "org.apache.kafka.common.record.internal" if line >= "4.3" else "org.apache.kafka.common.record"
    assert r.exit_code == 0
    assert (
        b' payload: Error at offset 18, skipping. Cannot invoke "java.nio.ByteBuffer.remaining()" because the '
        b'return value of "' + package.encode() + b'.Record.value()" is null\n'
    ) in r.stdout


def test_a_later_file_starts_on_its_own_line(tmp_path: Path) -> None:
    """Kafka stops at the death; kseg goes on to the next file, whose ``Dumping`` line starts a new line."""
    log = CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log"
    r = run_cli(["dump", "--offsets-decoder", "--files", f"{log},{log}"])
    assert r.exit_code == 1
    assert r.stdout.count(b"headerKeys: []\nDumping ") == 1
