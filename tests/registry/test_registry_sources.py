"""``--schemas`` besides the ``_schemas`` topic: a directory of schema files, a registry URL (a real
HTTP server on loopback answering the registry's REST API for schemas written by confluent-kafka's
own serializers).  Each must decode what the ``_schemas`` replay decodes."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

import pytest

pytest.importorskip("confluent_kafka.schema_registry.avro")
pytest.importorskip("fastavro")
pytest.importorskip("grpc_tools")
pq = pytest.importorskip("pyarrow.parquet")

from tests.conftest import assert_no_traceback, run_cli  # noqa: E402
from tests.registry.typed_build import build  # noqa: E402

SUFFIX = {"AVRO": "avsc", "PROTOBUF": "proto", "JSON": "json"}
TOPICS = ("shop", "parcels", "people")


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("sources")
    answers: list[dict] = []
    build(str(root), answers)
    return root, answers


def typed(root, tmp_path, topic: str, *schemas: str) -> list[dict]:
    out = tmp_path / f"{topic}-{len(list(tmp_path.iterdir()))}.parquet"
    r = run_cli(["export", "--value-decoder", "registry", str(root), "--topic", topic, "-o", str(out), *schemas])
    assert_no_traceback(r)
    assert r.exit_code == 0, r.errtext
    cols = ["offset", "valueText", "valueDecoded", "valueSchemaId", "valueDecodeError"]
    return pq.read_table(out).select(cols).to_pylist()


def dumped(root, topic: str, *schemas: str) -> list[dict]:
    log = str(root / f"{topic}-0" / "00000000000000000000.log")
    r = run_cli(["dump", "--value-decoder", "registry", "--format", "json", log, *schemas])
    assert r.exit_code == 0, r.errtext
    return [row for row in map(json.loads, r.text.splitlines()) if row["type"] == "record"]


def test_a_directory_of_schema_files_decodes_as_the_topic(tree, tmp_path) -> None:
    root, answers = tree
    files = tmp_path / "files"
    files.mkdir()
    for a in answers:
        name = f"{a['subject']}-{a['version']}-{a['id']}.{SUFFIX[a.get('schemaType', 'AVRO')]}"
        (files / name).write_text(a["schema"], encoding="utf-8")
    rest = tmp_path / "rest"
    rest.mkdir()
    (rest / "all.json").write_text(json.dumps(answers), encoding="utf-8")  # a saved GET /schemas answer
    out = tmp_path / "out"
    out.mkdir()
    for topic in TOPICS:
        want = typed(root, out, topic)
        assert typed(root, out, topic, "--schemas", str(files)) == want, topic
        assert typed(root, out, topic, "--schemas", str(rest)) == want, topic
        assert dumped(root, topic, "--schemas", str(files)) == dumped(root, topic), topic


def test_a_directory_of_schema_files_on_an_object_store(tree, tmp_path, s3) -> None:
    """``--schemas s3://bucket/schemas/``: listed and read through the store chosen for that prefix, the same
    rows as the local directory (both kinds of file, and a .txt beside them left alone)."""
    root, answers = tree
    files = tmp_path / "files"
    files.mkdir()
    for a in answers:
        name = f"{a['subject']}-{a['version']}-{a['id']}.{SUFFIX[a.get('schemaType', 'AVRO')]}"
        (files / name).write_text(a["schema"], encoding="utf-8")
    (files / "README.txt").write_text("saved from the registry", encoding="utf-8")
    s3.upload_tree(files, "schemadir/named")
    rest = tmp_path / "rest"
    rest.mkdir()
    (rest / "all.json").write_text(json.dumps(answers), encoding="utf-8")
    s3.upload_tree(rest, "schemadir/rest")
    out = tmp_path / "out"
    out.mkdir()
    for topic in ("shop", "parcels"):
        want = dumped(root, topic)
        assert dumped(root, topic, "--schemas", s3.uri("schemadir/named/")) == want, topic
        assert dumped(root, topic, "--schemas", s3.uri("schemadir/rest")) == want, topic
    assert typed(root, out, "people", "--schemas", s3.uri("schemadir/rest")) == typed(root, out, "people")
    from tests.s3server import requests_logged

    with requests_logged() as asked:
        dumped(root, "people", "--schemas", s3.uri("schemadir/named"))
    assert asked.counts()["GET"] == len(answers)  # each schema file read once, in one request
    log = str(root / "shop-0" / "00000000000000000000.log")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "shop-1-1.avsc").write_bytes(b"\xff\xfe")
    s3.upload_tree(tmp_path / "bad", "schemadir/bad")
    r = run_cli(["dump", "--value-decoder", "registry", log, "--schemas", s3.uri("schemadir/bad")])
    assert_no_traceback(r)
    assert r.exit_code == 2 and "not UTF-8" in r.errtext and "schemadir/bad/shop-1-1.avsc" in r.errtext, r.errtext
    r = run_cli(["dump", "--value-decoder", "registry", log, "--schemas", s3.uri("schemadir/none")])
    assert r.exit_code == 2 and "no such prefix" in r.errtext, r.errtext


def test_a_schema_file_named_otherwise_is_refused_in_one_line(tree, tmp_path) -> None:
    root, _ = tree
    (tmp_path / "shop.avsc").write_text('"string"', encoding="utf-8")
    r = run_cli(["dump", "--value-decoder", "registry", str(root / "shop-0" / "00000000000000000000.log"),
                 "--schemas", str(tmp_path)])  # fmt: skip
    assert_no_traceback(r)
    assert r.exit_code == 2 and "<subject>-<version>-<id>" in r.errtext and "shop.avsc" in r.errtext


class Registry(BaseHTTPRequestHandler):
    """The registry's REST answers (GETs only) for ``answers``; ``fail``: ids answered with HTTP 500."""

    answers: list[dict] = []
    fail: set[int] = set()
    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = urlsplit(self.path).path
        self.asked.append(path)
        parts = [unquote(p) for p in path.strip("/").split("/")]
        body: object = None
        if parts == ["schemas", "types"]:
            body = ["JSON", "PROTOBUF", "AVRO"]
        elif parts[:2] == ["schemas", "ids"] and len(parts) in (3, 4):
            if int(parts[2]) in self.fail:
                self.send_error(500, "Internal Server Error")
                return
            found = [a for a in self.answers if a["id"] == int(parts[2])]
            if found and len(parts) == 4:
                body = [{"subject": a["subject"], "version": a["version"]} for a in found]
            elif found:
                a = found[0]
                body = {k: a[k] for k in ("schema", "schemaType", "references") if k in a}
        elif parts[0] == "subjects" and len(parts) == 4:
            versions = [a for a in self.answers if a["subject"] == parts[1]]
            if versions and parts[3] == "latest":
                body = max(versions, key=lambda a: a["version"])
            else:
                body = next((a for a in versions if str(a["version"]) == parts[3]), None)
        if body is None:
            data = json.dumps({"error_code": 40403, "message": "Schema not found"}).encode()
            self.send_response(404)
        else:
            data = json.dumps(body).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def registry(tree):
    _, answers = tree
    Registry.answers, Registry.fail, Registry.asked = answers, set(), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_registry_url_decodes_as_the_topic_each_id_asked_once(tree, registry, tmp_path) -> None:
    root, _ = tree
    for topic in TOPICS:
        Registry.asked.clear()
        assert typed(root, tmp_path, topic, "--schemas", registry) == typed(root, tmp_path, topic), topic
        by_id = [p for p in Registry.asked if p.startswith("/schemas/ids/") and not p.endswith("/versions")]
        assert len(by_id) == len(set(by_id)) > 0  # cached for the run
    assert dumped(root, "shop", "--schemas", registry) == dumped(root, "shop")


def test_a_registry_url_that_fails(tree, registry, tmp_path) -> None:
    root, _ = tree
    log = str(root / "shop-0" / "00000000000000000000.log")
    r = run_cli(["dump", "--value-decoder", "registry", log, "--schemas", "http://127.0.0.1:9/"])
    assert_no_traceback(r)
    assert r.exit_code == 2 and "--schemas" in r.errtext and len(r.errtext.strip().splitlines()) == 1
    Registry.fail = {2}  # version 2's id: those records fall back, said per record; the run goes on
    rows = dumped(root, "shop", "--schemas", registry)
    failed = [row for row in rows if "payloadDecodeError" in row]
    assert [row["offset"] for row in failed] == [2, 3] or [row["offset"] for row in failed] == [2, 3, 4]
    assert all("HTTP 500" in row["payloadDecodeError"] for row in failed if row["offset"] in (2, 3))


def test_validate_makes_a_payload_not_matching_its_schema_a_problem(tree) -> None:
    root, _ = tree
    log = str(root / "people-0" / "00000000000000000000.log")
    plain = run_cli(["dump", "--value-decoder", "registry", "--format", "json", log])
    assert plain.exit_code == 0  # as Kafka's decoders: a payload is printed, whatever it holds
    r = run_cli(["dump", "--value-decoder", "registry", "--format", "json", "--validate", log])
    assert_no_traceback(r)
    assert r.exit_code == 1, r.errtext
    rows = [row for row in map(json.loads, r.text.splitlines()) if row["type"] == "record"]
    assert [row.get("payloadInvalid") for row in rows] == [None, None, "$.name: 5 is not of type 'string'"]
    assert "1 payload not matching its schema: $.name: 5 is not of type 'string'" in r.errtext
    assert rows[2]["payload"] == {"name": 5}  # still printed, decoded
    shop = str(root / "shop-0" / "00000000000000000000.log")
    r = run_cli(["dump", "--value-decoder", "registry", "--validate", shop])
    assert r.exit_code == 1 and "runs past the end" in r.errtext  # a datum that does not decode: a problem too
    r = run_cli(["dump", "--validate", shop])
    assert r.exit_code == 2 and "--validate is for" in r.errtext


def test_validate_on_the_lookups_as_on_dump(tree) -> None:
    root, _ = tree
    part = str(root / "people-0")
    for offset, invalid in ((0, None), (2, "$.name: 5 is not of type 'string'")):
        args = ["lookup-offset", str(offset), part, "--value-decoder", "registry", "--format", "json"]
        plain = run_cli(args)
        assert plain.exit_code == 0, plain.errtext  # found: the payload printed, whatever it holds
        r = run_cli([*args, "--validate"])
        assert_no_traceback(r)
        assert r.exit_code == (0 if invalid is None else 1), r.errtext
        (row,) = [row["record"] for row in map(json.loads, r.text.splitlines()) if row["type"] == "offset_lookup"]
        assert row.get("payloadInvalid") == invalid and "payloadDecodeError" not in row
        if invalid is not None:
            assert row["payload"] == {"name": 5}  # still printed, decoded
            assert f"1 payload not matching its schema: {invalid}" in r.errtext
    r = run_cli(["lookup-time", "earliest", str(root / "shop-0"), "--value-decoder", "registry", "--validate"])
    assert r.exit_code == 0, r.errtext  # the first record decodes: nothing to say
    r = run_cli(["lookup-offset", "0", part, "--validate"])
    assert r.exit_code == 2 and "--validate is for" in r.errtext


def test_validate_on_export_marks_the_rows_and_exits_1(tree, tmp_path) -> None:
    root, _ = tree
    out = tmp_path / "people.parquet"
    args = ["export", "--value-decoder", "registry", str(root), "--topic", "people", "-o", str(out)]
    r = run_cli([*args, "--validate"])
    assert_no_traceback(r)
    assert r.exit_code == 1, r.errtext
    assert "1 payload not matching its schema: $.name: 5 is not of type 'string'" in r.errtext
    table = pq.read_table(out)  # written all the same: every record, the bad one marked
    assert table.schema.field("valueInvalid").type == "string"
    rows = table.select(["offset", "valueDecoded", "valueInvalid"]).to_pylist()
    assert [row["valueInvalid"] for row in rows[:3]] == [None, None, "$.name: 5 is not of type 'string'"]
    r = run_cli([*args, "--force"])
    assert r.exit_code == 0, r.errtext
    assert "valueInvalid" not in pq.read_table(out).schema.names  # the column only with --validate
