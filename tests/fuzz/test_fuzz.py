"""The fuzz suite in CI: a fixed-seed, bounded slice of the campaign (see tests/fuzz/README.md).

600 inputs by default (every seed partition about 14 times, every command on each): the whole suite
stays well under 15 minutes on 2 cores.  A long campaign sets ``KSEG_FUZZ_CASES`` (and ``KSEG_FUZZ_SEED``).

The driver runs in its own process under a 2 GiB address-space limit, so a
lying length or a decompression bomb that allocated what the file claims
would fail the run with MemoryError instead of passing unnoticed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import SUMMARY, TESTS

CASES = int(os.environ.get("KSEG_FUZZ_CASES", "600"))
SEED = int(os.environ.get("KSEG_FUZZ_SEED", "20261122"))
FUZZED = {
    "dump",
    "verify-index",
    "lookup-offset",
    "lookup-time",
    "rebuild-index",
    "txn",
    "compaction",
    "logdir",
    "export",  # on a log directory with name trouble (tests/fuzz/trees.py)
    "tiered",  # on a damaged remote tier and its __remote_log_metadata
    "grep",
}


def test_fuzz_slice() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "tests.fuzz.driver", "--cases", str(CASES), "--seed", str(SEED), "--memory-mb", "2048"],
        cwd=TESTS.parent,
        capture_output=True,
        timeout=1800,
    )
    assert p.stdout, p.stderr.decode()[-3000:]
    summary = json.loads(p.stdout.decode().strip().splitlines()[-1])
    SUMMARY.append(
        f"fuzz: {summary['cases']} mutated inputs, {summary['command_runs']} command runs "
        f"({', '.join(summary['commands'])}) in {summary['seconds']} s, {summary['failure_count']} failures"
    )
    assert summary["failure_count"] == 0, json.dumps(summary["failures"], indent=1)
    assert set(summary["commands"]) == FUZZED, summary  # every command the driver runs on each input
    assert p.returncode == 0
