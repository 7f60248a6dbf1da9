"""``kseg grep``, the real command on real files: every filter and combinations of them against the list of
what was written (an independent answer, not kseg's reader), Kafka's partitioner pruning shown by sibling
partitions that may not be opened, the reads an offset range skips, the text lines against ``kseg dump``'s,
counts, ``--limit``, corruption never read as "no match", usage errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from pathlib import Path

import pytest

from kseg.ops.grep.partitioner import partition_for_key
from tests.cli.grep_data import PARTITIONS, T0, TOPIC, Written, write_topic
from tests.conftest import CORPUS_DATA, run_cli, run_subprocess


@pytest.fixture(scope="module")
def topic(tmp_path_factory) -> tuple[Path, list[Written]]:
    root = tmp_path_factory.mktemp("grep") / "data"
    return root, write_topic(root)


def _rows(text: str, kind: str = "record") -> list[dict]:
    return [row for row in map(json.loads, text.splitlines()) if row["type"] == kind]


def _found(args: list[str], root: Path) -> tuple[int, set[tuple[int, int]], str]:
    r = run_cli(["grep", "--format", "json", *args, str(root)])
    assert "Traceback" not in r.errtext, r.errtext
    return r.exit_code, {(row["partitionId"], row["offset"]) for row in _rows(r.text)}, r.errtext


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", "replace")


def _header(w: Written, name: str):
    return [v for k, v in w.headers if k == name]


T = T0 + 200 * 1000  # the 200th record's time
CASES = {
    "key": (["--key", "order-10"], lambda w: w.key == b"order-10"),
    "key-hex": (["--key", "hex:fffe2d62696e2d3332"], lambda w: w.key == b"\xff\xfe-bin-32"),
    "key-regex": (
        ["--key-regex", r"^order-1\d$"],
        lambda w: w.key is not None and re.search(r"^order-1\d$", _text(w.key)),
    ),
    "key-regex-not-utf8": (
        ["--key-regex", "bin-3"],  # \xff\xfe-bin-32: the regex searches Kafka's string decoding of the key
        lambda w: w.key is not None and "bin-3" in _text(w.key),
    ),
    "value-regex": (
        ["--value-regex", "color (red|blue) qty 3"],
        lambda w: w.value is not None and re.search("color (red|blue) qty 3", w.value.decode()),
    ),
    "ignore-case": (["-i", "--value-regex", "AMBER"], lambda w: w.value is not None and b"amber" in w.value),
    "header": (["--header", "trace=t-3"], lambda w: b"t-3" in _header(w, "trace")),
    "header-name": (["--header", "flag"], lambda w: bool(_header(w, "flag"))),
    "header-hex": (["--header", "tenant=hex:0001"], lambda w: b"\x00\x01" in _header(w, "tenant")),
    "header-regex": (["--header-regex", "tenant=^ac"], lambda w: b"acme" in _header(w, "tenant")),
    "time": (["--from-time", str(T), "--to-time", str(T + 50_000)], lambda w: T <= w.timestamp < T + 50_000),
    "offsets": (["--from-offset", "40", "--to-offset", "44"], lambda w: 40 <= w.offset <= 44),
    "producer": (["--producer-id", "4002"], lambda w: w.producer_id == 4002),
    "transactional": (["--transactional"], lambda w: w.transactional),
    "tombstones": (["--tombstones"], lambda w: w.value is None),
    "value-and-header-and-time": (
        ["--value-regex", "red", "--header", "trace=t-1", "--from-time", str(T)],
        lambda w: w.value is not None and b"red" in w.value and b"t-1" in _header(w, "trace") and w.timestamp >= T,
    ),
    "transactional-tombstones-key-regex": (
        ["--transactional", "--tombstones", "--key-regex", "3$"],
        lambda w: w.transactional and w.value is None and w.key is not None and _text(w.key).endswith("3"),
    ),
    "key-and-offsets": (
        ["--key", "order-10", "--from-offset", "0", "--to-offset", "3"],
        lambda w: w.key == b"order-10" and w.offset <= 3,
    ),
    "decoded-value": (
        ["--value-decoder", "hex", "--value-regex", "^6f7264657220"],  # "order " in hex
        lambda w: w.value is not None and w.value.startswith(b"order "),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_filter_finds_what_was_written(topic, case: str) -> None:
    root, written = topic
    args, holds = CASES[case]
    expected = {(w.partition, w.offset) for w in written if not w.control and holds(w)}
    code, found, err = _found(args, root)
    assert found == expected, (sorted(found - expected)[:5], sorted(expected - found)[:5], err)
    assert code == (0 if expected else 1), err


def test_control_records_only_with_control(topic) -> None:
    root, written = topic
    expected = {(w.partition, w.offset) for w in written if w.control and w.producer_id == 4001}
    code, found, err = _found(["--control", "--producer-id", "4001"], root)
    assert code == 0 and found == expected, err
    r = run_cli(["grep", "--control", "--to-offset", "8", str(root / f"{TOPIC}-1")])
    assert " endTxnMarker: COMMIT coordinatorEpoch: 3" in r.text, r.text


def test_the_key_is_searched_in_its_partition_only(topic, monkeypatch) -> None:
    """With --key only the partition Kafka's partitioner chose is opened: opening any other partition's
    ``.log`` fails as an unreadable file would, and the run still finds the key, exit 0."""
    from kseg.storage import records

    root, written = topic
    key = b"order-123"
    target = partition_for_key(key, PARTITIONS)
    real = records.open_for_read
    opened = []

    def only_the_keys_partition(path: str, *store):
        opened.append(path)
        if f"{TOPIC}-{target}{os.sep}" not in str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *store)

    monkeypatch.setattr(records, "open_for_read", only_the_keys_partition)
    r = run_cli(["grep", "--format", "json", "--key", "order-123", str(root)])
    assert r.exit_code == 0, r.errtext
    assert [(row["partitionId"], row["offset"]) for row in _rows(r.text)] == [
        (w.partition, w.offset) for w in written if w.key == key
    ]
    assert f"{TOPIC}: only partition {target} of the topic read" in r.errtext and "6 partitions" in r.errtext
    assert opened and all(f"{TOPIC}-{target}" in str(p) for p in opened)
    monkeypatch.setattr(records, "open_for_read", real)
    r = run_cli(["grep", "--no-prune", "--count", "--key", "order-123", str(root)])  # every partition read
    assert r.exit_code == 0 and len(r.text.splitlines()) == PARTITIONS, r.text


def test_partitions_given_and_the_keys_partition_absent(topic) -> None:
    root, _ = topic
    key = b"order-10"
    other = partition_for_key(key, 5)
    code, found, err = _found(["--key", "order-10", "--partitions", "5"], root)
    assert f"only partition {other} of the topic read" in err and "--partitions" in err
    assert all(p == other for p, _ in found)
    far = next(n for n in range(7, 60) if partition_for_key(key, n) >= PARTITIONS)
    r = run_cli(["grep", "--key", "order-10", "--partitions", str(far), str(root)])
    assert r.exit_code == 1
    assert f"partition {partition_for_key(key, far)} of the topic, the key's, is not in the inputs" in r.errtext


def test_a_broker_holding_some_partitions_is_read_whole(topic, tmp_path) -> None:
    """Partitions 1 and 3 only: the partition count is not known, so nothing is pruned (and it is said)."""
    root, written = topic
    for p in (1, 3):
        shutil.copytree(root / f"{TOPIC}-{p}", tmp_path / f"{TOPIC}-{p}")
    key = next(w.key for w in written if w.partition == 3 and w.key and w.key.startswith(b"order"))
    code, found, err = _found(["--key", key.decode()], tmp_path)
    assert code == 0 and {p for p, _ in found} == {3}
    assert "partition count is not known" in err


def test_text_lines_are_dumps_record_lines_with_segment_and_position(topic) -> None:
    root, _ = topic
    part = root / f"{TOPIC}-2"
    r = run_cli(["grep", "--value-regex", "green", "--header", "tenant", str(part)])
    assert r.exit_code == 0, r.errtext
    lines = r.text.splitlines()
    assert lines
    for line in lines:
        m = re.match(r"(\S+\.log) position: (\d+) (\| offset: (\d+) .*)$", line)
        assert m, line
        dump = run_cli(["dump", "--print-data-log", m.group(1)]).text.splitlines()
        assert m.group(3) in dump, line
        batch = [d for d in dump[: dump.index(m.group(3))] if d.startswith("baseOffset:")][-1]
        assert f" position: {m.group(2)} " in batch


def test_counts_per_partition(topic) -> None:
    root, written = topic
    r = run_cli(["grep", "--count", "--tombstones", str(root)])
    assert r.exit_code == 0
    expected = [sum(1 for w in written if w.partition == p and w.value is None and not w.control) for p in range(6)]
    assert r.text.splitlines() == [f"{root}/{TOPIC}-{p}: {n} match{'es' * (n != 1)}" for p, n in enumerate(expected)]
    r = run_cli(["grep", "--count", "--tombstones", "--format", "json", str(root)])
    assert [row["matches"] for row in _rows(r.text, "count")] == expected
    assert _rows(r.text, "summary")[0]["matches"] == sum(expected)


def test_limit_stops_early(topic) -> None:
    root, _ = topic
    r = run_cli(["grep", "--format", "json", "--limit", "3", "--value-regex", "order", str(root)])
    assert r.exit_code == 0 and len(_rows(r.text)) == 3
    assert "stopped at --limit 3" in r.errtext
    assert _rows(r.text, "summary")[0]["limitReached"] is True


def test_an_offset_range_opens_only_the_segments_holding_it(topic, monkeypatch) -> None:
    from kseg.storage import records

    root, _ = topic
    part = root / f"{TOPIC}-0"
    segs = sorted(p.name for p in part.glob("*.log"))
    assert len(segs) >= 4
    third = int(segs[2][:20])
    opened = []
    real = records.open_for_read

    def seen(path, *store):
        opened.append(os.path.basename(str(path)))
        return real(path, *store)

    monkeypatch.setattr(records, "open_for_read", seen)
    r = run_cli(["grep", "--count", "--from-offset", str(third + 1), "--to-offset", str(third + 2), str(part)])
    assert r.exit_code == 0, r.errtext
    assert set(opened) == {segs[2]}, opened


def test_no_match_says_what_was_read(topic) -> None:
    root, _ = topic
    r = run_cli(["grep", "--value-regex", "no such value", str(root)])
    assert r.exit_code == 1 and r.text == ""
    assert re.fullmatch(r"kseg: no match \(6 partitions, \d+ segments read, 0 skipped.*\)\n", r.errtext), r.errtext


def _first_batch_lengths(log: Path) -> list[int]:
    data, pos, starts = log.read_bytes(), 0, []
    while pos + 12 <= len(data):
        starts.append(pos)
        pos += 12 + struct.unpack(">i", data[pos + 8 : pos + 12])[0]
    return starts


def test_corruption_is_said_and_never_no_match(topic, tmp_path) -> None:
    root, written = topic
    part = tmp_path / f"{TOPIC}-4"
    shutil.copytree(root / f"{TOPIC}-4", part)
    log = sorted(part.glob("*.log"))[0]
    second = _first_batch_lengths(log)[1]
    with open(log, "r+b") as f:  # the second batch's length: 5 (below Kafka's minimum)
        f.seek(second + 8)
        f.write(struct.pack(">i", 5))
    key = next(w.key for w in written if w.partition == 4 and w.offset == 20 and w.key)
    r = run_cli(["grep", "--key", f"hex:{key.hex()}", str(part)])
    assert r.exit_code == 1, r.errtext
    assert f"kseg: corrupt: {log}: at byte {second}: corrupt batch: found record size 5" in r.errtext
    assert "kseg: no match in what was read" in r.errtext and "not read past corruption" in r.errtext
    # a CRC mismatch: its records are still searched, the damage said
    shutil.rmtree(part)
    shutil.copytree(root / f"{TOPIC}-4", part)
    data = log.read_bytes()
    at = data.index(b"color ")  # in an uncompressed batch: its records still decode
    with open(log, "r+b") as f:
        f.seek(at)
        f.write(b"colos ")
    r = run_cli(["grep", "--format", "json", "--value-regex", "colos", str(part)])
    assert r.exit_code == 0
    assert len(_rows(r.text)) == 1
    assert [row["kind"] for row in _rows(r.text, "unread")] == ["crc"]
    assert "CRC mismatch" in r.errtext
    # bytes found in no batch (each list of batches skipped at once): the damaged batch is still said
    r = run_cli(["grep", "--format", "json", "--key", "no-such-key", str(part)])
    assert r.exit_code == 1, r.errtext
    assert not _rows(r.text)
    assert [row["kind"] for row in _rows(r.text, "unread")] == ["crc"]
    assert "CRC mismatch" in r.errtext and "kseg: no match (1 partition" in r.errtext


@pytest.mark.parametrize(
    "name", sorted(p.name for p in CORPUS_DATA.iterdir() if p.name.startswith(("v0-", "v1-", "v2-")))
)
def test_every_codec_and_magic_of_the_corpus_agrees_with_dump(name: str) -> None:
    """Kafka's own files (tests/data/corpus): every record grep finds with an open range is the record
    ``kseg dump --print-data-log --format json`` prints, key and payload alike."""
    part = CORPUS_DATA / name
    r = run_cli(["grep", "--format", "json", "--from-offset", "0", str(part)])
    assert r.exit_code == 0, r.errtext
    dumped = []
    for log in sorted(part.glob("*.log")):
        dumped += _rows(run_cli(["dump", "--print-data-log", "--format", "json", str(log)]).text)
    drop = ("topic", "partitionId", "logDir", "partition", "path", "segment", "position")
    assert [{k: v for k, v in row.items() if k not in drop} for row in _rows(r.text)] == dumped


@pytest.mark.parametrize(
    "args,said",
    [
        ([], "say what to look for"),
        (["--key-regex", "("], "--key-regex"),
        (["--key", "hex:zz"], "--key"),
        (["--partitions", "3", "--value-regex", "x"], "--partitions, --metadata and --no-prune are for --key"),
        (["--header-regex", "name-only"], "expected NAME=REGEX"),
        (["--from-offset", "9", "--to-offset", "1"], "--from-offset is after --to-offset"),
    ],
)
def test_usage_errors(topic, args: list[str], said: str) -> None:
    root, _ = topic
    r = run_cli(["grep", *args, str(root)])
    assert r.exit_code == 2 and said in r.errtext, r.errtext
    assert "Traceback" not in r.errtext


@pytest.mark.parametrize(
    "args",
    [
        ["--value-regex", "red qty"],
        ["--format", "json", "--header", "tenant"],
        ["--count", "--tombstones"],
        ["--format", "json", "--limit", "7", "--value-regex", "qty [12]"],
        ["--limit", "2", "--transactional"],
        ["--format", "json", "--control"],
    ],
)
def test_jobs_print_what_one_process_prints(topic, args: list[str]) -> None:
    """``--jobs 2``: partitions searched by two worker processes, printed in the same order, the same
    bytes, the same exit code, ``--limit`` cut at the same match."""
    root, _ = topic
    one = run_subprocess(["grep", "-j", "1", *args, str(root)])
    two = run_subprocess(["grep", "-j", "2", *args, str(root)])
    assert (two.exit_code, two.text, two.errtext) == (one.exit_code, one.text, one.errtext)
    assert one.exit_code == 0 and one.text


def test_jobs_a_partition_that_cannot_be_read(topic, tmp_path) -> None:
    """A worker meeting a FIFO named like a segment: that partition's error line, the others searched,
    exit 2."""
    root, written = topic
    copy = tmp_path / "data"
    shutil.copytree(root, copy)
    log = sorted((copy / f"{TOPIC}-2").glob("*.log"))[0]
    log.unlink()
    os.mkfifo(log)
    r = run_subprocess(["grep", "-j", "2", "--count", "--tombstones", str(copy)])
    assert r.exit_code == 2, r.errtext
    assert f"kseg: error: {log}: " in r.errtext and "not a regular file" in r.errtext
    assert len(r.text.splitlines()) == PARTITIONS - 1


def test_uncompressed_lists_of_batches_lacking_the_bytes_are_skipped_whole(tmp_path) -> None:
    """Uncompressed batches only (a list of the scan skipped at once when the bytes are in none of them):
    every batch holds the keys k0000000..k0000009 once, so a key matches once a batch; a damaged batch
    is still said; an offset range still ends the search."""
    from kseg.testing.bulk import write_bulk_segment

    part = tmp_path / "bulk-0"
    written = write_bulk_segment(part, 2 << 20, records_per_batch=10, value_size=100)
    assert written.batches > 1024  # more than two of the scan's lists
    r = run_cli(["grep", "--count", "--key", "k0000003", str(part)])
    assert (r.exit_code, r.text) == (0, f"{part}: {written.batches} matches\n"), r.errtext
    r = run_cli(["grep", "--count", "--key", "k0000003", "--to-offset", "5004", str(part)])
    assert (r.exit_code, r.text) == (0, f"{part}: 501 matches\n"), r.errtext  # batches 0..500 (5000..5009)
    r = run_cli(["grep", "--key", "k00000031", str(part)])
    assert r.exit_code == 1 and not r.text
    assert "kseg: no match (1 partition, 1 segment read, 0 skipped" in r.errtext
    data = written.log_path.read_bytes()
    size = len(data) // written.batches
    damaged = 700 * size
    at = data.index(b"alpha", damaged) if b"alpha" in data[damaged : damaged + size] else damaged + size - 4
    with open(written.log_path, "r+b") as f:  # a value byte of batch 700: its CRC fails
        f.seek(at)
        f.write(b"A")
    r = run_cli(["grep", "--format", "json", "--key", "k00000031", str(part)])
    assert r.exit_code == 1
    assert [(row["kind"], row["position"]) for row in _rows(r.text, "unread")] == [("crc", damaged)]
    with open(written.log_path, "ab") as f:  # bytes after the last whole batch: said unless reading stopped before
        f.write(b"\0" * 10)
    r = run_cli(["grep", "--format", "json", "--key", "k00000031", "--to-offset", str(written.records - 5), str(part)])
    assert r.exit_code == 1
    assert [row["kind"] for row in _rows(r.text, "unread")] == ["crc"]  # reading stopped in the last batch
    r = run_cli(["grep", "--format", "json", "--key", "k00000031", str(part)])
    assert [row["kind"] for row in _rows(r.text, "unread")] == ["crc", "partial-batch"]
