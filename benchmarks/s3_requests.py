"""Count the S3 requests kseg makes on a remote partition (the input of the object-storage sizing).

Starts moto's standalone S3 server on loopback, uploads one benchmark
partition (``python3 benchmarks/gen.py d-64m`` writes it; any
partition directory can be given), runs ``verify-index``, ``export`` and
``lookup-offset`` on its URI, and prints the requests of each by kind
(HEAD, ranged GET, LIST, PUT) with the bytes of the partition.  Counts, not
times: moto is a test server, so its speed says nothing about S3's.

    python3 benchmarks/s3_requests.py [PARTITION_DIR]
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


def main() -> None:
    import boto3
    from moto.server import ThreadedMotoServer

    part = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not part.is_dir():
        sys.exit(f"{part}: not a directory (python3 benchmarks/gen.py d-64m writes the default)")
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
