"""Run every benchmark row and print a table: ``python3 benchmarks/run.py [--quick] [-k PATTERN]``.

Each row runs kseg as a child process through the real interpreter
(``sys.executable -m kseg``, never a pyenv shim, which adds ~100 ms of
bash), stdout and stderr to ``/dev/null``.  One untimed warm-up run fills
the page cache; then the median of ``--runs`` (default 3) timed runs is
reported.  Wall time is measured around the child's whole life (under
``/usr/bin/time``, which adds about a millisecond); peak RSS is what
``/usr/bin/time -v`` prints as "Maximum resident set size" (install GNU
time with ``apt-get install -y time`` if it is missing).

``--engine c``, ``--engine python`` or ``--engine both`` (the default) runs
each kseg row with ``KSEG_ENGINE`` set to that engine (both: one row per
engine, their runs alternating); ``c`` fails its rows (exit 2) where the
engine is not built.

Inputs come from ``benchmarks/gen.py`` (written first if missing).  Rows
whose command is not in this checkout yet print "not yet measured".
Results also go to ``benchmarks/results/<time>.json`` (gitignored).
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import gen  # noqa: E402

KSEG = [sys.executable, "-m", "kseg"]


@dataclass
class Row:
    """One benchmark: a command line over one input, and what to divide the wall time by."""

    name: str
    input: str | None  # key in gen.INPUTS, or None
    args: list[str]  # after `kseg`; "{log}", "{logs}", "{index}", "{dir}", "{offset}", "{ts}" are filled in
    kafka: str = ""  # Kafka's figure on this kind of machine (issue 6)
    target: str = ""
    bound: str = ""  # what bounds this row
    needs: str | None = None  # module that must exist (a command still being written)
    per: str = "log"  # what MB/s counts: "log" bytes, "index" entries, or "" (nothing)
    cmd: list[str] | None = None  # a non-kseg command line (baselines)
    env: dict | None = None
    expect: tuple[int, ...] = (0,)


def _dump(inp: str, flag: str = "", **kw) -> Row:
    """``kseg dump [FLAG] LOG`` over ``inp`` ("dump shallow" without a flag)."""
    return Row(f"dump {flag}" if flag else "dump shallow", inp, ["dump", *([flag] if flag else []), "{log}"], **kw)


def _verify(inp: str, target: str) -> Row:
    return Row("verify-index", inp, ["verify-index", "{dir}"], needs="kseg.cli.verify", target=target)


def _rebuild_check(inp: str, target: str) -> Row:
    return Row(
        "rebuild-index --check", inp, ["rebuild-index", "--check", "{dir}"], needs="kseg.cli.rebuild", target=target
    )


def _grep(inp: str, what: str, args: list[str]) -> Row:
    """``kseg grep ARGS DIR`` matching nothing (exit 1): every batch read, the scan's speed against
    ``verify-index`` reading the same bytes (issue 36)."""
    return Row(
        f"grep {what} (no match)",
        inp,
        ["grep", *args, "{dir}"],
        needs="kseg.cli.grep",
        target=">= verify-index's MB/s",
        bound="reading (+ decompressing); a --key skips batches lacking its bytes",
        expect=(1,),
    )


def _lookup(kind: str, inp: str, target: str) -> Row:
    """``kseg lookup-offset {offset} DIR`` or ``kseg lookup-time {ts} DIR``: one answer, timed whole."""
    where = "{offset}" if kind == "offset" else "{ts}"
    return Row(
        f"lookup-{kind}", inp, [f"lookup-{kind}", where, "{dir}"], needs="kseg.cli.lookup", per="", target=target
    )


#: The machine's limit for the dump rows (issue 34): ``benchmarks/ref_dump.c``, a single-threaded C loop doing
#: the same work (8 MiB reads, CRC-32C, record decoding, the same lines), built here by ``cc -O2``.
REF_SOURCE = HERE / "ref_dump.c"
REF_BINARY = HERE / "data" / "ref_dump"


def build_reference() -> bool:
    """Build :data:`REF_BINARY` when missing or older than its source; False when no C compiler can.

    With lz4 and zstd (headers and libraries) it is built ``-DREF_CODECS`` and also decompresses lz4 and
    zstd batches; without them it reads uncompressed batches only and its codec rows stop at the first
    compressed batch (exit 3)."""
    if REF_BINARY.exists() and REF_BINARY.stat().st_mtime >= REF_SOURCE.stat().st_mtime:
        return True
    REF_BINARY.parent.mkdir(parents=True, exist_ok=True)
    cc = os.environ.get("CC", "cc")
    base = [cc, "-O2", "-o", str(REF_BINARY), str(REF_SOURCE)]
    try:
        if subprocess.run([*base, "-DREF_CODECS", "-llz4", "-lzstd"], stderr=subprocess.DEVNULL).returncode == 0:
            return True
        print("no lz4/zstd to link: the C reference reads uncompressed batches only", file=sys.stderr)
        return subprocess.run(base).returncode == 0
    except OSError:
        return False


def _reference(inp: str, mode: str) -> Row:
    """The C reference loop over ``inp`` in ``mode`` (shallow, deep, print): the floor of that dump row
    (lz4 and zstd inputs: the build with codecs, see :func:`build_reference`)."""
    return Row(f"C reference dump {mode}", inp, ["{log}"], cmd=[str(REF_BINARY), mode], bound="the machine")


def _reference_crc(inp: str) -> Row:
    """The C reference reading every log of ``inp`` and computing each batch's CRC-32C, nothing more: the
    floor of verify-index's log pass (issue 34's target: verify-index at >= 60 % of its rate)."""
    return Row("C reference read + CRC", inp, ["{logs}"], cmd=[str(REF_BINARY), "crc"], bound="the machine")


START_UP = "<= 80 ms"
SALVAGE = "<= 2x verify-index (a), wall"


def _salvage(inp: str, expect: tuple[int, ...]) -> Row:
    """``kseg salvage`` of ``inp`` to a directory on the disk the inputs are on (``--force``: the previous
    run's output is removed in the run)."""
    return Row(
        "salvage",
        inp,
        ["salvage", "-q", "--force", "{dir}", "-o", "{salvaged}"],
        needs="kseg.cli.salvage",
        target=SALVAGE,
        bound="the kernel's copy and sync of the log (the dd row)",
        expect=expect,
    )


LOOKUP_1G = "<= 150 ms, within 10 % of 64 MiB"

ROWS = [
    Row(
        "interpreter start (python -c pass)",
        None,
        [],
        per="",
        cmd=[sys.executable, "-c", "pass"],
        bound="this machine's interpreter + site .pth hooks",
    ),
    *[
        Row(
            f"kseg {flag}",
            None,
            [flag],
            per="",
            kafka="0.07 s (JVM start)",
            target=START_UP,
            bound="interpreter start + click import",
        )
        for flag in ("--version", "--help")
    ],
    Row(
        "kseg --help, python -S (no site hooks)",
        None,
        ["--help"],
        per="",
        target=START_UP,
        cmd=[sys.executable, "-S", "-m", "kseg"],
        bound="kseg's own start-up cost",
    ),
    _dump("a", kafka="0.96 s, 1118 MB/s, 229 MiB", target=">= 3 GB/s"),
    _dump("a", "--deep-iteration", kafka="14.1 s, 0.64 M rec/s, 252 MiB", target=">= 4 M rec/s"),
    _dump("a", "--print-data-log", kafka="22.8 s, 0.40 M rec/s, 262 MiB", target=">= 3 M rec/s"),
    Row(
        "dump .index --verify-index-only",
        "a",
        ["dump", "--verify-index-only", "{index}"],
        per="index",
        kafka="0.27 s, 244 k entries/s, 60 MiB",
        target="<= 0.15 s",
    ),
    _verify("a", ">= 2.5 GB/s; >= 60 % of the C reference's read + CRC"),
    _reference_crc("a"),
    _verify("d-1g", ">= 60 % of the C reference's read + CRC"),
    _reference_crc("d-1g"),
    _grep("a", "--key", ["--key", "no-such-key"]),
    _grep("a", "--value-regex", ["--value-regex", "no such value"]),
    _grep("a", "--from-time", ["--from-time", "2100-01-01T00:00:00Z"]),
    _rebuild_check("a", ">= 2.5 GB/s"),
    _dump("b-lz4", kafka="0.55 s, 488 MB/s, 227 MiB"),
    _verify("b-lz4", ""),
    _grep("b-lz4", "--key", ["--key", "no-such-key"]),
    _dump("b-lz4", "--deep-iteration", kafka="6.3 s, 0.61 M rec/s, 266 MiB"),
    _dump("b-lz4", "--print-data-log", kafka="10.4 s, 0.37 M rec/s, 262 MiB", target=">= 2 M rec/s"),
    _dump("b-zstd"),
    _dump("b-zstd", "--deep-iteration"),
    _dump("b-zstd", "--print-data-log"),
    *[_dump(inp, flag) for inp in ("b-zstd-64m", "b-lz4-64m") for flag in ("--deep-iteration", "--print-data-log")],
    *[_reference(inp, mode) for inp in ("b-zstd-64m", "b-lz4-64m") for mode in ("deep", "print")],
    _dump("c", target=">= 2 M batches/s"),
    _dump("c", "--deep-iteration"),
    _dump("c", "--print-data-log"),
    *[_reference("c", mode) for mode in ("shallow", "deep", "print")],
    _dump("e"),
    _dump("e", "--deep-iteration"),
    _dump("e", "--print-data-log"),
    *[_reference("e", mode) for mode in ("shallow", "deep", "print")],
    *[
        Row(f"dump --format json {flag}".rstrip(), inp, ["dump", "--format", "json", *flag.split(), "{log}"])
        for inp in ("c", "e")
        for flag in ("", "--deep-iteration", "--print-data-log")
    ],
    *[
        Row(
            "export",
            inp,
            ["export", "-q", "--force", "{dir}", "-o", "{out}"],
            target=">= 50 % of pyarrow's write (benchmarks/ref_export.py), <= 128 MiB",
            bound="the Parquet writer",
        )
        for inp in ("e", "c")
    ],
    _verify("c", "RSS flat in batch count"),
    _reference_crc("c"),
    _rebuild_check("c", "RSS flat in batch count"),
    Row("verify-index", "a-damaged", ["verify-index", "{dir}"], needs="kseg.cli.verify", expect=(1,)),
    _salvage("a", (0,)),
    _salvage("a-damaged", (1,)),
    Row("salvage --dry-run", "a", ["salvage", "-q", "--dry-run", "{dir}"], needs="kseg.cli.salvage", bound="reading"),
    Row(
        "dd conv=fsync (the copy's floor)",
        "a",
        ["{log}", "{copy}"],
        cmd=["sh", "-c", 'exec dd if="$0" of="$1" bs=8M conv=fsync status=none'],
        bound="the disk: the log's bytes copied and synced, salvage's floor",
    ),
    _lookup("offset", "d-64m", "<= 150 ms"),
    _lookup("offset", "d-1g", LOOKUP_1G),
    _lookup("time", "d-64m", "<= 150 ms"),
    _lookup("time", "d-1g", LOOKUP_1G),
]


TIME = "/usr/bin/time"


def run_once(argv: list[str], env: dict | None) -> tuple[float, int, int]:
    """(wall seconds, peak RSS bytes, exit code) of one child run, output to /dev/null.

    Peak RSS comes from GNU time (``%M``, what ``/usr/bin/time -v`` calls
    "Maximum resident set size").  Without it, ``wait4``'s ``ru_maxrss`` is
    used, which on Linux also counts this (larger) parent's pages at fork.
    """
    full_env = None if env is None else {**os.environ, **env}
    use_time = os.access(TIME, os.X_OK)
    rss_file = HERE / "results" / f".rss-{os.getpid()}"
    if use_time:
        rss_file.parent.mkdir(exist_ok=True)
        argv = [TIME, "-f", "%M", "-o", str(rss_file), *argv]
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=full_env
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    rss = usage.ru_maxrss * 1024
    if use_time:
        text = rss_file.read_text().split()
        rss_file.unlink()
        rss = int(text[-1]) * 1024  # "Command exited with non-zero status N" may come first
    return wall, rss, proc.returncode


def fill(args: list[str], inp: gen.Input | None, root: Path) -> list[str]:
    if inp is None:
        return args
    d = inp.directory(root)
    m = gen.meta(inp, root)
    log = inp.log(root, 0)
    # lookups aim at a record near the end: the worst case for a scan, a best case for nothing
    values = {
        "{dir}": str(d),
        "{log}": str(log),
        "{index}": str(log.with_suffix(".index")),
        "{offset}": str(m["end_offset"] - m["records_per_batch"] * 3 // 2),
        "{ts}": str(m["end_timestamp"] - m["records_per_batch"] * 3 // 2),
        "{out}": str(HERE / "results" / "export.parquet"),
        "{salvaged}": str(HERE / "results" / "salvaged" / inp.name),
        "{copy}": str(HERE / "results" / "copy.log"),
    }
    logs = [str(p) for p in sorted(d.glob("*.log"))]  # "{logs}": every log of the input, one argument each
    return [v for a in args for v in (logs if a == "{logs}" else [values.get(a, a)])]


def human_rate(x: float, unit: str) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M{unit}"
    if x >= 1e3:
        return f"{x / 1e3:.0f} k{unit}"
    return f"{x:.0f} {unit}"


def measure(row: Row, root: Path, runs: int, engines: list[str | None]) -> list[dict]:
    """One result per engine.  With several engines the runs alternate (c, python, c, python, ...) after
    one warm-up of each, so a noisy shared machine slows both alike."""
    inp = gen.INPUTS[row.input] if row.input else None
    outs, plans = [], []
    for engine in engines:
        out = {
            "row": row.name,
            "input": inp.name if inp else "-",
            "kafka": row.kafka,
            "target": row.target,
            "engine": engine or "-",
        }
        outs.append(out)
        if row.needs and importlib.util.find_spec(row.needs) is None:
            out["status"] = "not yet measured (command not in this checkout)"
            continue
        argv = (row.cmd or KSEG) + fill(row.args, inp, root)
        env = row.env
        if row.cmd and row.cmd[1:2] == ["-S"]:
            import click  # find where click lives, for a PYTHONPATH that replaces site

            env = {"PYTHONPATH": os.pathsep.join([str(HERE.parent), str(Path(click.__file__).parent.parent)])}
        if engine is not None:
            env = {**(env or {}), "KSEG_ENGINE": engine}
        plans.append((out, argv, env, []))
    for _, argv, env, _ in plans:
        run_once(argv, env)  # warm-up: page cache, pyc files
    for _ in range(runs):
        for _, argv, env, results in plans:
            results.append(run_once(argv, env))
    for out, argv, _env, results in plans:
        codes = {r[2] for r in results}
        wall = statistics.median(r[0] for r in results)
        rss = max(r[1] for r in results)
        out.update(argv=" ".join(argv), walls=[round(r[0], 4) for r in results], wall=wall, rss=rss, exit=sorted(codes))
        if not codes <= set(row.expect):
            out["status"] = f"unexpected exit code {sorted(codes)}"
        if inp is not None:
            m = gen.meta(inp, root)
            single = row.args[-1] in ("{log}", "{index}")
            factor = 1 / inp.segments if single else 1
            if row.per == "log":
                out["mb_s"] = m["log_bytes"] * factor / 1e6 / wall
                out["batches_s"] = m["batches"] * factor / wall
                if "deep" in row.name or "print" in row.name:
                    out["records_s"] = m["records"] * factor / wall
            elif row.per == "index":
                entries = os.path.getsize(fill(["{index}"], inp, root)[0]) // 8
                out["entries_s"] = entries / wall
    return outs


def table(results: list[dict]) -> str:
    head = "| row | input | engine | wall | MB/s | batches/s | records/s | peak RSS | target | Kafka |"
    lines = [head, "|" + "---|" * 10]
    for r in results:
        if "wall" not in r:
            lines.append(
                f"| {r['row']} | {r['input']} | {r.get('engine', '-')} | {r['status']} | | | | | "
                f"{r['target']} | {r['kafka']} |"
            )
            continue
        wall = f"{r['wall'] * 1000:.0f} ms" if r["wall"] < 1 else f"{r['wall']:.2f} s"
        if "status" in r:
            wall += f" ({r['status']})"
        mbs = f"{r['mb_s']:.0f}" if "mb_s" in r else ""
        bps = human_rate(r["batches_s"], "") if "batches_s" in r else ""
        if "entries_s" in r:
            bps = human_rate(r["entries_s"], " entries")
        rps = human_rate(r["records_s"], "") if "records_s" in r else ""
        lines.append(
            f"| {r['row']} | {r['input']} | {r.get('engine', '-')} | {wall} | {mbs} | {bps} | {rps} | "
            f"{r['rss'] / 2**20:.0f} MiB | {r['target']} | {r['kafka']} |"
        )
    return "\n".join(lines)


def machine() -> str:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} CPUs ({model}), Linux {platform.release()}, "
        f"Python {platform.python_version()} ({sys.executable})"
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="1/16-size inputs (a smoke run, not comparable)")
    p.add_argument("--runs", type=int, default=3, help="timed runs per row (median reported; default 3)")
    p.add_argument("-k", dest="pattern", default="*", help="only rows whose 'name input' matches this glob")
    p.add_argument(
        "--engine",
        choices=["c", "python", "both"],
        default="both",
        help="KSEG_ENGINE for the kseg rows; both: one row per engine (default)",
    )
    args = p.parse_args(argv)
    engines = ["c", "python"] if args.engine == "both" else [args.engine]
    root = gen.data_root(args.quick)
    rows = [
        r
        for r in ROWS
        if fnmatch.fnmatch(f"{r.name} {gen.INPUTS[r.input].name if r.input else ''}", f"*{args.pattern}*")
    ]
    for key in dict.fromkeys(r.input for r in rows if r.input):
        line = gen.generate(gen.INPUTS[key], root, args.quick)
        if not line.endswith("present"):
            print(line, file=sys.stderr, flush=True)
    if any(r.cmd and r.cmd[0] == str(REF_BINARY) for r in rows) and not build_reference():
        rows = [r for r in rows if not (r.cmd and r.cmd[0] == str(REF_BINARY))]
        print("no C compiler: the C reference rows are left out", file=sys.stderr)
    print(f"# {machine()}; median of {args.runs} runs, warm cache, output to /dev/null", flush=True)
    results = []
    (HERE / "results").mkdir(exist_ok=True)
    for row in rows:
        for r in measure(row, root, args.runs, [None] if row.cmd and row.cmd[1:2] != ["-S"] else engines):
            results.append(r)
            print(
                f"  {r['row']} [{r['input']}, {r['engine']}]: "
                + (f"{r['wall']:.3f} s, {r['rss'] / 2**20:.0f} MiB" if "wall" in r else r["status"]),
                file=sys.stderr,
                flush=True,
            )
    print(table(results))
    outdir = HERE / "results"
    outdir.mkdir(exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    (outdir / f"{stamp}{'-quick' if args.quick else ''}.json").write_text(
        json.dumps({"machine": machine(), "runs": args.runs, "rows": results}, indent=1)
    )


if __name__ == "__main__":
    main()
