"""Peak memory of every command on the hostile inputs of issue 19.

Usage: ``python3 benchmarks/memory.py [--scale F] [-k PATTERN]``.

Each row runs kseg as a child process (``sys.executable -m kseg``, stdout and
stderr to ``/dev/null``) and reports the child's peak resident set size
(``ru_maxrss`` from ``os.wait4``), its wall time and exit code, for
``KSEG_ENGINE=c`` and ``KSEG_ENGINE=python`` where the engine is involved.
The target (``docs/robustness.md``) is 128 MiB for every row.

Inputs (``kseg.testing.bombs``), written once under ``--dir`` (default
``/tmp/kseg-memory``) at full size unless ``--scale`` shrinks the counts:

* ``bomb``: one zstd batch of 4 M null records (3.2 MB, 39 MB decompressed)
  and the same records uncompressed (``plain``, the streaming baseline);
* ``index``: random 10 MiB ``.index`` / ``.timeindex`` (Kafka's preallocated size);
* ``sparse``: 1 GiB sparse ``.index`` / ``.timeindex`` (1 MiB of random bytes, then zeros);
* ``snapshot``: a valid producer snapshot of 2 M producers (92 MB);
* ``parts``: 10,000 partitions of one record, exported to Parquet.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from kseg.testing import bombs  # noqa: E402  (after the sys.path line); small: the writers run in a child

TARGET_MIB = 128
NUL = subprocess.DEVNULL


def inputs(root: Path, scale: float) -> dict[str, Path]:
    """Write (once, in a child process) and return the inputs by name.

    A child's ``ru_maxrss`` starts from its parent's at ``fork``: writing 4 M
    records here would put a floor of ~400 MiB under every row."""
    n = max(1, int(4_000_000 * scale))
    made = {
        "bomb": root / f"bomb-{n}" / "t-0",
        "plain": root / f"plain-{n}" / "t-0",
        "index": root / f"index-{int(10 * scale * 1024)}k" / "t-0",
        "sparse": root / f"sparse-{int(1024 * scale)}m" / "t-0",
        "snapshot": root / f"snapshot-{int(2_000_000 * scale)}" / "t-0",
        "parts": root / f"parts-{max(1, int(10_000 * scale))}",
    }
    if not all(path.exists() for path in made.values()):
        code = (
            f"import sys; sys.path.insert(0, {str(HERE)!r}); from pathlib import Path; import memory; "
            f"memory.write_inputs({ {k: str(v) for k, v in made.items()}!r}, {n}, {scale!r})"
        )
        subprocess.run([sys.executable, "-c", code], check=True)
    return made


def write_inputs(paths: dict[str, str], n: int, scale: float) -> None:
    """The writes of :func:`inputs`, in the child."""
    made = {k: Path(v) for k, v in paths.items()}
    if not made["bomb"].exists():
        bombs.write_null_bomb(made["bomb"], n, "zstd")
    if not made["plain"].exists():
        bombs.write_null_bomb(made["plain"], n, "none")
    if not made["index"].exists():
        bombs.write_random_indexes(made["index"], max(8 * 12, int(10 * 1024 * 1024 * scale) // 24 * 24))
    if not made["sparse"].exists():
        bombs.write_random_indexes(made["sparse"], max(8 * 12, int((1 << 30) * scale) // 24 * 24), sparse=True)
    if not made["snapshot"].exists():
        bombs.write_snapshot_bomb(made["snapshot"], max(1, int(2_000_000 * scale)))
    if not made["parts"].exists():
        bombs.write_many_partitions(made["parts"], max(1, int(10_000 * scale)))


LOG = "{d}/00000000000000000000.log"

# name, input, args (after `kseg`), whether the C engine is involved
ROWS: list[tuple[str, str, list[str], bool]] = [
    ("dump --deep-iteration (zstd bomb)", "bomb", ["dump", "--deep-iteration", LOG], True),
    ("dump --deep-iteration (same, uncompressed)", "plain", ["dump", "--deep-iteration", LOG], True),
    ("dump --print-data-log (zstd bomb)", "bomb", ["dump", "--print-data-log", LOG], True),
    ("dump --value-decoder json (zstd bomb)", "bomb", ["dump", "--value-decoder", "json", LOG], True),
    ("verify-index --strict (zstd bomb)", "bomb", ["verify-index", "--strict", "{d}"], True),
    ("lookup-offset (zstd bomb)", "bomb", ["lookup-offset", "{last}", "{d}"], True),
    ("lookup-time (zstd bomb)", "bomb", ["lookup-time", "{ts}", "{d}"], True),
    ("compaction (zstd bomb)", "bomb", ["compaction", "{d}"], True),
    ("txn (zstd bomb)", "bomb", ["txn", "{d}"], True),
    ("rebuild-index --check (zstd bomb)", "bomb", ["rebuild-index", "--check", "{d}"], True),
    ("export (zstd bomb)", "bomb", ["export", "-o", "{out}", "--force", "{d}"], True),
    ("dump .index (random 10 MiB)", "index", ["dump", "{d}/00000000000000000000.index"], False),
    ("dump .timeindex (random 10 MiB)", "index", ["dump", "{d}/00000000000000000000.timeindex"], False),
    ("verify-index (random 10 MiB indexes)", "index", ["verify-index", "{d}"], False),
    ("rebuild-index --check (random 10 MiB indexes)", "index", ["rebuild-index", "--check", "{d}"], False),
    ("lookup-offset (random 10 MiB indexes)", "index", ["lookup-offset", "0", "{d}"], False),
    ("lookup-time (random 10 MiB indexes)", "index", ["lookup-time", "0", "{d}"], False),
    ("dump .index (sparse 1 GiB)", "sparse", ["dump", "{d}/00000000000000000000.index"], False),
    ("dump .timeindex (sparse 1 GiB)", "sparse", ["dump", "{d}/00000000000000000000.timeindex"], False),
    ("verify-index (sparse 1 GiB indexes)", "sparse", ["verify-index", "{d}"], False),
    ("rebuild-index --check (sparse 1 GiB indexes)", "sparse", ["rebuild-index", "--check", "{d}"], False),
    ("lookup-offset (sparse 1 GiB indexes)", "sparse", ["lookup-offset", "0", "{d}"], False),
    ("lookup-time (sparse 1 GiB indexes)", "sparse", ["lookup-time", "0", "{d}"], False),
    ("export (sparse 1 GiB indexes)", "sparse", ["export", "-o", "{out}", "--force", "{d}"], False),
    ("dump .snapshot (2 M producers)", "snapshot", ["dump", "{d}/00000000000000000001.snapshot"], False),
    ("txn (2 M producers)", "snapshot", ["txn", "{d}"], False),
    ("export (10,000 one-record partitions)", "parts", ["export", "-o", "{out}", "--force", "{d}"], False),
]


def run(args: list[str], engine: str) -> tuple[int, float, int]:
    """Run ``kseg args`` under ``engine``: (peak RSS in bytes, seconds, exit code)."""
    env = dict(os.environ, KSEG_ENGINE=engine)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kseg", *args], stdout=NUL, stderr=NUL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss * 1024, time.perf_counter() - start, proc.returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default="/tmp/kseg-memory", help="where inputs are written (once)")
    p.add_argument("--scale", type=float, default=1.0, help="shrink the inputs (tests use ~0.05)")
    p.add_argument("-k", default="*", help="only rows whose name matches this glob")
    p.add_argument("--engine", choices=("c", "python", "both"), default="both")
    ns = p.parse_args(argv)
    root = Path(ns.dir)
    made = inputs(root, ns.scale)
    n = max(1, int(4_000_000 * ns.scale))
    out = root / "out.parquet"
    print(f"{'command':52} {'engine':7} {'peak MiB':>9} {'s':>7} exit  target {TARGET_MIB} MiB")
    over = 0
    for name, key, args, engined in ROWS:
        if not fnmatch.fnmatch(name, ns.k):
            continue
        fill = {"d": str(made[key]), "last": str(n - 1), "ts": str(bombs.TIMESTAMP), "out": str(out)}
        argv_ = [a.format(**fill) for a in args]
        engines = ("c", "python") if engined and ns.engine == "both" else (ns.engine if ns.engine != "both" else "c",)
        for engine in engines:
            rss, secs, code = run(argv_, engine)
            if out.exists():
                shutil.rmtree(out) if out.is_dir() else out.unlink()
            mib = rss / (1 << 20)
            over += mib > TARGET_MIB
            flag = "" if mib <= TARGET_MIB else "  OVER"
            print(f"{name:52} {engine:7} {mib:9.1f} {secs:7.2f} {code:4}{flag}", flush=True)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
