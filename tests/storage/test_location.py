"""Local paths and URIs through one interface (kseg.storage.location), against a real S3 server."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kseg.errors import InputError
from kseg.storage import files, location
from kseg.storage.records import FileRecords
from kseg.storage.stores.discover import store_of
from kseg.storage.stores.find import discover
from tests.conftest import CORPUS_DATA
from tests.s3server import PARTITIONS
from tests.stores import local

LOG = "plain-v2-0/00000000000000000000.log"


@pytest.mark.parametrize(
    "path, uri",
    [("/a/b", False), ("s3://b/k", True), ("S3A://b/k", True), ("file:///a", True), ("c:/x", False), ("gs://b", True)],
)
def test_is_uri(path: str, uri: bool) -> None:
    assert location.is_uri(path) is uri


def test_scheme_aliases_and_parts() -> None:
    assert location.scheme("s3a://b/k") == "s3" == location.scheme("s3://b/k")
    assert location.scheme("abfss://c@a.dfs.core.windows.net/p") == "abfs"
    assert location.dirname("s3://bucket/a/b/c.log") == "s3://bucket/a/b"
    assert location.dirname("s3://bucket/c.log") == "s3://bucket"
    assert location.basename("s3://bucket/a/orders-0/") == "orders-0"
    assert location.join("s3://bucket/a/", "x.log") == "s3://bucket/a/x.log"
    assert location.local_path("file:///tmp/x") == "/tmp/x"
    assert not location.is_remote("file:///tmp/x")


def test_file_uri_reads_like_the_path() -> None:
    path = CORPUS_DATA / LOG
    with FileRecords("file://" + str(path), store=local()) as a, FileRecords(str(path), store=local()) as b:
        assert [x.base_offset for x in a.batches()] == [x.base_offset for x in b.batches()]


def test_remote_file_ranged_reads_match_the_local_bytes(s3) -> None:
    data = (CORPUS_DATA / LOG).read_bytes()
    with location.open_input(s3.uri(f"brokers/b1/data/{LOG}")) as f:
        assert f.size == len(data)
        f.seek(1000)
        buf = bytearray(300)
        assert f.readinto(memoryview(buf)) == 300
        assert bytes(buf) == data[1000:1300]
        f.seek(len(data) - 10)
        assert f.read() == data[-10:]
        assert f.read() == b""


def test_reader_on_s3_gives_the_local_batches(s3) -> None:
    with (
        FileRecords(
            s3.uri(f"brokers/b1/data/{LOG}"), window=1 << 16, store=store_of(s3.uri(f"brokers/b1/data/{LOG}"))
        ) as remote,
        FileRecords(str(CORPUS_DATA / LOG), store=store_of(str(CORPUS_DATA))) as local,
    ):
        got = [(b.position, b.base_offset, b.is_valid()) for b in remote.batches()]
        assert got == [(b.position, b.base_offset, b.is_valid()) for b in local.batches()]
        assert len(got) > 10


def test_list_tree_is_one_recursive_listing(s3) -> None:
    entries = location.list_tree(s3.uri("brokers/b1/data"))
    local = sorted(p for name in PARTITIONS for p in (CORPUS_DATA / name).iterdir())
    assert len(entries) == len(local)
    assert all(e.path.startswith(s3.uri("brokers/b1/data/")) for e in entries)
    sizes = {e.path.rsplit("/", 2)[-2] + "/" + e.path.rsplit("/", 1)[-1]: e.size for e in entries}
    assert sizes == {f"{p.parent.name}/{p.name}": p.stat().st_size for p in local}


def test_discover_on_s3_matches_the_local_tree(s3, local_brokers) -> None:
    remote = discover([s3.uri("brokers")], [])
    here = discover([str(local_brokers / "b1" / "data"), str(local_brokers / "b2" / "data")], [])
    assert [(p.name, [s.name for s in p.segments]) for p in remote] == [
        (p.name, [s.name for s in p.segments]) for p in here
    ]
    assert {location.dirname(p.path) for p in remote} == {s3.uri("brokers/b1/data"), s3.uri("brokers/b2/data")}
    assert all(
        s.log_bytes == (local_brokers / "b1" / "data" / p.name / (s.name + ".log")).stat().st_size
        for p in remote
        for s in p.segments
    )


def test_discover_one_remote_segment_file(s3) -> None:
    parts = discover([s3.uri(f"brokers/b2/data/{LOG}")], [])
    assert [(p.name, [(s.name, bool(s.index), bool(s.timeindex)) for s in p.segments]) for p in parts] == [
        ("plain-v2-0", [("00000000000000000000", True, True)])
    ]


def test_missing_and_empty_prefixes_are_errors(s3) -> None:
    with pytest.raises(InputError, match="no such file or directory"):
        discover([s3.uri("nothing-here")], [])
    s3.client.put_object(Bucket="kseg-test", Key="notes/readme.txt", Body=b"hello")
    with pytest.raises(InputError) as info:
        discover([s3.uri("notes")], [])
    assert "no partition directories or segment files found" in info.value.message
    assert "log root" in info.value.hint
    with pytest.raises(InputError, match="no such file"):
        files.open_readonly(
            s3.uri("brokers/b1/data/plain-v2-0/99999999999999999999.log"),
            store=store_of(s3.uri("brokers/b1/data/plain-v2-0/99999999999999999999.log")),
        )


def test_unreachable_store_is_one_error(monkeypatch) -> None:
    pytest.importorskip("pyarrow")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    with pytest.raises(InputError) as info:
        discover(["s3://kseg-none/x"], [])
    assert info.value.path == "s3://kseg-none/x"


def test_without_pyarrow_a_uri_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['pyarrow'] = None; sys.modules['pyarrow.fs'] = None\n"
        "from kseg.cli.main import main; sys.argv = ['kseg', 'verify-index', 's3://b/p']; main()"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "pyarrow is not installed" in p.stderr and "kseg[remote]" in p.stderr
    assert "Traceback" not in p.stderr
