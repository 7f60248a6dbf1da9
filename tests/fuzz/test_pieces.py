"""Fuzzed inputs read with the decompressed bytes in tiny pieces print what they print read whole.

Every fuzz seed with compressed batches (every codec, magic 2; the corpus' compressed partitions),
damaged by the fuzz suite's mutators, is dumped (deep text, deep JSON, ``--print-data-log``) through
the real CLI in-process twice: with :data:`kseg.format.compression.PIECE` at its default (every batch of
these seeds is one piece: decoded as one buffer) and at 61 bytes (nearly every record straddles two
pieces: :mod:`kseg.format.v2_stream` carries it over).  Exit code and output must be identical, records
and errors alike, on both engines.  ``KSEG_FUZZ_CASES`` (default 600) scales the count: a twentieth of it, at least 20.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kseg.format import compression, v2_records
from tests.conftest import ENGINES
from tests.fuzz import driver, mutators

CASES = max(20, int(os.environ.get("KSEG_FUZZ_CASES", "600")) // 20)
SEED = int(os.environ.get("KSEG_FUZZ_SEED", "20261122"))


def compressed_seeds(root: Path) -> list[Path]:
    """Seed partitions holding compressed v2 batches."""
    corpus = [p for p in driver.CORPUS_DATA.iterdir() if p.is_dir() and p.name.startswith(("v2-", "txn-v2"))]
    generated = [p for p in driver.generated_seeds(root) if p.name.startswith("gen-v2-")]
    return sorted(p for p in corpus + generated if "none" not in p.name)


def outputs(cli, log: Path, monkeypatch, piece: int) -> list[tuple[int, bytes]]:
    monkeypatch.setattr(compression, "PIECE", piece)
    runner = CliRunner()
    lines = [
        ["dump", "--deep-iteration", "--files", str(log)],
        ["dump", "--deep-iteration", "--format", "json", "--files", str(log)],
        ["dump", "--print-data-log", "--files", str(log)],
    ]
    out = []
    for args in lines:
        result = runner.invoke(cli, args, catch_exceptions=False)
        out.append((result.exit_code, result.stdout_bytes + result.stderr_bytes))
    return out


@pytest.mark.parametrize("eng", ENGINES)
def test_fuzzed_batches_in_pieces_read_as_whole(eng: str, tmp_path: Path, monkeypatch) -> None:
    if eng == "python":
        monkeypatch.setattr(v2_records, "decode_records", v2_records.decode_records_py)
        monkeypatch.setattr(v2_records, "decode_chunk", v2_records.decode_chunk_py)
    from kseg.cli.main import cli

    (tmp_path / "seeds").mkdir()
    seeds = compressed_seeds(tmp_path / "seeds")
    assert len(seeds) >= 6, seeds
    rng = random.Random(SEED)
    for case in range(CASES):
        seed = seeds[case % len(seeds)]
        part = tmp_path / f"case-{case}" / seed.name
        shutil.copytree(seed, part)
        log = rng.choice(sorted(part.glob("*.log")))
        data = log.read_bytes()
        mutator = rng.choice(mutators.LOG_MUTATORS)
        log.write_bytes(mutator(data, mutators.boundaries(data), rng))
        whole = outputs(cli, log, monkeypatch, 1 << 20)
        assert outputs(cli, log, monkeypatch, 61) == whole, (case, seed.name, mutator.__name__)
        shutil.rmtree(part.parent)
