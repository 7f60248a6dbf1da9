"""Write the benchmark inputs under ``benchmarks/data/`` (gitignored).

Every input is written by kseg's own test writer,
:func:`kseg.testing.writer.write_bulk_segment` (byte-exact ``DefaultRecordBatch``
batches and ``LogSegment`` per-batch ``.index``/``.timeindex`` entries), so
the files are what a broker would have on disk for such traffic.

Inputs (shaped like the rows of Kafka's figures in issue 6)::

    a-none-1g/     1 GiB v2 uncompressed, 137 records of ~100-byte values per ~16 KB batch, indexes
    b-lz4-256m/    256 MiB v2 lz4, same records
    b-zstd-256m/   256 MiB v2 zstd, same records
    c-one-256m/    256 MiB of one-record batches (the per-batch worst case)
    e-150-256m/    256 MiB v2 uncompressed, 150 records per batch (issue 34's rows)
    d-part-64m/    a 64 MiB partition: 4 segments of 16 MiB
    d-part-1g/     a 1 GiB partition: 8 segments of 128 MiB

``--quick`` writes every input at 1/16 of its size (for a smoke run).
An input already present with the same parameters is kept (``.params``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout without installing

from kseg.testing.writer import write_bulk_segment  # noqa: E402

MIB = 1 << 20
RECORDS_PER_BATCH = 137  # ~16 KB batches of ~100-byte values, as Kafka's 1 GiB figure (65,882 batches)
VALUE_SIZE = 100
START_TS = 1730000000000


@dataclass(frozen=True)
class Input:
    """One benchmark input: ``segments`` segments of ``mib`` MiB each, in one directory."""

    name: str
    mib: int
    codec: str = "none"
    records_per_batch: int = RECORDS_PER_BATCH
    segments: int = 1
    note: str = ""
    extra: dict = field(default_factory=dict)

    def directory(self, root: Path) -> Path:
        return root / self.name

    def log(self, root: Path, n: int = 0) -> Path:
        """The ``.log`` of segment ``n``."""
        logs = sorted(self.directory(root).glob("*.log"))
        return logs[n]


INPUTS = {
    "a": Input("a-none-1g", 1024, note="1 GiB v2 none, ~16 KB batches, ~100-byte values, indexes"),
    "b-lz4": Input("b-lz4-256m", 256, codec="lz4", note="256 MiB v2 lz4"),
    "b-zstd": Input("b-zstd-256m", 256, codec="zstd", note="256 MiB v2 zstd"),
    "c": Input("c-one-256m", 256, records_per_batch=1, note="256 MiB one-record batches"),
    "e": Input("e-150-256m", 256, records_per_batch=150, note="256 MiB v2 none, 150 records per batch"),
    "d-64m": Input("d-part-64m", 16, segments=4, note="64 MiB partition, 4 segments"),
    "d-1g": Input("d-part-1g", 128, segments=8, note="1 GiB partition, 8 segments"),
}


def data_root(quick: bool) -> Path:
    return HERE / "data" / ("quick" if quick else "full")


def params(inp: Input, mib: int) -> dict:
    return {
        "mib": mib,
        "codec": inp.codec,
        "records_per_batch": inp.records_per_batch,
        "value_size": VALUE_SIZE,
        "segments": inp.segments,
        "writer": "kseg.testing.write_bulk_segment",
    }


def generate(inp: Input, root: Path, quick: bool, force: bool = False) -> str:
    """Write ``inp`` under ``root`` unless an identical copy is there; return a status line."""
    mib = max(1, inp.mib // 16) if quick else inp.mib
    directory = inp.directory(root)
    stamp = directory / ".params"
    want = params(inp, mib)
    if not force and stamp.exists() and json.loads(stamp.read_text()) == want:
        return f"{inp.name}: present"
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    started = time.perf_counter()
    base = 0
    ts = START_TS
    total = batches = records = 0
    for _ in range(inp.segments):
        r = write_bulk_segment(
            directory,
            mib * MIB,
            records_per_batch=inp.records_per_batch,
            value_size=VALUE_SIZE,
            codec=inp.codec,
            base_offset=base,
            start_timestamp=ts,
        )
        base += r.records
        ts += r.records  # timestamps go on rising across segments
        total += r.log_bytes
        batches += r.batches
        records += r.records
    seconds = time.perf_counter() - started
    meta = dict(want, log_bytes=total, batches=batches, records=records, end_offset=base, end_timestamp=ts)
    (directory / "meta.json").write_text(json.dumps(meta, indent=1))
    stamp.write_text(json.dumps(want))
    return (
        f"{inp.name}: {total / MIB:.0f} MiB, {batches} batches, {records} records in {seconds:.1f} s "
        f"({total / 1e6 / seconds:.0f} MB/s)"
    )


def meta(inp: Input, root: Path) -> dict:
    return json.loads((inp.directory(root) / "meta.json").read_text())


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="1/16-size inputs under data/quick")
    p.add_argument("--force", action="store_true", help="rewrite inputs even if present")
    p.add_argument("only", nargs="*", help=f"inputs to write: {', '.join(INPUTS)} (default: all)")
    args = p.parse_args(argv)
    unknown = [k for k in args.only if k not in INPUTS]
    if unknown:
        p.error(f"unknown input(s) {', '.join(unknown)}; choose from {', '.join(INPUTS)}")
    root = data_root(args.quick)
    for key in args.only or INPUTS:
        print(generate(INPUTS[key], root, args.quick, args.force), flush=True)


if __name__ == "__main__":
    main()
