"""The settings kseg gives Spark when it starts it (kseg.spark.session): no JVM needed."""

from __future__ import annotations

import socket

from kseg.spark.session import driver_host, settings


def test_a_standalone_master_gets_the_address_on_the_route_to_it(monkeypatch) -> None:
    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    monkeypatch.delenv("SPARK_LOCAL_HOSTNAME", raising=False)
    assert driver_host("spark://127.0.0.1:7077") == "127.0.0.1"
    assert driver_host("spark://127.0.0.1:7077,127.0.0.2:7077") == "127.0.0.1"
    assert driver_host("spark://no-port") is None
    pairs = settings("spark://127.0.0.1:7077", [])
    assert ("spark.driver.host", "127.0.0.1") in pairs
    given = dict(settings("spark://127.0.0.1:7077", ["spark.driver.host=10.1.2.3"]))  # the operator's wins
    assert given["spark.driver.host"] == "10.1.2.3"


def test_no_default_where_the_operator_chose_or_spark_decides(monkeypatch) -> None:
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    assert "spark.driver.host" not in dict(settings("spark://127.0.0.1:7077", []))
    monkeypatch.delenv("SPARK_LOCAL_IP")
    assert "spark.driver.host" not in dict(settings("yarn", []))
    assert dict(settings("local[2]", []))["spark.driver.host"] == "127.0.0.1"


def test_an_unresolvable_master_leaves_it_to_spark(monkeypatch) -> None:
    def fail(*_args, **_kwargs):
        raise socket.gaierror("no such host")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    assert driver_host("spark://master.invalid:7077") is None
