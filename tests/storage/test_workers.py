"""kseg.storage.workers: --jobs bounded by the CPUs this process may use and by RLIMIT_NOFILE, both set
for real in a child process (sched_setaffinity, setrlimit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CODE = """
import json, os, resource, sys
cpus, nofile = int(sys.argv[1]), int(sys.argv[2])
os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:cpus]))
resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
from kseg.storage.workers import cap_jobs
print(json.dumps([cap_jobs(n) for n in (1, 2, 8, 64)]))
"""


def _caps(cpus: int, nofile: int) -> list:
    p = subprocess.run([sys.executable, "-c", CODE, str(cpus), str(nofile)], capture_output=True, text=True, check=True)
    return [tuple(x) for x in json.loads(p.stdout)]


def test_jobs_are_capped_by_the_descriptor_limit() -> None:
    fd = "the open-file limit is 16 (ulimit -n)"
    assert _caps(1, 16) == [(1, None), (1, "1 CPU"), (1, "1 CPU"), (1, "1 CPU")]  # one process: nothing to lower
    if len(os.sched_getaffinity(0)) >= 2:
        assert _caps(2, 16) == [(1, None), (1, fd), (1, fd), (1, fd)]
        assert _caps(2, 24) == [(1, None), (2, None), (2, "2 CPUs"), (2, "2 CPUs")]  # (24 - 16) / 4 = 2 workers


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs to show the CPU cap")
def test_jobs_are_capped_by_the_cpus() -> None:
    caps = _caps(2, 4096)
    assert caps == [(1, None), (2, None), (2, "2 CPUs"), (2, "2 CPUs")]
    assert _caps(1, 4096)[2] == (1, "1 CPU")
