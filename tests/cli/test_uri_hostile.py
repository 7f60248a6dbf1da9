"""Hostile URIs (issue 19): credentials in a URI are refused without echoing them; malformed URIs and
every pyarrow exception are one line, exit 2; an unreachable store ends within the network timeout
(``KSEG_NETWORK_TIMEOUT``).  There is no network here: what is unreachable is really unreachable."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from kseg.errors import InputError
from kseg.storage.location import check_uri, redact
from tests.conftest import CORPUS_DATA, Result, run_cli

P = str(CORPUS_DATA / "plain-v2-0")
SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYzEXAMPLEKEY"
URI = f"s3://AKIAIOSFODNN7EXAMPLE:{SECRET}@bucket/data"


#: the stores' settings of every run: an endpoint nobody listens on, a network timeout of 1 s
ENV = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "KSEG_NETWORK_TIMEOUT": "1"}


def kseg(*args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess:
    """``kseg ARGS`` as a real process: where a store is reached (its timeouts, pyarrow's own exceptions)."""
    environment = {**os.environ, **ENV, **env}
    return subprocess.run([sys.executable, "-m", "kseg", *args], capture_output=True, env=environment, timeout=timeout)


def refused(*args: str) -> Result:
    """``kseg ARGS`` in this process (:func:`run_cli`): a URI refused before any store is reached."""
    return run_cli(list(args), env=ENV)


def _one_error_line(p: subprocess.CompletedProcess | Result) -> str:
    err = p.stderr.decode()
    code = p.returncode if isinstance(p, subprocess.CompletedProcess) else p.exit_code
    assert code == 2, err
    assert b"Traceback" not in p.stderr
    lines = [line for line in err.splitlines() if line.startswith("kseg: ")]
    assert len(lines) == 1 and lines[0].startswith("kseg: error: "), err
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ["verify-index", URI],
        ["dump", URI + "/00000000000000000000.log"],
        ["lookup-offset", "0", URI],
        ["lookup-time", "0", URI],
        ["txn", URI],
        ["compaction", URI],
        ["diff", URI, P],
        ["rebuild-index", "--check", URI],
        ["export", "-o", "/nonexistent/x.parquet", URI],
        ["export", f"--output={URI}/x.parquet", P],
        ["verify-index", "--spark", "--report", URI + "/r", P],
        ["dump", "--files", f"{P}/00000000000000000000.log,{URI}/00000000000000000000.log"],
    ],
)
def test_credentials_in_a_uri_are_refused_and_never_echoed(args: list[str]) -> None:
    p = refused(*args)
    line = _one_error_line(p)
    assert "credentials in a URI are refused" in line and "s3://***@bucket/data" in line
    assert "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE" in line
    assert SECRET.encode() not in p.stdout + p.stderr and b"AKIAIOSFODNN7EXAMPLE" not in p.stdout + p.stderr
    assert p.stdout == b""


@pytest.mark.parametrize(
    "uri, why",
    [
        ("s3://", "s3://: malformed URI: no bucket after s3://"),
        ("gs://", "gs://: malformed URI: no bucket after gs://"),
        ("s3a://", "s3a://: malformed URI: no bucket after s3a://"),
        ("s3://bucket//data", "s3://bucket//data: malformed URI: an empty path component (//)"),
        ("gs://bucket/a//b/", "malformed URI: an empty path component"),
    ],
)
@pytest.mark.parametrize("command", [["verify-index"], ["dump"], ["lookup-offset", "0"]])
def test_a_malformed_uri_is_one_line(uri: str, why: str, command: list[str]) -> None:
    assert why in _one_error_line(refused(*command, uri))


def test_an_azure_uri_without_credentials_is_one_line() -> None:
    """pyarrow raises a bare ArrowException there (not an OSError): it was a traceback."""
    line = _one_error_line(kseg("verify-index", "abfs://container@account.dfs.core.windows.net/data"))
    assert line.startswith("kseg: error: abfs://container@account.dfs.core.windows.net/data: cannot read: ")


def test_an_unreachable_gcs_ends_within_the_timeout() -> None:
    """gs://x/y with no GCS reachable printed nothing for over 600 s (pyarrow's default retries)."""
    start = time.monotonic()
    p = kseg("verify-index", "gs://x/y", timeout=120)
    took = time.monotonic() - start
    line = _one_error_line(p)
    assert line.startswith("kseg: error: gs://x/y: cannot read: "), line
    assert took < 60, took


def test_an_s3_endpoint_that_never_answers_ends_within_the_timeouts() -> None:
    """A loopback server that accepts connections and never replies: 3 attempts of 1 s each, then one line."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(50)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    start = time.monotonic()
    try:
        p = kseg(
            "verify-index",
            "s3://bucket/data",
            timeout=120,
            AWS_ACCESS_KEY_ID="x",
            AWS_SECRET_ACCESS_KEY="y",
            AWS_ENDPOINT_URL=f"http://127.0.0.1:{server.getsockname()[1]}",
        )
    finally:
        server.close()
        for conn in held:
            conn.close()
    took = time.monotonic() - start
    line = _one_error_line(p)
    assert line.startswith("kseg: error: s3://bucket/data: cannot read: ") and "Timeout" in line, line
    assert took < 60, took


def test_a_bad_timeout_variable_is_one_line() -> None:
    line = _one_error_line(kseg("verify-index", "s3://bucket/data", KSEG_NETWORK_TIMEOUT="soon"))
    assert line == "kseg: error: KSEG_NETWORK_TIMEOUT='soon': give seconds, more than 0 and at most 86400"


def test_check_uri_and_redact() -> None:
    with pytest.raises(InputError) as info:
        check_uri("gs://user@bucket/x")
    assert info.value.path == "gs://***@bucket/x"
    check_uri("abfs://container@account.dfs.core.windows.net/x")  # a container, not a secret
    check_uri("hdfs:///data/orders-0")  # the default namenode
    check_uri("s3://bucket/data/")
    assert redact("abfss://user:pw@host/p") == "abfss://***@host/p"
    assert redact("abfs://container@account/p") == "abfs://container@account/p"
