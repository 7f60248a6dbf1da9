"""One rule for "healthy" (issue 20): ``rebuild-index --check`` and ``verify-index`` agree on every corpus
partition and on every Kafka version's writer (:mod:`tests.ops.verify.kafka_versions`); plain ``rebuild-index``
keeps, with exit 0 and a line saying so, every file ``--check`` calls healthy; an index written at another
``index.interval.bytes`` is ``same (index.interval.bytes ≤ N)``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kseg.testing.segment import SegmentWriter
from kseg.testing.v2 import RecordSpec, build_v2_batch
from tests.cli.test_verify_versions import CASES
from tests.conftest import CORPUS_DATA, run_cli
from tests.ops.verify.kafka_versions import BUILDERS, crashed_active_segment, untrimmed_rolled_segment

PARTITIONS = sorted(p.name for p in CORPUS_DATA.iterdir() if p.is_dir())
VERSION_CASES = [(row, lambda root, b=builder, k=kafka: BUILDERS[b](root, k)) for row, builder, kafka, _ in CASES] + [
    ("crashed active segment, two appends", lambda root: crashed_active_segment(root, "3.6", appends=2)),
    ("untrimmed rolled segment (KAFKA-10207), 2.4", lambda root: untrimmed_rolled_segment(root, "2.4")),
    ("untrimmed rolled segment (KAFKA-10207), 3.6", lambda root: untrimmed_rolled_segment(root, "3.6")),
]
HEALTHY_INDEX = {"same", "older-rule", "absent"}


def _snapshot(directory: Path) -> dict:
    return {p: (directory / p).read_bytes() for p in sorted(os.listdir(directory))}


def _agree(part: Path) -> None:
    v = run_cli(["verify-index", "--format", "json", str(part)])
    rows = [json.loads(line) for line in v.text.splitlines()]
    bad_files = {Path(r["file"]).name for r in rows if r["type"] == "problem"}
    c = run_cli(["rebuild-index", "--check", "--format", "json", str(part)])
    segs = [json.loads(line) for line in c.text.splitlines()][:-1]
    assert c.exit_code == v.exit_code, (v.text, c.text)
    for seg in segs:
        damaged = seg["truncateBytes"] or seg["failure"]
        for f in seg["files"]:
            if f["kind"] == "txnindex" or damaged:
                continue  # a damaged log: verify reports it, and rebuild's every file follows the truncation
            healthy = f["status"] in HEALTHY_INDEX
            assert healthy == (Path(f["file"]).name not in bad_files), (f, sorted(bad_files))


@pytest.mark.parametrize("name", PARTITIONS)
def test_rebuild_check_agrees_with_verify_index_on_the_corpus(name: str) -> None:
    _agree(CORPUS_DATA / name)


@pytest.mark.parametrize("row,build", VERSION_CASES, ids=[c[0] for c in VERSION_CASES])
def test_rebuild_check_agrees_with_verify_index_on_every_version(tmp_path: Path, row: str, build) -> None:
    part = build(tmp_path)
    _agree(part)
    before = _snapshot(part)
    r = run_cli(["rebuild-index", str(part)])  # what --check calls healthy is kept, exit 0, and said
    assert r.exit_code == 0, (r.text, r.errtext)
    assert r.errtext == "" and "not written" not in r.text
    assert _snapshot(part) == before


def test_plain_rebuild_keeps_an_older_rule_time_index_and_says_so(tmp_path: Path) -> None:
    part = BUILDERS["leader_uncompressed"](tmp_path, "2.8")
    before = _snapshot(part)
    r = run_cli(["rebuild-index", str(part)])
    assert r.exit_code == 0 and r.errtext == ""
    assert "00000000000000000000.timeindex: 11 entries: kept: the existing file (11 entries) differs" in r.text
    assert "before Kafka 3.7" in r.text and "--force replaces it with recovery's" in r.text
    assert r.text.splitlines()[-1] == (
        "1 segment; files: 1 unchanged, 1 kept; 1 .txnindex not needed (no aborted transaction)"
    )
    assert _snapshot(part) == before
    f = run_cli(["rebuild-index", "--force", str(part)])
    assert f.exit_code == 0 and "replaced the existing file" in f.text


def _dense(root: Path, interval: int) -> Path:
    """A partition written by a broker with ``index.interval.bytes`` = ``interval`` (an entry per batch
    once more than that many bytes were appended since the last)."""
    d = root / "dense-0"
    w = SegmentWriter(d, 0, index_interval_bytes=interval)
    for b in range(40):
        raw = build_v2_batch(
            [RecordSpec(b"k", b"v" * 60, 1_730_000_000_000 + b * 10 + i) for i in range(2)], base_offset=2 * b
        )
        w.append([raw])
    w.close()
    return d


def test_an_index_written_at_interval_100_is_same_at_the_interval_it_shows(tmp_path: Path) -> None:
    part = _dense(tmp_path, 100)
    batch = 199  # each batch's size: an entry every batch at 100 (the gaps are 199: interval <= 198)
    assert (part / "00000000000000000000.log").stat().st_size == 40 * batch
    r = run_cli(["rebuild-index", "--check", str(part)])
    assert r.exit_code == 0, r.text
    assert (
        "00000000000000000000.index: 39 entries: same (index.interval.bytes ≤ 198): what recovery writes "
        "at that interval (1 entry at the interval given)" in r.text
    )
    assert "00000000000000000000.timeindex: 39 entries: same (index.interval.bytes ≤ 198)" in r.text
    j = run_cli(["rebuild-index", "--check", "--format", "json", str(part)])
    files = json.loads(j.text.splitlines()[0])["files"]
    assert [(f["status"], f["indexIntervalBytesAtMost"]) for f in files[:2]] == [("same", 198), ("same", 198)]
    w = run_cli(["rebuild-index", str(part)])
    assert w.exit_code == 0 and w.text.count("unchanged (index.interval.bytes ≤ 198)") == 2
    exact = run_cli(["rebuild-index", "--check", "--index-interval-bytes", "150", str(part)])
    assert exact.exit_code == 0 and "39 entries: same as the existing file" in exact.text  # no inference needed


def test_a_damaged_dense_index_still_differs(tmp_path: Path) -> None:
    part = _dense(tmp_path, 100)
    index = part / "00000000000000000000.index"
    data = bytearray(index.read_bytes())
    data[8 * 5 + 3] ^= 1  # entry 5's relative offset
    index.write_bytes(bytes(data))
    r = run_cli(["rebuild-index", "--check", str(part)])
    assert r.exit_code == 1 and "index: 1 entry: differs from the existing file (39 entries)" in r.text
    assert run_cli(["verify-index", str(part)]).exit_code == 1


def test_an_index_with_no_entry_due_is_same_at_a_larger_interval(tmp_path: Path) -> None:
    """A broker with index.interval.bytes above the segment's size leaves an empty .index (the time index
    gets the entry a segment gets when it rolls): healthy, as verify-index says."""
    part = _dense(tmp_path, 1 << 30)
    assert (part / "00000000000000000000.index").stat().st_size == 0
    assert run_cli(["verify-index", str(part)]).exit_code == 0
    r = run_cli(["rebuild-index", "--check", str(part)])
    assert r.exit_code == 0, r.text
    last = 39 * 199  # the last batch's position
    assert (
        f"00000000000000000000.index: 0 entries: same (index.interval.bytes ≥ {last}, the last batch's "
        "position: no .index entry due)" in r.text
    )
    files = json.loads(run_cli(["rebuild-index", "--check", "--format", "json", str(part)]).text.splitlines()[0])
    index = files["files"][0]
    assert (index["indexIntervalBytesAtLeast"], index["indexIntervalBytesAtMost"]) == (last, None)
    _agree(part)
