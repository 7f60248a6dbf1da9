"""``--jobs`` worker processes: how many, how they start, how they stop.

A command asks for N processes; it gets at most one per CPU this process may run on
(``os.sched_getaffinity``) and at most what the descriptor limit (``RLIMIT_NOFILE``) leaves room
for: the parent keeps pipes and a sentinel for every worker, and every process opens a segment's
files.  With ``ulimit -n 16`` that is one process (the work runs in the command's own process).

Workers ignore SIGINT: a Ctrl-C reaches the whole foreground process group, and only the parent
answers it (it stops the workers, prints one line and exits 130).  A worker that dies (killed, out of
memory, out of descriptors) ends the run with one error line, never a hang.
"""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager
from typing import TYPE_CHECKING

from kseg.errors import InputError

if TYPE_CHECKING:  # imported by new_pool: a run of one job never loads multiprocessing
    from collections.abc import Iterator
    from concurrent.futures import ProcessPoolExecutor

#: Descriptors kept for the parent's own work (stdio, the files of a segment, a report, imports).
FD_RESERVE = 16
#: Descriptors the parent spends per worker (its pipes and sentinel), with room to spare.
FD_PER_WORKER = 4


def cpu_count() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def descriptor_limit() -> int | None:
    """The soft ``RLIMIT_NOFILE`` (None where unlimited or unknown)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft < 0 else soft


def cap_jobs(requested: int) -> tuple[int, str | None]:
    """``requested`` processes bounded by the CPU count and the descriptor limit: ``(jobs, why)``,
    ``why`` None when nothing was lowered, else the reason, for a note."""
    jobs, why = requested, None
    cpus = cpu_count()
    if jobs > cpus:
        jobs, why = cpus, f"{cpus} CPU{'s' * (cpus != 1)}"
    limit = descriptor_limit()
    if limit is not None:
        room = max(1, (limit - FD_RESERVE) // FD_PER_WORKER)
        if jobs > room:
            jobs, why = room, f"the open-file limit is {limit} (ulimit -n)"
    return jobs, why


def worker_init(parent: int | None = None) -> None:
    """Workers leave Ctrl-C to the parent, which stops them (one message, exit 130), and die with it:
    a parent that exits while its pool is still starting (a Ctrl-C then) must not leave a worker
    blocked on its task queue for ever, holding the terminal's stderr open (Linux: ``PR_SET_PDEATHSIG``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent is None:
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the parent's stop() is the only way out
        pass
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(1)


def new_pool(jobs: int) -> ProcessPoolExecutor:
    """A pool of ``jobs`` workers that ignore SIGINT and end when the parent does."""
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=jobs, initializer=worker_init, initargs=(os.getpid(),))


def stop(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued work and end the workers (``terminate_workers`` from Python 3.14 on)."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join()
    if manager is not None:  # let it close its wake-up pipe now: at exit, concurrent.futures would write to
        manager.join(timeout=10)  # the closed pipe ("Exception ignored ... Bad file descriptor" after Ctrl-C)


@contextmanager
def working(jobs: int, died: str) -> Iterator[ProcessPoolExecutor]:
    """A :func:`new_pool` for a ``with`` block: shut down when the block ends, stopped at once when it is left
    by an exception (a Ctrl-C, a closed stdout, a generator closed by its caller: not after the queued work);
    a worker that died (killed, out of memory) is the one-line :class:`~kseg.errors.InputError` ``died``."""
    from concurrent.futures.process import BrokenProcessPool

    pool = new_pool(jobs)
    try:
        yield pool
    except BrokenProcessPool:
        stop(pool)
        raise InputError(died) from None
    except BaseException:
        stop(pool)
        raise
    pool.shutdown()
