"""A real Spark standalone cluster on loopback for the tests: a master and two workers.

Each is its own JVM, started from the installed pyspark with ``bin/spark-class``
(``org.apache.spark.deploy.master.Master``, ``org.apache.spark.deploy.worker.Worker``),
bound to 127.0.0.1 on free ports, with one core and 512 MiB for executors each
(the test machine's cores are shared).  Every worker runs its executors in its own
work directory, so a path that is only right in the driver's working directory is
wrong there, as on a real cluster.  The workers' environment has none of the S3
server's settings: executors reach it only with what the application gives them
(``spark.executorEnv.AWS_*``) or a job its Python workers (the environment
``spark.executorEnv.*`` fills for them), as on a real cluster; without them they
talk to an endpoint that refuses every request (:class:`RefusingStore`).

Skipped, with the reason, only where Java is missing (or pyspark, the spark extra).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.spark.jvm_archive import java_options

WORKERS = 2
START_TIMEOUT = 120.0  # seconds: the JVMs share two cores with other work
AWS = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_DEFAULT_REGION")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_fixed_port(avoid: int = 0) -> int:
    """A free port below the kernel's ephemeral range, for the master's ports: chosen before the JVMs start and
    bound by the master a moment later, a port of that range could meanwhile go to a worker's web UI (started
    on port 0), whose HTML the master's ``/json/`` would then read."""
    low = 32768
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(max(1024, low // 2), low)
        if port == avoid:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    return free_port()


def java_missing() -> str | None:
    """Why Spark cannot start here (no Java), or None."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return None
    if shutil.which("java"):
        return None
    return "no Java (JAVA_HOME unset and no java on PATH): a Spark standalone cluster needs Java 17 or later"


class _Refuse(BaseHTTPRequestHandler):
    """Every request answered ``400 Bad Request`` (an S3 error document, none for a HEAD)."""

    BODY = b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>InvalidRequest</Code><Message>none</Message></Error>"

    def _refuse(self) -> None:
        body = b"" if self.command == "HEAD" else self.BODY
        self.send_response(400)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _refuse

    def log_message(self, *args) -> None:
        pass


class RefusingStore:
    """The S3 endpoint of executors not given the store's settings: a loopback server (a thread of the test
    process) that refuses every request at once, so a read fails as "cannot read" naming the object and
    the store's answer.  Not a port nobody listens on: the S3 client retries a failed connection with
    back-off (three attempts, ~1.8 s an object, in the verify run and each of a query's two task attempts)
    and no test asserts those retries; it does not retry a 400."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuse)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Cluster:
    """The running cluster: its master URL, the workers' processes and directories."""

    def __init__(self, root: Path) -> None:
        import pyspark

        self.home = Path(pyspark.__file__).parent
        self.root = root
        self.port = free_fixed_port()
        self.ui_port = free_fixed_port(avoid=self.port)
        self.master = f"spark://127.0.0.1:{self.port}"
        self.procs: dict[str, subprocess.Popen] = {}
        self.env = {k: v for k, v in os.environ.items() if k not in AWS and not k.startswith("PYSPARK_GATEWAY")}
        self.env.update(
            SPARK_HOME=str(self.home),
            SPARK_LOCAL_IP="127.0.0.1",
            SPARK_DAEMON_MEMORY="256m",
            SPARK_DAEMON_JAVA_OPTS=java_options(),  # the master's and workers' JVMs start as the tests' others
            # no REST submission server (nothing here submits through it: one server and port fewer)
            SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
            SPARK_LOG_DIR=str(root / "logs"),
            PYSPARK_PYTHON=sys.executable,  # the executors' Python: this one, which has kseg
        )
        # Executors without the store's settings unless a test hands them (spark.executorEnv.AWS_*, or to a
        # job's Python workers), as on a cluster whose workers were never configured for it -- reaching
        # nothing off this machine: the S3 endpoint one on loopback that refuses every request, and no
        # instance-metadata look-up (169.254.169.254)
        self.refusing = RefusingStore()
        self.env.update(AWS_EC2_METADATA_DISABLED="true", AWS_ENDPOINT_URL=self.refusing.url)

    def _start(self, name: str, *args: str) -> None:
        log = open(self.root / f"{name}.log", "wb")
        self.procs[name] = subprocess.Popen(
            [str(self.home / "bin" / "spark-class"), *args],
            env=self.env,
            cwd=self.root,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped whole (the JVM, its executors)
        )
        log.close()

    def state(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as r:
            return json.load(r)

    def alive_workers(self) -> int:
        try:
            return int(self.state()["aliveworkers"])
        except (OSError, ValueError):  # not up yet, or its web UI answering before it has a page (empty)
            return 0

    def master_alive(self) -> bool:
        try:
            return self.state()["status"] == "ALIVE"
        except (OSError, ValueError):  # not up yet, or its web UI answering before it has a page (empty)
            return False

    def start(self) -> None:
        """The master, then -- once it is the leader -- the workers.  A worker that registers earlier, while the
        master is still in standby, is ignored and tries again only 5 to 15 s later (Spark's Worker: its first
        retry interval, fuzzed); the master is the leader a moment after its web UI answers."""
        self._start(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--webui-port",
            str(self.ui_port),
        )
        self._wait("the master to be the leader", self.master_alive)
        self.ready()

    def ready(self) -> None:
        """Every worker running and registered: one killed by a test (:meth:`kill_worker`) is started again
        here, by the next user of the cluster, not by the test that killed it."""
        for n in range(1, WORKERS + 1):
            if f"worker{n}" not in self.procs:
                self.start_worker(n)
        self.wait_for_workers(WORKERS)

    def start_worker(self, n: int) -> None:
        work = self.root / f"worker{n}"
        work.mkdir(exist_ok=True)
        self._start(
            f"worker{n}",
            "org.apache.spark.deploy.worker.Worker",
            "--host",
            "127.0.0.1",
            "--webui-port",
            "0",
            "--cores",
            "1",
            "--memory",
            "512m",
            "--work-dir",
            str(work),
            self.master,
        )

    def wait_for_workers(self, count: int) -> None:
        self._wait(f"{count} workers to register", lambda: self.alive_workers() >= count)

    def _wait(self, what: str, done) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while not done():
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited {proc.returncode}: {self.log_tail(name)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"waited {START_TIMEOUT:.0f} s for {what}: {self.log_tail('master')}")
            time.sleep(0.2)

    def started_tasks(self, n: int) -> int:
        """How many tasks the executors of worker ``n`` have logged starting (their stderr in the worker's work
        directory)."""
        return sum(log.read_bytes().count(b"Running task") for log in (self.root / f"worker{n}").glob("app-*/*/stderr"))

    def kill_worker(self, n: int) -> None:
        """SIGKILL worker ``n`` and its executors (its process group), as a lost machine."""
        proc = self.procs.pop(f"worker{n}")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def log_tail(self, name: str) -> str:
        return (self.root / f"{name}.log").read_bytes()[-3000:].decode("utf-8", "replace")

    def stop(self) -> None:
        for name in sorted(self.procs, reverse=True):  # workers first, then the master
            proc = self.procs[name]
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.procs.clear()
        self.refusing.close()

    def settings(self, *extra: str) -> list[str]:
        """The Spark settings of a job on this cluster, small enough for the shared machine, and ``extra``."""
        return ["spark.executor.memory=512m", *extra]

    def conf(self, *extra: str) -> list[str]:
        """kseg's options for a job on this cluster (:meth:`settings` as ``--spark-conf``)."""
        args = ["--master", self.master]
        for item in self.settings(*extra):
            args += ["--spark-conf", item]
        return args


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory):
    pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")
    why = java_missing()
    if why:
        pytest.skip(why)
    cluster = Cluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
