"""Write the benchmark inputs under ``benchmarks/data/`` (gitignored).

Every input is written by kseg's own test writer,
:func:`kseg.testing.writer.write_bulk_segment` (byte-exact ``DefaultRecordBatch``
batches and ``LogSegment`` per-batch ``.index``/``.timeindex`` entries), so
the files are what a broker would have on disk for such traffic.

Inputs (shaped like the rows of Kafka's figures in issue 6)::

    a-none-1g/     1 GiB v2 uncompressed, 137 records of ~100-byte values per ~16 KB batch, indexes
    b-lz4-256m/    256 MiB v2 lz4, same records
    b-zstd-256m/   256 MiB v2 zstd, same records
    b-lz4-64m/     64 MiB v2 lz4, same records (issue 34's rows)
    b-zstd-64m/    64 MiB v2 zstd, same records
    c-one-256m/    256 MiB of one-record batches (the per-batch worst case)
    e-150-256m/    256 MiB v2 uncompressed, 150 records per batch (issue 34's rows)
    d-part-64m/    a 64 MiB partition: 4 segments of 16 MiB
    d-part-1g/     a 1 GiB partition: 8 segments of 128 MiB
    a-damaged-1g/  a-none-1g damaged three ways (salvage's input): a zeroed 4 KiB page at a quarter, a
                   batch's length overwritten at the half, 1000 bytes of garbage inserted between two
                   batches at three quarters; no indexes (the insertion moved the positions)

``--quick`` writes every input at 1/16 of its size (for a smoke run).
An input already present with the same parameters is kept (``.params``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import struct
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
    damaged: bool = False  # damaged three ways after writing (damage())

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
    "b-lz4-64m": Input("b-lz4-64m", 64, codec="lz4", note="64 MiB v2 lz4 (issue 34's rows)"),
    "b-zstd-64m": Input("b-zstd-64m", 64, codec="zstd", note="64 MiB v2 zstd (issue 34's rows)"),
    "c": Input("c-one-256m", 256, records_per_batch=1, note="256 MiB one-record batches"),
    "e": Input("e-150-256m", 256, records_per_batch=150, note="256 MiB v2 none, 150 records per batch"),
    "d-64m": Input("d-part-64m", 16, segments=4, note="64 MiB partition, 4 segments"),
    "d-1g": Input("d-part-1g", 128, segments=8, note="1 GiB partition, 8 segments"),
    "a-damaged": Input("a-damaged-1g", 1024, damaged=True, note="a-none-1g damaged three ways"),
}


def data_root(quick: bool) -> Path:
    return HERE / "data" / ("quick" if quick else "full")


def params(inp: Input, mib: int) -> dict:
    return {
        "mib": mib,
        **({"damaged": "zeroed page, overwritten length, garbage inserted"} if inp.damaged else {}),
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
    if inp.damaged:
        total = damage(directory)
    seconds = time.perf_counter() - started
    meta = dict(want, log_bytes=total, batches=batches, records=records, end_offset=base, end_timestamp=ts)
    (directory / "meta.json").write_text(json.dumps(meta, indent=1))
    stamp.write_text(json.dumps(want))
    return (
        f"{inp.name}: {total / MIB:.0f} MiB, {batches} batches, {records} records in {seconds:.1f} s "
        f"({total / 1e6 / seconds:.0f} MB/s)"
    )


def damage(directory: Path) -> int:
    """Damage the one segment of ``directory`` three ways (a quarter, a half and three quarters into its
    log), as tests/ops/salvage does a corpus partition; the batches are found through its ``.index``
    (each entry's position starts a batch).  Returns the log's new size."""
    log = next(directory.glob("*.log"))
    index = log.with_suffix(".index")
    entries = index.read_bytes()
    starts = [struct.unpack_from(">ii", entries, k)[1] for k in range(0, len(entries), 8)]
    size = log.stat().st_size

    def batch_near(fraction: float) -> int:
        return min(starts, key=lambda p: abs(p - size * fraction))

    with open(log, "r+b") as f:
        f.seek(size // 4 // 4096 * 4096)
        f.write(bytes(4096))  # a zeroed page
        f.seek(batch_near(0.5) + 8)
        f.write(struct.pack(">i", 0x12345678))  # a batch's length overwritten
    at = batch_near(0.75)
    damaged = log.with_name(log.name + ".tmp")
    with open(log, "rb") as src, open(damaged, "wb") as out:
        left = at
        while left:
            left -= out.write(src.read(min(8 * MIB, left)))
        out.write(random.Random(7).randbytes(1000))  # garbage between two batches
        shutil.copyfileobj(src, out, 8 * MIB)
    os.replace(damaged, log)
    for stale in (index, log.with_suffix(".timeindex")):
        stale.unlink()
    return size + 1000


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
