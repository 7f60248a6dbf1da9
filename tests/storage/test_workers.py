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


def _die() -> None:
    os._exit(9)


def test_a_worker_that_dies_is_one_input_error_and_the_pool_is_stopped() -> None:
    """``working``: a worker killed mid-task (here it exits) ends the block as the one-line error it was given."""
    from kseg.errors import InputError
    from kseg.storage.workers import working

    with pytest.raises(InputError, match="^a worker died; run again$"):
        with working(2, "a worker died; run again") as pool:
            pool.submit(_die).result(timeout=60)
    assert pool._processes is None or not any(p.is_alive() for p in pool._processes.values())


def test_a_block_left_by_an_exception_stops_the_workers_and_keeps_the_exception() -> None:
    from kseg.storage.workers import working

    with pytest.raises(KeyboardInterrupt):
        with working(2, "unused") as pool:
            pool.submit(os.getpid).result(timeout=60)
            procs = list(pool._processes.values())
            raise KeyboardInterrupt
    assert procs and not any(p.is_alive() for p in procs)
