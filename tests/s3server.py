"""A real S3-protocol server on loopback for the tests: moto's standalone server.

Not a mocked client: kseg talks HTTP to it through pyarrow's AWS SDK, as it
would to any S3-compatible store.  The server binds 127.0.0.1 on a free
port; the fixture sets the standard AWS variables for the test process (and
so for the ``python -m kseg`` and Spark processes it starts) and uploads the
corpus as a two-broker tree::

    s3://kseg-test/brokers/b1/data/<partition>/...
    s3://kseg-test/brokers/b2/data/<partition>/...
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA

BUCKET = "kseg-test"
# the whole Kafka-written corpus, under two brokers' log roots
PARTITIONS = tuple(sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir()))


class S3:
    """The running server: its endpoint, and a boto3 client for arranging test data."""

    def __init__(self, endpoint: str) -> None:
        import boto3

        self.endpoint = endpoint
        self.client = boto3.client("s3", endpoint_url=endpoint)

    def upload_tree(self, local: Path, prefix: str) -> None:
        for path in sorted(local.rglob("*")):
            if path.is_file():
                self.client.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(local).as_posix()}")

    def uri(self, key: str) -> str:
        return f"s3://{BUCKET}/{key}"


@pytest.fixture(scope="session")
def s3(tmp_path_factory) -> S3:
    pytest.importorskip("pyarrow", reason="URIs are read through pyarrow (the test extra installs it)")
    server_mod = pytest.importorskip("moto.server", reason="moto[s3] and flask (the test extra)")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = {
        k: os.environ.get(k)
        for k in (
            "AWS_ENDPOINT_URL",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
            "AWS_PROFILE",
        )
    }
    os.environ.update(
        AWS_ENDPOINT_URL=f"http://{host}:{port}",
        AWS_ACCESS_KEY_ID="kseg-test",
        AWS_SECRET_ACCESS_KEY="kseg-test",
        AWS_REGION="us-east-1",
    )
    os.environ.pop("AWS_PROFILE", None)
    os.environ.pop("AWS_DEFAULT_REGION", None)
    try:
        store = S3(os.environ["AWS_ENDPOINT_URL"])
        store.client.create_bucket(Bucket=BUCKET)
        for broker in ("b1", "b2"):
            for name in PARTITIONS:
                store.upload_tree(CORPUS_DATA / name, f"brokers/{broker}/data/{name}")
        yield store
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def broker_data_dirs(root: Path) -> list[str]:
    """The two log directories of a :func:`local_brokers` tree, as arguments."""
    return [str(root / broker / "data") for broker in ("b1", "b2")]


@pytest.fixture(scope="session")
def local_brokers(tmp_path_factory) -> Path:
    """The same two-broker tree on local disk: ``<root>/b1/data``, ``<root>/b2/data``."""
    import shutil

    root = tmp_path_factory.mktemp("brokers")
    for broker in ("b1", "b2"):
        for name in PARTITIONS:
            shutil.copytree(CORPUS_DATA / name, root / broker / "data" / name)
    return root


class RequestLog(logging.Handler):
    """The requests moto's server answers, by kind (werkzeug's access lines, as benchmarks/s3_requests.py
    counts them): the server runs in the test process, so the requests of every process talking to it
    -- the CLI's, Spark's workers' -- are here."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(re.sub(r"\x1b\[[0-9;]*m", "", record.getMessage()))  # werkzeug colours its lines

    def counts(self) -> dict[str, int]:
        out = {"LIST": 0, "HEAD": 0, "GET": 0}
        for line in self.lines:
            if '"HEAD ' in line:
                out["HEAD"] += 1
            elif '"GET ' in line:
                out["LIST" if "list-type" in line else "GET"] += 1
        return out

    def take(self) -> dict[str, int]:
        counts = self.counts()
        self.lines.clear()
        return counts


@contextmanager
def requests_logged() -> Iterator[RequestLog]:
    """Every request the S3 server answers inside the block."""
    log = RequestLog()
    logger = logging.getLogger("werkzeug")
    level = logger.level
    logger.addHandler(log)
    logger.setLevel(logging.INFO)
    try:
        yield log
    finally:
        logger.removeHandler(log)
        logger.setLevel(level)
