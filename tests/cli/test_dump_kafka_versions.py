"""``kseg dump --kafka-version X.Y``: the text of each Kafka release line's own tool.

Two sets of goldens (``tests/data/kafka4x/MANIFEST.md`` says how each was made):

* ``golden/INDEX.tsv``: every record type and layout Kafka 4.0-4.4 added, per release line;
* ``golden/CORPUS-DIFF.tsv``: the runs of Kafka's own corpus whose text changes under 4.1-4.4;
  every other corpus run must print the corpus golden unchanged.
"""

from __future__ import annotations

import csv
import json
import shlex
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, CORPUS_GOLDEN, Result, golden_rows, run_cli

KAFKA4X = Path(__file__).resolve().parent.parent / "data" / "kafka4x"
DATA = KAFKA4X / "data"
GOLDEN = KAFKA4X / "golden"


def run_clean(args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """``kseg ARGS`` in this process (:func:`run_cli`), ``KSEG_KAFKA_VERSION`` removed from the environment
    unless ``env`` gives it."""
    return run_cli(args, cwd=cwd, env={"KSEG_KAFKA_VERSION": None, **(env or {})})


OFFSETS_LOG = "__consumer_offsets-0/00000000000000000000.log"


def dump_as(version: str, *args: str) -> Result:
    """``kseg dump --kafka-version VERSION ARGS`` in-process, run in the 4.x data directory."""
    return run_cli(["dump", "--kafka-version", version, *args], cwd=DATA)


def decoder_classes(value: str, key: str) -> list[str]:
    """The arguments naming a value and a key decoder class, over the segment at offset 0."""
    return ["--value-decoder-class", value, "--key-decoder-class", key, "--files", "00000000000000000000.log"]


def _tsv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    return [dict(zip(rows[0], r, strict=True)) for r in rows[1:]]


def _read(stem: Path, base: Path, placeholder: bytes) -> tuple[bytes, bytes]:
    out = (stem.parent / (stem.name + ".stdout")).read_bytes()
    err = (stem.parent / (stem.name + ".stderr")).read_bytes()
    return out, err.replace(placeholder, (str(base) + "/").encode())


ROWS = _tsv(GOLDEN / "INDEX.tsv")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['line']}:{r['partition']}:{r['set']}")
def test_kafka4x_golden(row: dict) -> None:
    """Each new record type, layout and output change, byte for byte, per release line."""
    want_out, want_err = _read(
        GOLDEN / row["line"] / row["partition"] / f"{row['file']}.{row['set']}", DATA, b"@DATA@/"
    )
    result = run_cli(["dump", "--kafka-version", row["line"], *shlex.split(row["args (cwd = data/)"])], cwd=DATA)
    assert (result.exit_code, result.stdout, result.stderr) == (int(row["exit_code"]), want_out, want_err)


DIFFS = {(r["line"], r["partition"], r["file"], r["set"]): r for r in _tsv(GOLDEN / "CORPUS-DIFF.tsv")}


@pytest.mark.parametrize("line", ["3.7", "4.1", "4.2", "4.3", "4.4"])
def test_corpus_under_newer_lines(line: str) -> None:
    """Kafka's corpus: the runs CORPUS-DIFF names print their reviewed text, every other one the
    corpus golden (what 3.8, 3.9 and 4.0 print) unchanged (3.7: its offsets decoder and control types)."""
    checked = changed = 0
    for row in golden_rows():
        key = (line, row["partition"], row["file"], row["set"])
        stem = CORPUS_GOLDEN / row["partition"] / f"{row['file']}.{row['set']}"
        want_out, want_err = _read(stem, CORPUS_DATA, b"@CORPUS@/")
        code = int(row["exit_code"])
        if key in DIFFS:
            stored = DIFFS[key]["stored"]  # the line whose identical text is stored
            want_out, want_err = _read(
                GOLDEN / stored / "corpus" / row["partition"] / f"{row['file']}.{row['set']}", CORPUS_DATA, b"@CORPUS@/"
            )
            code = int(DIFFS[key]["exit_code"])
            changed += 1
        result = run_cli(["dump", "--kafka-version", line, *shlex.split(row["args"])], cwd=CORPUS_DATA)
        assert result.exit_code == code, key
        assert result.stdout == want_out, key
        if want_err.startswith(b"Exception in thread"):  # Kafka died: kseg says what and where in one line
            lines = result.stderr.decode().splitlines()
            assert len(lines) == 1 and lines[0].startswith("kseg: error: ") and row["partition"] in lines[0], key
        else:
            assert result.stderr == want_err, key
        checked += 1
    assert checked == len(golden_rows()) and changed == sum(1 for k in DIFFS if k[0] == line)


def test_43_time_index_dump_dies_on_a_corrupt_tail_only_when_asked_for() -> None:
    """4.3+'s Java tool collects every batch from a time-index entry's position to the log's end
    (``dumpTimeIndex``: ``partialFileRecords.batches().forEach(batches::add)``), so garbage after the
    last batch kills the dump at the first entry (Kafka 4.4's own output in CORPUS-DIFF); 3.9-4.2 and
    the default print every entry."""
    args = ["dump", "--files", "corrupt-garbage-tail-0/00000000000000000000.timeindex"]
    died = run_cli([args[0], "--kafka-version", "4.3", *args[1:]], cwd=CORPUS_DATA)
    assert died.exit_code == 1 and b"timestamp:" not in died.stdout
    assert b"smaller than minimum record overhead (14)" in died.stderr
    for default in (
        run_cli(args, cwd=CORPUS_DATA),
        run_cli([args[0], "--kafka-version", "4.2", *args[1:]], cwd=CORPUS_DATA),
    ):
        assert default.exit_code == 0 and default.stdout.count(b"timestamp:") == 2


def test_the_43_false_non_consecutive_line_only_when_asked_for() -> None:
    """4.3/4.4's previous offset starts at -1: a segment starting at 100 gets "-1 is followed by 100".
    Under --kafka-version 4.3/4.4 (flag or env) kseg prints it too; by default (4.4 otherwise) not."""
    args = ["dump", "--transaction-log-decoder", "--files", "__transaction_state-0/00000000000000000100.log"]
    line = b"  -1 is followed by 100\n"
    assert line in run_cli(["dump", "--kafka-version", "4.3", *args[1:]], cwd=DATA).stderr
    assert line in run_clean(args, cwd=DATA, env={"KSEG_KAFKA_VERSION": "4.4"}).stderr
    default = run_cli(args, cwd=DATA)
    assert default.exit_code == 0 and default.stderr == b""
    assert b'"transactionStatus":"Ongoing"' in default.stdout  # otherwise 4.4's text
    assert run_cli(["dump", "--kafka-version", "4.2", *args[1:]], cwd=DATA).stderr == b""


@pytest.mark.parametrize(
    "value,message",
    [
        ("2.7", "unknown Kafka release line 2.7 (kseg reproduces 2.8-4.4)"),
        ("4.5", "unknown Kafka release line 4.5 (kseg reproduces 2.8-4.4)"),
        ("four", "'four' is not a Kafka version (X.Y, e.g. 4.4)"),
    ],
)
def test_unsupported_versions_are_usage_errors(value: str, message: str) -> None:
    r = run_clean(["dump", "--kafka-version", value, "--files", "x.log"])
    assert r.exit_code == 2 and message.encode() in r.stderr and b"Traceback" not in r.stderr
    r = run_clean(["dump", "--files", "x.log"], env={"KSEG_KAFKA_VERSION": value})
    assert r.exit_code == 2 and message.encode() in r.stderr


def test_patch_releases_name_their_line() -> None:
    a = dump_as("4.1.2", "--offsets-decoder", "--files", OFFSETS_LOG)
    b = dump_as("4.1", "--offsets-decoder", "--files", OFFSETS_LOG)
    assert a.exit_code == 0 and a.stdout == b.stdout


def test_share_group_state_decoder_is_not_in_39() -> None:
    share_log = "__share_group_state-0/00000000000000000000.log"
    r = run_clean(["dump", "--kafka-version", "3.9", "--share-group-state-decoder", "--files", share_log], cwd=DATA)
    assert r.exit_code == 2 and b"Kafka 3.9's tool has no --share-group-state-decoder" in r.stderr


def test_json_does_not_change_with_the_version() -> None:
    args = ["--format", "json", "--offsets-decoder", "--files", OFFSETS_LOG]
    outs = {v: run_cli(["dump", "--kafka-version", v, *args], cwd=DATA).stdout for v in ("3.9", "4.0", "4.4")}
    assert outs["3.9"] == outs["4.0"] == outs["4.4"] == run_cli(["dump", *args], cwd=DATA).stdout
    assert all(json.loads(line) for line in outs["4.4"].splitlines())


def test_version_lists_the_range() -> None:
    r = run_clean(["--version"])
    assert b"kafka dump output: 2.8-4.4 (default 4.4)\n" in r.stdout


@pytest.mark.parametrize(
    "cls,expect",
    [
        ("org.apache.kafka.tools.api.IntegerDecoder", "payload: 1819242087"),
        ("org.apache.kafka.tools.api.LongDecoder", "payload: 7813585267934519660"),
        ("kafka.serializer.LongDecoder", "payload: 7813585267934519660"),
        ("org.apache.kafka.tools.api.DefaultDecoder", "payload: 6c6f6e672d76616c7565"),
        ("org.apache.kafka.tools.api.StringDecoder", "payload: long-value"),
    ],
)
def test_kafka_decoder_class_names(tmp_path: Path, cls: str, expect: str) -> None:
    """Kafka's tools-api decoders (and their kafka.serializer names): IntegerDecoder/LongDecoder read the
    first 4/8 bytes big-endian (``struct.unpack(">i", b"long")``, ``(">q", b"long-val")``);
    DefaultDecoder's bytes print as hex (Kafka prints the array's identity)."""
    from kseg.testing.segment import write_segment
    from kseg.testing.v2 import RecordSpec, build_v2_batch

    write_segment(tmp_path, [[build_v2_batch([RecordSpec(b"k", b"long-value", 1)])]])
    r = run_cli(["dump", "--value-decoder-class", cls, "--files", "00000000000000000000.log"], cwd=tmp_path)
    assert r.exit_code == 0 and expect.encode() + b"\n" in r.stdout


def test_integer_decoder_on_short_bytes_is_one_error_line(tmp_path: Path) -> None:
    from kseg.testing.segment import write_segment
    from kseg.testing.v2 import RecordSpec, build_v2_batch

    write_segment(tmp_path, [[build_v2_batch([RecordSpec(b"k", b"ab", 1)])]])
    r = run_clean(
        [
            "dump",
            "--value-decoder-class",
            "org.apache.kafka.tools.api.IntegerDecoder",
            "--files",
            "00000000000000000000.log",
        ],
        cwd=tmp_path,
    )
    assert r.exit_code != 0 and b"Traceback" not in r.stderr and b"BufferUnderflowException" in r.stderr


#: Records in 4.0's layouts (no version bump): Kafka 4.x's tool fails to read them, kseg reads what
#: the bytes hold.  (partition, offset) -> the start of Kafka's line after ``key: ``.
LAYOUT_CHOSEN_BY_BYTES = {
    ("__consumer_offsets-0", 5): "Error at offset 5, skipping. Could not read record with version 0 from value's",
    ("__consumer_offsets-0", 8): "Error at offset 8, skipping. Could not read record with version 0 from value's",
    ("__share_group_state-0", 0): "Error at offset 0, skipping. Could not read record with version 0 from value's",
    ("__share_group_state-0", 1): "Error at offset 1, skipping. Could not read record with version 0 from value's",
}


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r["line"] in ("4.3", "4.4")], ids=lambda r: f"{r['line']}:{r['set']}"
)
def test_kafka_own_tool(row: dict) -> None:
    """kseg under 4.3 and 4.4 against Kafka 4.3's and 4.4's DumpLogSegments itself (built from source:
    kafka-4.3/, kafka-4.4/): the same bytes on stdout and stderr and the same exit code, except the
    records in 4.0's layouts."""
    stem = KAFKA4X / f"kafka-{row['line']}" / row["partition"] / f"{row['file']}.{row['set']}"
    kafka_out, kafka_err = _read(stem, DATA, b"@DATA@/")
    kafka_exit = int((stem.parent / (stem.name + ".exit")).read_text())
    result = run_cli(["dump", "--kafka-version", row["line"], *shlex.split(row["args (cwd = data/)"])], cwd=DATA)
    assert (result.exit_code, result.stderr) == (kafka_exit, kafka_err)
    ours, theirs = result.stdout.decode().split("\n"), kafka_out.decode().split("\n")
    assert len(ours) == len(theirs)
    differ = 0
    for a, b in zip(ours, theirs, strict=True):
        if a == b:
            continue
        offset = int(b.split()[2])
        expected = LAYOUT_CHOSEN_BY_BYTES[(row["partition"], offset)]
        assert b.split(" key: ", 1)[1].startswith(expected) and a.split(" key: ", 1)[0] == b.split(" key: ", 1)[0]
        assert '"data":{' in a.split(" key: ", 1)[1]  # kseg decoded it
        differ += 1
    assert differ == sum(1 for p, _ in LAYOUT_CHOSEN_BY_BYTES if p == row["partition"] and "skip" not in row["set"])


def test_39_says_kafka_serializer_classes_are_deprecated(tmp_path: Path) -> None:
    """Kafka 3.9 makes the decoders per .log file (``opts.messageParser``), value then key, and prints
    ``convertDeprecatedDecoderClass``'s line for a ``kafka.serializer`` class; 4.0 removed them."""
    from kseg.testing.segment import write_segment
    from kseg.testing.v2 import RecordSpec, build_v2_batch

    write_segment(tmp_path, [[build_v2_batch([RecordSpec(b"k", b"v", 1)])]])
    args = decoder_classes("kafka.serializer.StringDecoder", "kafka.serializer.StringDecoder")
    out = run_cli(["dump", "--kafka-version", "3.9", *args], cwd=tmp_path).stdout.decode().splitlines()
    notice = "kafka.serializer.StringDecoder is deprecated. Please use org.apache.kafka.tools.api.StringDecoder instead"
    assert out[:4] == ["Dumping 00000000000000000000.log", notice, notice, "Log starting offset: 0"]
    assert b"deprecated" not in run_cli(["dump", "--kafka-version", "4.0", *args], cwd=tmp_path).stdout
