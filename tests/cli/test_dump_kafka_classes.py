"""``kseg dump --kafka-version 3.9 .. 4.2``: each record's decoder text against the text Kafka's own classes of
that release make for it.

Kafka 3.9-4.2's tool is Scala (not buildable here), so its record texts were computed by a build-only Java
driver calling that release's own serdes and generated JSON converters the way its ``DumpLogSegments.scala``
does, on ``tests/data/kafka4x/data`` (written by Kafka's own classes); the texts are kept in
``tests/data/kafka4x/kafka-classes/<line>/<set>.tsv`` (offset, text).  ``tests/data/kafka4x/MANIFEST.md`` says
how.  The only differences are the records in the layout the release cannot read, which kseg decodes as the
bytes hold (``docs/dump.md``).
"""

from __future__ import annotations

import csv
import re
import shlex
from pathlib import Path

import pytest

from tests.conftest import run_cli

KAFKA4X = Path(__file__).resolve().parent.parent / "data" / "kafka4x"
CLASSES = KAFKA4X / "kafka-classes"
RECORD = re.compile(r"\| offset: (\d+) .*? headerKeys: \[\] (.*)")
#: (line, set) -> offsets whose layout that release cannot read: Kafka prints this error, kseg decodes them
OTHER_LAYOUT = {
    ("4.0", "offsets"): {6, 9},
    ("4.0", "share"): {2, 3},
    ("4.1", "offsets"): {5, 8},
    ("4.1", "share"): {0, 1},
    ("4.2", "offsets"): {5, 8},
    ("4.2", "share"): {0, 1},
}
KAFKA_CANNOT_READ = "key: Error at offset {}, skipping. Could not read record with version 0 from value's buffer"


def _runs() -> dict[tuple[str, str], list[str]]:
    with open(KAFKA4X / "golden" / "INDEX.tsv", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))[1:]
    return {(r[0], r[3]): shlex.split(r[4]) for r in rows}


RUNS = _runs()
CASES = sorted((p.parent.name, p.stem) for p in CLASSES.glob("*/*.tsv"))


def test_every_release_line_has_its_kafka_texts() -> None:
    """3.9 has no share-state decoder; 3.9 and 4.0 print the transaction log from Scala (no Java class text)."""
    assert CASES == sorted(
        [(line, s) for line in ("3.9", "4.0", "4.1", "4.2") for s in ("offsets", "metadata", "remote")]
        + [(line, "share") for line in ("4.0", "4.1", "4.2")]
        + [("4.1", "txn"), ("4.2", "txn")]
    )


@pytest.mark.parametrize(("line", "label"), CASES, ids=lambda v: v)
def test_record_texts_are_kafkas(line: str, label: str) -> None:
    kafka = {}
    for row in (CLASSES / line / f"{label}.tsv").read_text().splitlines():
        at, text = row.split("\t", 1)
        kafka[int(at)] = text
    result = run_cli(["dump", "--kafka-version", line, *RUNS[(line, label)]], cwd=KAFKA4X / "data")
    assert result.exit_code == 0, result.stderr
    ours = {int(m[1]): m[2] for m in map(RECORD.fullmatch, result.stdout.decode().splitlines()) if m}
    assert sorted(ours) == sorted(kafka)
    other = OTHER_LAYOUT.get((line, label), set())
    for offset, text in kafka.items():
        if offset in other:
            assert text.startswith(KAFKA_CANNOT_READ.format(offset)), text
            assert '"data":{' in ours[offset]  # kseg reads the layout the bytes hold
        else:
            assert ours[offset] == text, offset
