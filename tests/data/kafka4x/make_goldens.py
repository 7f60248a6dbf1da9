"""Write ``golden/``: kseg's text for each Kafka release line, to be reviewed line by line against
that release's ``DumpLogSegments`` before it is committed (MANIFEST.md says which lines decide
what).  Run from the repository root::

    python tests/data/kafka4x/make_goldens.py

``golden/INDEX.tsv``: the runs on ``data/`` per release line.  ``golden/CORPUS-DIFF.tsv``: the
runs of ``tests/data/corpus`` (Kafka's own goldens, printed as 3.9/4.0 print them) whose text is
different under a newer release line; every other corpus run prints the corpus golden unchanged.
"""

from __future__ import annotations

import csv
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DATA = HERE / "data"
GOLDEN = HERE / "golden"
CORPUS = ROOT / "tests" / "data" / "corpus"
LINES = ("3.9", "4.0", "4.1", "4.2", "4.3", "4.4")
#: Lines whose corpus texts were written by hand from the release's source (MANIFEST.md), not by kseg:
#: their ``golden/<line>/`` and ``CORPUS-DIFF.tsv`` rows are kept as they are.
DERIVED = ("3.7",)
#: ``--java DIR``: Kafka's own DumpLogSegments outputs of the corpus runs (``DIR/corpus/<partition>/
#: <file>.<set>.stderr``, paths as ``@CORPUS@/``), for the stderr of a run where that tool dies.
JAVA = Path(sys.argv[sys.argv.index("--java") + 1]) if "--java" in sys.argv else None

RUNS = [  # (partition, file, set, args)
    ("__consumer_offsets-0", "00000000000000000000.log", "offsets", "--offsets-decoder"),
    ("__share_group_state-0", "00000000000000000000.log", "share", "--share-group-state-decoder"),
    ("__transaction_state-0", "00000000000000000100.log", "txn", "--transaction-log-decoder"),
    (
        "__transaction_state-0",
        "00000000000000000100.log",
        "txn-skip",
        "--skip-record-metadata --transaction-log-decoder",
    ),
    ("__cluster_metadata-0", "00000000000000000000.log", "metadata", "--cluster-metadata-decoder"),
    (
        "__cluster_metadata-0",
        "00000000000000000000.log",
        "metadata-skip",
        "--skip-record-metadata --cluster-metadata-decoder",
    ),
    ("__remote_log_metadata-0", "00000000000000000000.log", "remote", "--remote-log-metadata-decoder"),
]


def kseg(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("KSEG_KAFKA_VERSION", None)
    p = subprocess.run(
        [sys.executable, "-m", "kseg", "dump", *args], cwd=cwd, capture_output=True, env=env, check=False
    )
    return p.returncode, p.stdout, p.stderr


def write(stem: Path, out: bytes, err: bytes, base: Path, placeholder: bytes) -> None:
    stem.parent.mkdir(parents=True, exist_ok=True)
    (stem.parent / (stem.name + ".stdout")).write_bytes(out)
    (stem.parent / (stem.name + ".stderr")).write_bytes(err.replace((str(base) + "/").encode(), placeholder))


def main() -> None:
    kept: list = []
    if (GOLDEN / "CORPUS-DIFF.tsv").exists():
        with open(GOLDEN / "CORPUS-DIFF.tsv", newline="") as f:
            kept = [r for r in list(csv.reader(f, delimiter="\t"))[1:] if r[0] in DERIVED]
    for line in LINES:
        shutil.rmtree(GOLDEN / line, ignore_errors=True)
    GOLDEN.mkdir(exist_ok=True)
    rows = [("line", "partition", "file", "set", "args (cwd = data/)", "exit_code")]
    for line in LINES:
        for part, name, label, args in RUNS:
            if label == "share" and line == "3.9":
                continue  # 3.9's tool has no --share-group-state-decoder
            full = f"{args} --files {part}/{name}"
            code, out, err = kseg(["--kafka-version", line, *shlex.split(full)], DATA)
            write(GOLDEN / line / part / f"{name}.{label}", out, err, DATA, b"@DATA@/")
            rows.append((line, part, name, label, full, str(code)))
    with open(GOLDEN / "INDEX.tsv", "w", newline="") as f:
        csv.writer(f, delimiter="\t", lineterminator="\n").writerows(rows)

    with open(CORPUS / "golden" / "INDEX.tsv", newline="") as f:
        corpus = list(csv.reader(f, delimiter="\t"))[1:]
    diffs = [("line", "partition", "file", "set", "exit_code", "stored"), *map(tuple, kept)]
    seen: dict = {}
    for line in LINES[2:]:
        for part, name, label, args, code, *_ in corpus:
            got = kseg(["--kafka-version", line, *shlex.split(args)], CORPUS / "data")
            stem = CORPUS / "golden" / part / f"{name}.{label}"
            want_out = (stem.parent / (stem.name + ".stdout")).read_bytes()
            want_err = (stem.parent / (stem.name + ".stderr")).read_bytes()
            err = got[2].replace((str(CORPUS / "data") + "/").encode(), b"@CORPUS@/")
            if want_err.startswith(b"Exception in thread"):
                err = want_err  # Kafka died; kseg's one error line is checked by test_dump_golden
            if got[0] == 1 and err.startswith(b"kseg: error: ") and JAVA is not None:
                # kseg stops where the release's tool dies: the golden keeps that tool's own stderr
                java = JAVA / "corpus" / part / f"{name}.{label}.stderr"
                err = java.read_bytes()
                assert err.startswith(b"Exception in thread"), java
            if (got[1], err) != (want_out, want_err) or str(got[0]) != code:
                # the text of an earlier line, when identical, is stored once: "stored" names that line
                stored = next(
                    (earlier for earlier, text in seen.get((part, name, label), []) if text == (got[1], err, got[0])),
                    line,
                )
                if stored == line:
                    write(
                        GOLDEN / line / "corpus" / part / f"{name}.{label}", got[1], err, CORPUS / "data", b"@CORPUS@/"
                    )
                    seen.setdefault((part, name, label), []).append((line, (got[1], err, got[0])))
                diffs.append((line, part, name, label, str(got[0]), stored))
    with open(GOLDEN / "CORPUS-DIFF.tsv", "w", newline="") as f:
        csv.writer(f, delimiter="\t", lineterminator="\n").writerows(diffs)
    print(f"{len(rows) - 1} runs on data/, {len(diffs) - 1} corpus runs that differ")


if __name__ == "__main__":
    main()
