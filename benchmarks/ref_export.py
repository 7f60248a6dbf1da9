"""The floor of ``kseg export`` (issue 34): pyarrow writing the same table with the same settings.

``python3 benchmarks/ref_export.py OUT.parquet [--runs N]`` reads a file ``kseg export`` wrote (the whole
table, in memory: this is not a memory benchmark), then writes it again N times as kseg does -- zstd, the
same dictionary-encoded columns, row groups of kseg's rows -- and prints the median write time (wall and CPU) and
its rate in records/s: what pyarrow alone needs for the Parquet side of an export, the decoding left out.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("parquet", help="a file kseg export wrote")
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()

    import pyarrow.parquet as pq

    from kseg.render.export import DICTIONARY, ROW_GROUP_ROWS

    table = pq.read_table(args.parquet)
    table = table.replace_schema_metadata(pq.read_schema(args.parquet).metadata)
    dictionary = [name for name in DICTIONARY if name in table.schema.names]
    times, cpus = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "ref.parquet")
        for _ in range(args.runs):
            started, cpu = time.perf_counter(), time.process_time()
            pq.write_table(table, out, compression="zstd", use_dictionary=dictionary, row_group_size=ROW_GROUP_ROWS)
            times.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
    wall, cpu = statistics.median(times), statistics.median(cpus)
    rows = table.num_rows
    print(
        f"pyarrow write: {rows} records, median of {args.runs}: "
        f"wall {wall:.3f} s ({rows / wall / 1e6:.2f} M records/s), CPU {cpu:.3f} s ({rows / cpu / 1e6:.2f} M records/s)"
    )


if __name__ == "__main__":
    main()
