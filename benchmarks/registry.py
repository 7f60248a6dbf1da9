"""The registry decoder's cost against ``--value-decoder hex`` on the same records (issue 35: at most 2x).

Usage: ``python3 benchmarks/registry.py [--records N] [--pairs P] [--dir D] [--format text|json]``.

Writes (once) ``D/orders-0``: ``N`` records (default 100,000, 100 a batch) whose values confluent-kafka's
own ``AvroSerializer`` wrote with the 14-field ``Order`` of ``tests/registry/build.py`` (version 2:
long, string, decimal, date, timestamp-millis, uuid, array, map, enum, union, bytes, float, double,
string), keys ``k<i>``; and ``D/_schemas-0``, that mock registry's state as Schema Registry writes the
topic.  Then runs, as child processes and in turn (registry, hex, registry, hex, ...), ``P`` pairs
(default 5) of

    kseg dump --print-data-log --value-decoder registry --schemas D/_schemas-0 D/orders-0/...log
    kseg dump --print-data-log --value-decoder hex D/orders-0/...log

stdout to ``/dev/null``, and prints each command's median wall and CPU (user + system, the child's own
accounting) seconds and the median of the pairs' CPU and wall ratios (pairing keeps a ratio meaningful
while a shared machine's speed drifts).  ``KSEG_ENGINE=python`` in the environment measures the pure
Python path (fastavro's reader) instead of the compiled one.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def write_inputs(root: Path, records: int) -> None:
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    from kseg.testing.segment import write_segment
    from kseg.testing.v2 import RecordSpec, build_v2_batch
    from tests.registry.build import ORDER_V2, T0, _registry, _write_schemas

    client = _registry()
    ser = AvroSerializer(client, json.dumps(ORDER_V2))
    ctx = SerializationContext("orders", MessageField.VALUE)
    rng = random.Random(35)
    batches, specs = [], []
    for i in range(records):
        order = {
            "id": i,
            "name": f"order é{i}",
            "amount": decimal.Decimal(f"{rng.randint(0, 10**6)}.{i % 100:02d}"),
            "day": datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 365),
            "at": datetime.datetime(2024, 10, 27, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=i),
            "uid": uuid.UUID(int=rng.getrandbits(128)),
            "tags": ["a", f"t{i % 10}"],
            "attrs": {"n": i, "m": -i},
            "status": "PAID" if i % 2 else "NEW",
            "coupon": None if i % 2 else f"C{i}",
            "blob": bytes([0, 1, 0xFF, i % 256]),
            "ratio": rng.random(),
            "score": rng.random() * 10**6,
            "note": f"n{i}",
        }
        specs.append(RecordSpec(f"k{i}".encode(), ser(order, ctx), T0 + i))
        if len(specs) == 100:
            batches.append(build_v2_batch(specs, base_offset=i + 1 - len(specs)))
            specs = []
    if specs:
        batches.append(build_v2_batch(specs, base_offset=records - len(specs)))
    write_segment(root / "orders-0", [batches])
    _write_schemas(str(root), client, [])


def run(cmd: list[str], env: dict) -> tuple[float, float]:
    """(wall, CPU) seconds of one child run, its output thrown away."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        child = subprocess.Popen(cmd, stdout=null, stderr=null, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=HERE / "data" / "registry")
    ap.add_argument("--format", choices=("text", "json"), default="text")
    args = ap.parse_args()
    root = args.dir / str(args.records)
    log = root / "orders-0" / "00000000000000000000.log"
    if not log.exists():
        write_inputs(root, args.records)
    kseg = [sys.executable, "-m", "kseg", "dump", "--print-data-log"]
    fmt = ["--format", "json"] if args.format == "json" else []
    registry = [*kseg, *fmt, "--value-decoder", "registry", "--schemas", str(root / "_schemas-0"), str(log)]
    hexed = [*kseg, *fmt, "--value-decoder", "hex", str(log)]
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    run(registry, env), run(hexed, env)  # warm-up: the page cache, the bytecode
    pairs = [(run(registry, env), run(hexed, env)) for _ in range(args.pairs)]
    med = statistics.median
    print(f"{args.records} records, {args.format}, {len(pairs)} pairs, load average {os.getloadavg()[0]:.1f}")
    for name, i in (("registry", 0), ("hex", 1)):
        print(f"{name:9} wall {med(p[i][0] for p in pairs):.2f} s  CPU {med(p[i][1] for p in pairs):.2f} s")
    print(
        f"registry / hex: CPU {med(p[0][1] / p[1][1] for p in pairs):.2f}x, "
        f"wall {med(p[0][0] / p[1][0] for p in pairs):.2f}x"
    )


if __name__ == "__main__":
    main()
