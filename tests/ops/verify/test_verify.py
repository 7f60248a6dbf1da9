"""Segment verification (``kseg.ops.verify.verify``) on the corpus and on generated segments."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.ops.verify.run import verify_all
from kseg.ops.verify.verify import verify_segment
from kseg.storage.partition import scan_partition
from kseg.storage.stores.find import discover
from kseg.testing.writer import RecordSpec, build_v2_batch, write_segment
from tests.conftest import CORPUS_DATA
from tests.stores import local

DAMAGED = {
    "corrupt-crc-0": "crc",
    "corrupt-compressed-0": "crc",
    "corrupt-truncated-0": "trailing-bytes",
    "corrupt-garbage-tail-0": "corrupt-batch",
    "corrupt-index-0": "index-offset",
    "corrupt-timeindex-0": "timeindex-timestamp",
}
PRE_KAFKA_806 = {"follower-v2-0", "v0-none-0", "v1-none-0", "v1-logappendtime-none-0"}


def _results(name: str, strict: bool = False):
    part = scan_partition(str(CORPUS_DATA / name), store=local())
    return [verify_segment(name, seg, strict=strict) for seg in part.segments]


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS_DATA.iterdir() if p.name not in DAMAGED))
def test_clean_corpus_directories_verify_clean(name: str) -> None:
    for res in _results(name):
        assert res.status == "clean", [p.line() for p in res.problems]


@pytest.mark.parametrize("name,kind", sorted(DAMAGED.items()))
def test_each_damaged_case_is_found_and_named(name: str, kind: str) -> None:
    problems = [p for res in _results(name) for p in res.problems]
    assert kind in {p.kind for p in problems}
    assert all(name in p.file for p in problems)


def test_the_damaged_entries_are_named() -> None:
    (p,) = [p for res in _results("corrupt-index-0") for p in res.problems]
    assert (p.entry, p.position, p.expected.split()[0], p.found) == (1, 8, "103", "106")
    kinds = [(p.entry, p.kind) for res in _results("corrupt-timeindex-0") for p in res.problems]
    assert (1, "timeindex-timestamp") in kinds and (2, "timeindex-order") in kinds


@pytest.mark.parametrize("name", sorted(PRE_KAFKA_806))
def test_pre_kafka_806_appends_are_a_note_by_default_and_reported_when_strict(name: str) -> None:
    (res,) = _results(name)
    assert res.status == "clean" and any("KAFKA-806" in n for n in res.notes)
    (strict,) = _results(name, strict=True)
    assert strict.problems and {p.kind for p in strict.problems} <= {"index-mismatch", "timeindex-mismatch"}


def test_preallocated_zero_tail_is_a_note() -> None:
    (res,) = _results("prealloc-index-0")
    assert res.status == "clean"
    assert sum("zero tail" in n for n in res.notes) == 2


def test_index_without_its_log(tmp_path: Path) -> None:
    shutil.copyfile(CORPUS_DATA / "plain-v2-0" / "00000000000000000000.index", tmp_path / "00000000000000000000.index")
    (res,) = [verify_segment("x", s) for s in scan_partition(str(tmp_path), store=local()).segments]
    assert [p.kind for p in res.problems] == ["missing-log"]


@pytest.mark.parametrize("gone", [".index", ".timeindex"])
def test_a_log_without_its_index_is_a_note_and_a_problem_when_strict(tmp_path: Path, gone: str) -> None:
    """Kafka rebuilds a missing .index (and creates an empty .timeindex) on start: the log reads, but a
    copy without it is incomplete -- a note in every mode, never silence; ``missing-index`` with strict."""
    shutil.copytree(CORPUS_DATA / "plain-v2-0", tmp_path / "p-0")
    (tmp_path / "p-0" / f"00000000000000000251{gone}").unlink()
    first, second = (verify_segment("p-0", s) for s in scan_partition(str(tmp_path / "p-0"), store=local()).segments)
    assert first.status == second.status == "clean"
    assert not any("beside the .log" in n for n in first.notes)
    assert [n for n in second.notes if "beside the .log" in n] == [
        f"00000000000000000251{gone}: no {gone} beside the .log ("
        + (
            "Kafka rebuilds it on start (LogLoader recovers the segment)"
            if gone == ".index"
            else "Kafka creates it empty on start (LogSegment.sanityCheck)"
        )
        + "); a copy without it is incomplete"
    ]
    strict = [
        verify_segment("p-0", s, strict=True) for s in scan_partition(str(tmp_path / "p-0"), store=local()).segments
    ]
    assert [(p.kind, p.file, p.found) for r in strict for p in r.problems] == [
        ("missing-index", f"00000000000000000251{gone}", "nothing")
    ]


def test_overlapping_segments(tmp_path: Path) -> None:
    part = tmp_path / "t-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    for suffix in (".log", ".index", ".timeindex"):
        (part / f"00000000000000000251{suffix}").rename(part / f"00000000000000000200{suffix}")
    report = verify_all(discover([str(part)], []), max_message_size=5 << 20)
    kinds = {p.kind for r in report.results for p in r.problems}
    assert "segment-overlap" in kinds and report.exit_code == 1


def _specs(rng_batches: list[int]) -> list[list[RecordSpec]]:
    ts = 1_730_000_000_000
    out = []
    for b, n in enumerate(rng_batches):
        out.append([RecordSpec(f"k{b}".encode(), b"v" * (50 + 7 * i), ts + (b * 7 + i * 3) % 50) for i in range(n)])
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=40),
    st.sampled_from([64, 256, 1000, 4096]),
    st.sampled_from(["none", "gzip", "lz4"]),
    st.data(),
)
def test_generated_segments_verify_clean_and_damage_is_named(tmp_path_factory, sizes, interval, codec, data) -> None:
    d = tmp_path_factory.mktemp("seg")
    offset = 0
    appends = []
    for recs in _specs(sizes):
        appends.append([build_v2_batch(recs, base_offset=offset, codec=codec)])
        offset += len(recs)
    write_segment(d, appends, index_interval_bytes=interval)
    (seg,) = scan_partition(str(d), store=local()).segments
    res = verify_segment("gen", seg, strict=True)
    assert res.status == "clean", [p.line() for p in res.problems]
    idx = Path(seg.index)
    n = idx.stat().st_size // 8
    if n:
        i = data.draw(st.integers(min_value=0, max_value=n - 1))
        raw = bytearray(idx.read_bytes())
        rel, pos = struct.unpack_from(">ii", raw, i * 8)
        struct.pack_into(">ii", raw, i * 8, rel, pos + data.draw(st.sampled_from([1, 5, -3])))
        idx.write_bytes(bytes(raw))
        damaged = verify_segment("gen", seg)
        assert any(p.entry == i and p.file == seg.index for p in damaged.problems), [p.line() for p in damaged.problems]


def test_strict_agrees_with_kafkas_verify_index_only_on_every_corpus_index() -> None:
    """For each .index/.timeindex golden of Kafka's --verify-index-only: Kafka reported something
    on stderr exactly when kseg --strict reports a problem in that file."""
    from tests.conftest import CORPUS_GOLDEN, golden_rows

    checked = 0
    for row in golden_rows():
        if row["set"] != "verify":
            continue
        kafka_bad = bool((CORPUS_GOLDEN / row["partition"] / f"{row['file']}.verify.stderr").read_bytes().strip())
        part = scan_partition(str(CORPUS_DATA / row["partition"]), store=local())
        (seg,) = [s for s in part.segments if s.name == row["file"].split(".")[0]]
        res = verify_segment(row["partition"], seg, strict=True)
        mine = [p for p in res.problems if p.file.endswith(row["file"])]
        assert kafka_bad == bool(mine), (row, [p.line() for p in mine])
        checked += 1
    assert checked > 60
