"""Count the S3 requests kseg makes on a remote partition (the input of the object-storage sizing).

Starts moto's standalone S3 server on loopback, uploads one benchmark
partition (``python3 benchmarks/gen.py d-64m`` writes it; any
partition directory can be given), runs ``verify-index``, ``export`` and
``lookup-offset`` on its URI, and prints the requests of each by kind
(HEAD, ranged GET, LIST, PUT) with the bytes of the partition.  Counts, not
times: moto is a test server, so its speed says nothing about S3's.

    python3 benchmarks/s3_requests.py [PARTITION_DIR]

``--plan N`` measures the driver's side of ``--spark`` instead: N partitions of one
indexed segment (four one-record batches, an index entry each) under 16 broker
prefixes (``fleet/b<k>/data/``, each with ``meta.properties`` and the offset
checkpoints; ``BENCH_BROKERS`` sets how many), and the requests, wall time and
peak traced memory per listed key of what the driver runs before any task starts
-- the listing alone (``listing.listed``), the data source's ``load()`` and one
query's ``partitions()`` (plain, ``fromOffset``, ``fromTime``), export's
planning (its listing, and its units dealt to tasks as for two cores) and
``verify-index --spark``'s (its listing, its bins of runs and the driver's
bookkeeping of them) -- each in a process of its own (the server's log counts its requests);
memory as the peak of traced Python allocations, what stays traced after (the
planning's result, held), the peak growth of the process's
RSS (sampled every 2 ms; pyarrow's listing is C++), and for the data source the pickle Spark keeps of
the load (its listing)::

    python3 benchmarks/s3_requests.py --plan 1000
    python3 benchmarks/s3_requests.py --plan 100 30     # 100 partitions of 30 segments each

``--before DIR`` (after ``--plan N [S]``) runs each step twice on the same server, first with the kseg
of another checkout (``PYTHONPATH=DIR``, e.g. main) then with this one, side by side under the same load;
``--only listing`` runs that step alone; ``--at-once 1,2,4,8`` runs the listing alone once for each
number of listings at once (``kseg.storage.prefixes.AT_ONCE``, set by ``BENCH_AT_ONCE`` in the child).

``--load N`` runs the data source on Spark (``local[2]``) over the same N partitions and counts
every request (the driver's planning and the tasks' reads) of each step of::

    df = spark.read.format("kseg").load(uri); df.count()
    df.where("offset >= 2").count(); df.where("timestampMs >= <third record's>").count()
    df.where("partition = 1 AND topic = 'tb1'").count()
    spark.read.format("kseg").options(topic="tb1", partition="1").load(uri).count()
    ... .options(fromOffset="2") / (toOffset="1") / (fromTime=<third record's>) ... .count()

    python3 benchmarks/s3_requests.py --load 200
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = HERE / "data" / "full" / "d-part-64m"


class Requests(logging.Handler):
    """Counts the requests moto's server logs (werkzeug's access lines)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def take(self, show: bool = False) -> Counter:
        if show:
            print("\n".join(self.lines[:20]))
        out: Counter = Counter()
        for line in self.lines:
            line = re.sub(r"\x1b\[[0-9;]*m", "", line)  # werkzeug colours its lines
            if '"HEAD ' in line:
                out["HEAD"] += 1
            elif '"GET ' in line and "list-type" in line:
                out["LIST"] += 1
            elif '"GET ' in line:
                out["GET"] += 1
            elif '"PUT ' in line or '"POST ' in line:
                out["PUT"] += 1
        self.lines.clear()
        return out


def bench_server():
    """moto's S3 server on loopback counting the requests it answers, the environment that points kseg at it,
    a client, and the ``bench`` bucket."""
    import boto3
    from moto.server import ThreadedMotoServer

    counter = Requests()
    logging.getLogger("werkzeug").addHandler(counter)
    logging.getLogger("werkzeug").setLevel(logging.INFO)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = dict(
        os.environ,
        AWS_ENDPOINT_URL=f"http://{host}:{port}",
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_REGION="us-east-1",
    )
    s3 = boto3.client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
        region_name="us-east-1",
    )
    s3.create_bucket(Bucket="bench")
    return server, counter, env, s3


PRUNED: list = []  # --load: the DataFrame of the pruning options, loaded in one step and counted in the next

PLANS = {
    "data source": {},
    "data source fromOffset": {"fromOffset": "2"},
    "data source fromTime": {"fromTime": "1730000000002"},
}


class RssPeak:
    """The growth of the process's resident set (``/proc/self/statm``) over its size at the start, at its
    highest, sampled every 2 ms by a thread until :meth:`stop` (pyarrow's C++ listing included)."""

    def __init__(self) -> None:
        import threading

        self.page = os.sysconf("SC_PAGE_SIZE")
        self.start = self.peak = self.now()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def now(self) -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * self.page

    def sample(self) -> None:
        while not self.done.wait(0.002):
            self.peak = max(self.peak, self.now())

    def stop(self) -> int:
        self.done.set()
        self.thread.join()
        return max(self.peak, self.now()) - self.start


def child(mode: str, uri: str) -> None:
    """One planning run, in its own process: prints ``[seconds, peak traced bytes, tasks, RSS growth,
    pickled listing bytes, traced bytes held after]`` on stdout."""
    import gc
    import json
    import pickle
    import time
    import tracemalloc

    import pyarrow.fs  # noqa: F401

    import kseg.ops.export.export  # noqa: F401 - imports are not the planning's memory
    import kseg.spark.datasource  # noqa: F401
    import kseg.spark.export_job  # noqa: F401 - (it imports the Parquet writer's module: ~1 MB)
    import kseg.spark.job  # noqa: F401
    import kseg.storage.location

    kseg.storage.location._filesystem(uri)  # the S3 client made (no request): the planning's memory only
    if os.environ.get("BENCH_AT_ONCE"):  # the listings at once (kseg.storage.prefixes.AT_ONCE) to try
        import kseg.storage.prefixes

        kseg.storage.prefixes.AT_ONCE = int(os.environ["BENCH_AT_ONCE"])
    rss_peak = RssPeak()  # sampled: the imports' high-water mark would hide ru_maxrss's growth
    tracemalloc.start()
    began = time.perf_counter()
    pickled = 0
    if mode == "listing":
        from kseg.storage.listing import listed

        units = listed([uri], [])
    elif mode == "verify-index":
        from kseg.spark.bins import DEFAULT_BYTES_PER_TASK, plan
        from kseg.spark.job import _Bins
        from kseg.storage.listing import listed

        listing = listed([uri], [])  # verify-index --spark's driver: the listing, its bins, their bookkeeping
        units = plan(listing, 2, DEFAULT_BYTES_PER_TASK)
        state = _Bins(units, None, keep_all=False)  # held through the job: in the measurement below
    elif mode == "export":
        from kseg.ops.export.export import Ranges
        from kseg.spark.bins import DEFAULT_BYTES_PER_TASK, bin_count
        from kseg.spark.export_job import deal, driver_plan

        listing = driver_plan([uri], Ranges(), 128 << 20)  # the listing, then its units dealt (two cores)
        units = deal(listing, Ranges(), 128 << 20, lambda total, n: bin_count(total, n, 2, DEFAULT_BYTES_PER_TASK))
    else:
        from kseg.spark.datasource import KsegDataSource

        source = KsegDataSource({"path": uri, **PLANS[mode]})  # load(): the listing, once
        units = source.reader(None).partitions()  # a query's planning: no request
    seconds = time.perf_counter() - began
    peak = tracemalloc.get_traced_memory()[1]
    gc.collect()  # held: what the planning keeps reachable (its result), not garbage awaiting the collector
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    rss = rss_peak.stop()
    if mode == "verify-index":
        del state
    if mode.startswith("data source"):
        source.planned = False  # the pickle Spark keeps from load() (with the listing)
        pickled = len(pickle.dumps(source))
    print(json.dumps([seconds, peak, len(units), rss, pickled, held]))


BROKERS = int(os.environ.get("BENCH_BROKERS", "16"))
CHECKPOINTS = ("meta.properties", "recovery-point-offset-checkpoint", "replication-offset-checkpoint")


def fleet(count: int, segments: int = 1):
    """moto's server (:func:`bench_server`) holding N partitions of ``segments`` indexed segments (four
    one-record batches each, an index entry each) under :data:`BROKERS` broker prefixes,
    ``s3://bench/fleet/b<k>/data/`` (each with a broker's files, :data:`CHECKPOINTS`); and the number of keys."""
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    from kseg.testing.bombs import TIMESTAMP
    from kseg.testing.segment import write_segment
    from kseg.testing.v2 import RecordSpec, build_v2_batch

    def write_many_partitions(root: Path, n: int, topic: str) -> Path:
        for k in range(n):
            for seg in range(segments):
                offsets = range(4 * seg, 4 * seg + 4)
                batches = [[build_v2_batch([RecordSpec(b"k", b"v", TIMESTAMP + i)], base_offset=i)] for i in offsets]
                write_segment(root / f"{topic}-{k}", batches, base_offset=4 * seg, index_interval_bytes=1)
        return root

    server, counter, env, s3 = bench_server()
    with tempfile.TemporaryDirectory() as tmp:
        uploads = []
        for k in range(BROKERS):
            broker, share = f"b{k + 1}", count // BROKERS + (k < count % BROKERS)
            root = write_many_partitions(Path(tmp) / broker / "data", share, topic=f"t{broker}")
            for name in CHECKPOINTS:
                (root / name).write_text("0\n0\n")
            uploads += [(f, f"fleet/{f.relative_to(Path(tmp)).as_posix()}") for f in root.rglob("*") if f.is_file()]
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda u: s3.upload_file(str(u[0]), "bench", u[1]), uploads))
    counter.take()
    return server, counter, env, len(uploads)


def load_main(count: int) -> None:
    """``--load N``: every request of each step of one data source load on ``local[2]``."""
    import time

    from kseg.testing.bombs import TIMESTAMP

    server, counter, env, keys = fleet(count)
    os.environ.update(env)  # before the JVM starts: its Python workers (planning and tasks) inherit it
    import kseg.spark
    from kseg.spark.session import session

    spark = session("local[2]", [])
    kseg.spark.register(spark)
    print(f"{count} partitions, {keys} keys under {BROKERS} broker prefixes; the data source on local[2]")
    uri, t = "s3://bench/fleet", TIMESTAMP + 2
    began = time.perf_counter()
    df = spark.read.format("kseg").load(uri)

    def load(**options: str):
        return spark.read.format("kseg").options(**options).load(uri)

    steps = [  # (what, its rows) in turn; a load's own requests are the listing's
        ("load()", lambda: None),
        ("df.count()", df.count),
        ("df.where(offset >= 2).count()", lambda: df.where("offset >= 2").count()),
        ("df.where(timestampMs >= t).count()", lambda: df.where(f"timestampMs >= {t}").count()),
        (
            "df.where(partition = 1 AND topic = 'tb1').count()",
            lambda: df.where("partition = 1 AND topic = 'tb1'").count(),
        ),
        ("options(topic=tb1, partition=1): load()", lambda: PRUNED.append(load(topic="tb1", partition="1"))),
        ("  .count()", lambda: PRUNED[0].count()),
        ("options(fromOffset=2).load().count()", lambda: load(fromOffset="2").count()),
        ("options(toOffset=1).load().count()", lambda: load(toOffset="1").count()),
        ("options(fromTime=t).load().count()", lambda: load(fromTime=str(t)).count()),
    ]
    for name, step in steps:
        rows = step()
        c = counter.take()
        took = time.perf_counter() - began
        shown = "" if rows is None else f" = {rows}"
        print(f"  {name + shown:56s} " + ", ".join(f"{k} {c[k]}" for k in ("LIST", "HEAD", "GET")) + f"; {took:.1f} s")
        began = time.perf_counter()
    spark.stop()
    server.stop()


def plan_main(
    count: int, segments: int = 1, before: str | None = None, only: str | None = None, at_once: str | None = None
) -> None:
    """``--plan N [S]``: the driver's requests, time and memory for planning N partitions (of S segments);
    with ``before``, each step also run with the kseg of that checkout, just before this one's; with
    ``at_once`` (``1,2,4``), the listing alone once per number of listings at once."""
    import json

    server, counter, env, keys = fleet(count, segments)
    print(f"{count} partitions of {segments} segment(s), {keys} keys under {BROKERS} broker prefixes (moto)")
    runs = [
        (mode, label, path, "")
        for mode in ([only] if only else ("listing", *PLANS, "export", "verify-index"))
        for label, path in ([("before", before)] if before else []) + [("after" if before else "", str(HERE.parent))]
    ]
    if at_once:
        runs = [("listing", f"K={k}", str(HERE.parent), k) for k in at_once.split(",")]
    for mode, label, path, at in runs:
        out = subprocess.run(
            [sys.executable, __file__, "--child", mode, "s3://bench/fleet"],
            env=dict(env, PYTHONPATH=path, BENCH_AT_ONCE=at),
            capture_output=True,
            text=True,
            check=False,
        )
        c = counter.take()
        name = f"{mode} {label}".strip()
        if out.returncode != 0:
            print(f"  {name}: failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        seconds, peak, units, rss, pickled, held = json.loads(out.stdout)
        print(
            f"  {name:31s} "
            + ", ".join(f"{k} {c[k]}" for k in ("LIST", "HEAD", "GET"))
            + f"; {seconds:.1f} s; {units} tasks; per listed key: peak {peak / keys:.0f} B traced,"
            + f" {held / keys:.0f} B held after,"
            + f" {rss / keys:.0f} B RSS growth"
            + (f", {pickled / keys:.0f} B pickled" if pickled else ""),
            flush=True,
        )
    server.stop()


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[2], sys.argv[3])
    if sys.argv[1:2] == ["--plan"]:
        args = sys.argv[2:]
        flags = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}
        numbers = [int(a) for a in args if a.isdigit() and a not in flags.values()]
        return plan_main(
            *numbers[:2], before=flags.get("--before"), only=flags.get("--only"), at_once=flags.get("--at-once")
        )
    if sys.argv[1:2] == ["--load"]:
        return load_main(int(sys.argv[2]))

    part = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not part.is_dir():
        sys.exit(f"{part}: not a directory (python3 benchmarks/gen.py d-64m writes the default)")
    server, counter, env, s3 = bench_server()
    size = 0
    for f in sorted(part.iterdir()):
        s3.upload_file(str(f), "bench", f"data/{part.name}/{f.name}")
        size += f.stat().st_size if f.suffix == ".log" else 0
    counter.take()
    uri = f"s3://bench/data/{part.name}"
    runs = {
        "verify-index": ["verify-index", "-q", uri],
        "export": ["export", "-q", uri, "-o", "s3://bench/out.parquet", "--force"],
        "lookup-offset (middle)": ["lookup-offset", "--format", "json", "1000", uri],
    }
    print(f"partition {part.name}: {size / 2**20:.1f} MiB of .log")
    for name, args in runs.items():
        subprocess.run([sys.executable, "-m", "kseg", *args], env=env, stdout=subprocess.DEVNULL, check=False)
        c = counter.take(os.environ.get("SHOW") == "1")
        print(f"  {name:24s} " + ", ".join(f"{k} {c[k]}" for k in ("HEAD", "GET", "LIST", "PUT")))
    server.stop()


if __name__ == "__main__":
    main()
