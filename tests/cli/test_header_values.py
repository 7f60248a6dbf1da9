"""Header values in JSON record rows (issue 20; apache/kafka#18910): ``headers: [{"key", "value"}]`` in
``dump``, the lookups and export, read back to the bytes Kafka wrote -- every header of every v2 corpus
segment, checked against kafka-python's independent parse (null values, empty keys, commas, non-ASCII
keys, a value that is not UTF-8)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.conftest import CORPUS_DATA, run_cli

kafka_record = pytest.importorskip("kafka.record", reason="kafka-python is a test extra")

DAMAGED = {"corrupt-compressed-0", "corrupt-garbage-tail-0", "corrupt-truncated-0", "corrupt-crc-0"}
SEGMENTS = sorted(
    p
    for p in CORPUS_DATA.glob("*/*.log")
    if p.parent.name not in DAMAGED
    and p.stat().st_size > 0
    and not p.parent.name.startswith("v0-")
    and not p.parent.name.startswith("v1-")
)


def _theirs(path: Path) -> dict[int, list[tuple[str, bytes | None]]]:
    memory = kafka_record.MemoryRecords(path.read_bytes())
    out = {}
    while (batch := memory.next_batch()) is not None:
        for r in batch:
            out[r.offset] = [(k, v) for k, v in (r.headers or [])]
    return out


def _bytes(h: dict, decode=lambda text: text.encode("utf-8")) -> bytes | None:
    if h["value"] is None:
        return None
    return base64.b64decode(h["value"]) if h.get("base64") else decode(h["value"])


def _records(args: list[str]) -> list[dict]:
    r = run_cli(args)
    assert r.exit_code == 0, r.errtext
    return [row for row in map(json.loads, r.text.splitlines()) if row["type"] == "record"]


def test_the_corpus_has_every_header_case() -> None:
    headers = [h for p in SEGMENTS for hs in _theirs(p).values() for h in hs]
    keys = {k for k, _ in headers}
    assert {"", "with,comma", "ünicöde"} <= keys
    assert any(v is None for _, v in headers)
    assert any(v is not None and not _is_utf8(v) for _, v in headers)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize("path", SEGMENTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_dump_json_header_values_read_back_to_kafkas_bytes(path: Path) -> None:
    theirs = _theirs(path)
    rows = _records(["dump", "--deep-iteration", "--format", "json", str(path)])
    assert {row["offset"] for row in rows} == set(theirs)
    for row in rows:
        want = theirs[row["offset"]]
        assert [(h["key"], _bytes(h)) for h in row["headers"]] == want, row
        assert row["headerKeys"] == [k for k, _ in want]  # kept for compatibility
        for h in row["headers"]:  # text when the string decoder represents it, else base64 (and said)
            assert h.get("base64", False) == (h["value"] is not None and not _is_utf8(_bytes(h)))


def test_the_value_decoder_decodes_header_values() -> None:
    path = CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log"
    theirs = _theirs(path)
    rows = _records(["dump", "--deep-iteration", "--format", "json", "--value-decoder", "hex", str(path)])
    with_headers = [row for row in rows if row["headers"]]
    assert len(with_headers) >= 3
    for row in with_headers:
        assert [(h["key"], _bytes(h, bytes.fromhex)) for h in row["headers"]] == theirs[row["offset"]]
        assert not any(h.get("base64") for h in row["headers"])  # hex represents every value


def test_lookups_carry_header_values() -> None:
    part = CORPUS_DATA / "plain-v2-0"
    theirs = _theirs(part / "00000000000000000000.log")
    for offset in (9, 10, 11):
        r = run_cli(["lookup-offset", "--format", "json", str(offset), str(part)])
        record = json.loads(r.text)["record"]
        assert [(h["key"], _bytes(h)) for h in record["headers"]] == theirs[offset]
    r = run_cli(["lookup-time", "--format", "json", "1730000000010", str(part)])
    record = json.loads(r.text)["record"]
    assert record["offset"] == 10 and [(h["key"], _bytes(h)) for h in record["headers"]] == theirs[10]


def test_export_keeps_header_bytes_and_decodes_them_with_a_decoder(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    part = CORPUS_DATA / "plain-v2-0"
    theirs = _theirs(part / "00000000000000000000.log")
    out = tmp_path / "out.parquet"
    r = run_cli(["export", "-q", "--value-decoder", "string", str(part), "-o", str(out)])
    assert r.exit_code == 0, r.errtext
    rows = {row["offset"]: row for row in pq.read_table(out).to_pylist()}
    for offset, want in theirs.items():
        row = rows[offset]
        assert [(h["key"], h["value"]) for h in row["headers"]] == want
        assert [(h["key"], h["value"]) for h in row["headersText"]] == [
            (k, v.decode("utf-8") if v is not None and _is_utf8(v) else None) for k, v in want
        ]
