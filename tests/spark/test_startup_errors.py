"""Spark start-up errors a newcomer meets (issue 20) are one line naming the cause Spark gives, exit 2:
a master that cannot be reached, no Java, a port in use -- never "An error occurred while calling
None.org.apache.spark...".  Real PySpark and real sockets on loopback."""

from __future__ import annotations

import os
import socket
import sys

import pytest

from tests.conftest import CORPUS_DATA, run_subprocess

pytest.importorskip("pyspark", reason="the spark extra (pip install 'kseg[spark]')")

PART = str(CORPUS_DATA / "plain-v2-0")


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _one_error_line(r) -> str:
    lines = r.errtext.splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("kseg: error: "), r.errtext
    assert "Traceback" not in r.errtext and "An error occurred while calling" not in r.errtext
    return lines[0]


@pytest.mark.parametrize(
    "command",
    [["verify-index", "--spark"], ["diff", "--roots", "--spark"], ["export", "--spark", "-o", "{tmp}/out.parquet"]],
)
def test_an_unreachable_master_is_named(tmp_path, command: list[str]) -> None:
    port = _closed_port()
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    paths = [PART, PART] if "diff" in args else [PART]
    r = run_subprocess([*args, "--master", f"spark://127.0.0.1:{port}", *paths], timeout=60)
    line = _one_error_line(r)
    assert line == (
        f"kseg: error: Spark could not start: the Spark master spark://127.0.0.1:{port} is unreachable "
        f"(127.0.0.1:{port}: Connection refused); check --master and that the master is running"
    )


def test_no_java_is_named(tmp_path) -> None:
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-jdk")}
    r = _run_env(["verify-index", "--spark", "--master", "local[1]", PART], env)
    line = _one_error_line(r)
    assert f"Spark could not start: no Java at {tmp_path / 'no-jdk'}/bin/java (from JAVA_HOME;" in line


def test_a_port_in_use_is_named() -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        r = run_subprocess(
            [
                "verify-index",
                "--spark",
                "--master",
                "local[1]",
                "--spark-conf",
                f"spark.driver.port={port}",
                "--spark-conf",
                "spark.port.maxRetries=0",
                PART,
            ],
            timeout=180,
        )
    finally:
        busy.close()
    line = _one_error_line(r)
    assert f"Spark could not start: port in use: Spark's sparkDriver could not bind port {port}" in line
    assert "(Address already in use)" in line


def _run_env(args: list[str], env: dict):
    import subprocess

    from tests.conftest import Result

    p = subprocess.run([sys.executable, "-m", "kseg", *args], capture_output=True, timeout=120, env=env)
    return Result(p.returncode, p.stdout, p.stderr)
