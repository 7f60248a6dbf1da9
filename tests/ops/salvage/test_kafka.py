"""``kseg salvage``'s output against Kafka's own recovery and tool run on it (tests/data/salvage/MANIFEST.md):
Kafka's ``LogSegment.recover`` truncated nothing of any salvaged segment and wrote exactly the indexes
salvage writes; Kafka's ``DumpLogSegments`` prints what ``kseg dump`` prints of the salvaged files."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.ops.salvage.test_salvage import DAMAGE, PARTITIONS, SEG0, _copy, zeroed_page

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "salvage"


def _kafka_files() -> dict[tuple[str, str], dict[str, tuple[int, str]]]:
    out: dict[tuple[str, str], dict[str, tuple[int, str]]] = defaultdict(dict)
    for line in (GOLDEN / "kafka-recovery-files.tsv").read_text().splitlines()[1:]:
        damage, name, file, size, digest = line.split("\t")
        out[(damage, name)][file] = (int(size), digest)
    return out


KAFKA = _kafka_files()


def test_kafka_truncated_nothing() -> None:
    lines = [line for line in (GOLDEN / "kafka-recovery.txt").read_text().splitlines() if ".log:" in line]
    assert len(lines) >= len(KAFKA) and all("truncated 0 bytes" in line for line in lines)


@pytest.mark.parametrize("name", PARTITIONS)
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_salvaged_files_are_those_kafka_recovery_leaves(tmp_path: Path, name: str, damage: str) -> None:
    part, original = _copy(tmp_path, name)
    (part / f"{SEG0}.log").write_bytes(DAMAGE[damage](original)[0])
    out = tmp_path / "out" / name
    r = run_cli(["salvage", "-q", str(part), "-o", str(out)])
    assert r.exit_code in (0, 1), r.errtext
    mine = {p.name: (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest()) for p in out.iterdir()}
    assert mine == KAFKA[(damage, name)]


def test_kafka_dump_of_the_salvaged_files(tmp_path: Path) -> None:
    part, original = _copy(tmp_path, "plain-v2-0")
    (part / f"{SEG0}.log").write_bytes(zeroed_page(original)[0])
    out = tmp_path / "out" / "plain-v2-0"
    assert run_cli(["salvage", "-q", str(part), "-o", str(out)]).exit_code == 1
    files = f"{SEG0}.log,{SEG0}.index,{SEG0}.timeindex"
    r = run_cli(["dump", "--deep-iteration", "--print-data-log", "--files", files], cwd=out)
    assert r.exit_code == 0
    assert r.stdout == (GOLDEN / "zeroed_page-plain-v2-0.dump.txt").read_bytes()
