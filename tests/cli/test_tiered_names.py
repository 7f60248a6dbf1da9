"""Segments named the way Kafka's ``LocalTieredStorage`` names them (``RemoteLogSegmentFileset``:
``<start offset, 20 digits>-<segment id>.log`` with ``.index``, ``.timeindex``, ``.txnindex``,
``.snapshot`` and ``.leader_epoch_checkpoint`` siblings) give every command the answers it gives for
the plain names: the corpus partitions copied under both namings, each command run on both, the
outputs compared once the names are mapped back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kseg.storage import files
from tests.conftest import CORPUS_DATA, run_cli, without_identity
from tests.stores import local

# one Uuid (22 URL-safe base64 characters) per segment, as LocalTieredStorage gives each copied segment
IDS = ["Wd7Ynb0xRJ2-8HlQ_3aZ1g", "-kq3PZs0T8ayL1x9V0fHbA", "AAAAAAAAAAAAAAAAAAAAAQ", "Zm9vYmFyYmF6cXV4MTIzNA"]
PARTITIONS = ("plain-v2-0", "txn-v2-0")


class Trees:
    """``plain/<p>`` (the corpus partition) and ``tiered/<p>`` (the same bytes under tiered names)."""

    def __init__(self, base: Path) -> None:
        self.plain, self.tiered = base / "plain", base / "tiered"
        self.renames: dict[str, str] = {}  # tiered stem -> plain stem
        for name in PARTITIONS:
            src = CORPUS_DATA / name
            shutil.copytree(src, self.plain / name)
            (self.tiered / name).mkdir(parents=True)
            logs = sorted(p.stem for p in src.glob("*.log"))
            ids = dict(zip(logs, IDS, strict=False))
            for f in sorted(src.iterdir()):
                if f.stem in ids and f.suffix != files.SNAPSHOT:
                    stem = f"{f.stem}-{ids[f.stem]}"
                    self.renames[stem] = f.stem
                    shutil.copyfile(f, self.tiered / name / (stem + f.suffix))
            # a copied segment's producer snapshot is the broker's at the next segment's base offset (the log
            # end for the last), named by the copied segment's start (RemoteLogManager, LocalTieredStorage)
            snapshots = sorted(src.glob("*.snapshot"))
            assert [s.stem for s in snapshots] == [*logs[1:], snapshots[-1].stem]
            for log, snapshot in zip(logs, snapshots, strict=True):
                shutil.copyfile(snapshot, self.tiered / name / f"{log}-{ids[log]}.snapshot")
                (self.tiered / name / f"{log}-{ids[log]}{files.LEADER_EPOCH_CHECKPOINT}").write_text("0\n1\n0 0\n")

    def plain_text(self, text: str) -> str:
        """``text`` with the tiered tree's paths and names mapped to the plain tree's."""
        text = text.replace(str(self.tiered), str(self.plain))
        for stem, plain in self.renames.items():
            text = text.replace(stem, plain)
        return text


@pytest.fixture
def trees(tmp_path: Path) -> Trees:
    return Trees(tmp_path)


def _same(trees: Trees, args: list[str], expected_code: int = 0) -> str:
    """Run ``args`` ({} the tree) on both trees: the same exit code and stdout once names are mapped; the
    tiered run's stderr."""
    plain = run_cli([a.format(trees.plain) for a in args])
    tiered = run_cli([a.format(trees.tiered) for a in args])
    assert plain.exit_code == expected_code, (plain.text[-2000:], plain.errtext)
    assert tiered.exit_code == plain.exit_code, (tiered.text[-2000:], tiered.errtext)
    assert without_identity(trees.plain_text(tiered.text)) == without_identity(plain.text)
    return tiered.errtext


def test_the_tree_is_named_as_local_tiered_storage_names_it(trees: Trees) -> None:
    names = sorted(p.name for p in (trees.tiered / "plain-v2-0").iterdir())
    assert f"00000000000000000251-{IDS[1]}.log" in names
    assert f"00000000000000000251-{IDS[1]}.snapshot" in names  # the broker's 420.snapshot
    assert f"00000000000000000000-{IDS[0]}.leader_epoch_checkpoint" in names
    assert not any(n.startswith("00000000000000000000.") or n.startswith("00000000000000000251.") for n in names)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_dump_every_file(trees: Trees, fmt: str) -> None:
    for name in PARTITIONS:
        tiered = sorted(p.name for p in (trees.tiered / name).iterdir() if files.suffix(p.name) in files_dumped())
        args = ["dump", "--format", fmt, "--deep-iteration", "--print-data-log"]
        args += [f"{{}}/{name}/{trees.renames.get(files.stem(n), files.stem(n))}{files.suffix(n)}" for n in tiered]
        plain = run_cli([a.format(trees.plain) for a in args])
        got = run_cli([*args[:5], *(str(trees.tiered / name / n) for n in tiered)])
        assert plain.exit_code == got.exit_code == 0, (got.text[-2000:], got.errtext)
        assert trees.plain_text(got.text) == plain.text
        assert "Log starting offset: 251" in got.text or fmt == "json" or name != "plain-v2-0"


def files_dumped() -> set[str]:
    return {files.LOG, files.INDEX, files.TIME_INDEX, files.TXN_INDEX}


def test_dump_log_starting_offset(trees: Trees) -> None:
    log = trees.tiered / "plain-v2-0" / f"00000000000000000251-{IDS[1]}.log"
    r = run_cli(["dump", str(log)])
    assert r.exit_code == 0, r.errtext
    assert "Log starting offset: 251" in r.text
    assert r.errtext == ""  # the base offset came from the name: no note of one inferred


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_verify_index(trees: Trees, fmt: str) -> None:
    _same(trees, ["verify-index", "--format", fmt, "{}"])
    r = run_cli(["verify-index", str(trees.tiered / "plain-v2-0")])
    assert "00000000000000000251" in r.text and "skipped" not in r.errtext, (r.text, r.errtext)


@pytest.mark.parametrize("target", ["0", "250", "251", "300", "419", "420"])
def test_lookup_offset(trees: Trees, target: str) -> None:
    r = run_cli(["lookup-offset", "--format", "json", target, str(trees.plain / "plain-v2-0")])
    _same(trees, ["lookup-offset", "--format", "json", target, "{}/plain-v2-0"], r.exit_code)
    _same(trees, ["lookup-offset", target, "{}/plain-v2-0"], r.exit_code)


@pytest.mark.parametrize("target", ["earliest", "latest", "max-timestamp", "1730000000050", "1730000000300"])
def test_lookup_time(trees: Trees, target: str) -> None:
    r = run_cli(["lookup-time", target, str(trees.plain / "plain-v2-0")])
    _same(trees, ["lookup-time", target, "{}/plain-v2-0"], r.exit_code)


def test_compaction_rebuild_check(trees: Trees) -> None:
    _same(trees, ["compaction", "--at", "1730000000000", "{}"])
    _same(trees, ["rebuild-index", "--check", "{}"])


def test_txn_uses_a_tiered_segments_snapshot_at_the_next_segments_base(trees: Trees) -> None:
    """A tiered segment's ``.snapshot`` is named by the segment's start but holds the state at the next
    segment's base (the log end for the last): ``txn`` starts from it as from the broker's ``<offset>.snapshot``
    (the same output but the snapshot's name), and ``--from-start`` checks each against the log."""
    plain = run_cli(["txn", str(trees.plain / "txn-v2-0")])
    tiered = run_cli(["txn", str(trees.tiered / "txn-v2-0")])
    assert plain.exit_code == tiered.exit_code == 0, tiered.errtext
    last = sorted(p.stem for p in (trees.tiered / "txn-v2-0").glob("*.log"))[-1]
    end = sorted(p.stem for p in (trees.plain / "txn-v2-0").glob("*.snapshot"))[-1]
    assert f"{last}.snapshot (offset {int(end)})" in tiered.text
    assert trees.plain_text(tiered.text).replace(f"{trees.renames[last]}.snapshot", f"{end}.snapshot") == plain.text
    args = ["txn", "--from-start", "--format", "json"]
    plain = run_cli([*args, str(trees.plain / "txn-v2-0")])
    tiered = run_cli([*args, str(trees.tiered / "txn-v2-0")])
    assert plain.exit_code == tiered.exit_code == 0, tiered.errtext
    assert trees.plain_text(tiered.text) == plain.text
    summary = json.loads(tiered.text.splitlines()[-1])
    assert summary["type"] == "summary" and summary["problems"] == 0
    assert [n for n in summary["notes"] if "replication-offset-checkpoint" not in n] == []  # the copies have none


def test_diff_a_plain_and_a_tiered_replica(trees: Trees) -> None:
    r = run_cli(["diff", str(trees.plain / "plain-v2-0"), str(trees.tiered / "plain-v2-0")])
    assert r.exit_code == 0, (r.text, r.errtext)
    assert "identical" in r.text


def test_text_names_the_files_as_they_are_named(trees: Trees) -> None:
    """Where the text names a segment's file, it is the tiered name on disk (the rows keep ``segment``, the
    base-offset name)."""
    seg = f"00000000000000000251-{IDS[1]}"
    r = run_cli(["lookup-offset", "300", str(trees.tiered / "plain-v2-0")])
    assert r.exit_code == 0, r.errtext
    assert f"Segment: {seg}.log" in r.text and f"Index: {seg}.index" in r.text
    assert f"position 6053 of {seg}.log" in r.text
    (trees.tiered / "plain-v2-0" / f"{seg}.index").unlink()
    r = run_cli(["rebuild-index", "--check", str(trees.tiered / "plain-v2-0")])
    assert r.exit_code == 1
    assert f"{seg}.index: 4 entries: the existing file is missing" in r.text, r.text


def test_rebuild_writes_the_tiered_names(trees: Trees, tmp_path: Path) -> None:
    """``rebuild-index --output-dir``: each segment's indexes under its own (tiered) name, the bytes of the
    originals Kafka wrote."""
    out = tmp_path / "out"
    r = run_cli(["rebuild-index", "-q", "--output-dir", str(out), str(trees.tiered / "plain-v2-0")])
    assert r.exit_code == 0, (r.text, r.errtext)
    written = sorted(p.name for p in out.rglob("*") if p.is_file())
    expected = sorted(f"{stem}{sfx}" for stem in trees.renames if "-" in stem for sfx in (".index", ".timeindex"))
    expected = [n for n in expected if (trees.tiered / "plain-v2-0" / n).exists()]
    assert written == expected
    for p in out.rglob("*"):
        if p.is_file():
            assert p.read_bytes() == (trees.tiered / "plain-v2-0" / p.name).read_bytes(), p.name


def test_one_tiered_file_given(trees: Trees) -> None:
    """A single tiered ``.log`` given: its siblings of the same name join it, as for a plain one."""
    log = trees.tiered / "plain-v2-0" / f"00000000000000000251-{IDS[1]}.log"
    r = run_cli(["verify-index", str(log)])
    assert r.exit_code == 0, (r.text, r.errtext)
    assert r.text.splitlines()[-1] == "1 segment verified (22265 bytes), 1 clean."
    for name, plain, tiered in (("txn-v2-0", "00000000000000000036", f"00000000000000000000-{IDS[0]}"),):
        p = run_cli(["dump", str(trees.plain / name / f"{plain}.snapshot")])
        t = run_cli(["dump", str(trees.tiered / name / f"{tiered}.snapshot")])  # the broker's 36.snapshot
        assert p.exit_code == t.exit_code == 0 and "producerId" in t.text, (t.text, t.errtext)
        assert t.text.splitlines()[1:] == p.text.splitlines()[1:]


RECOPY_ID = "REcopyREcopyREcopy0000"  # a second RemoteLogSegmentId for the same segment (a re-copy)


def _recopy(trees: Trees) -> tuple[Path, str, str]:
    """``tiered/plain-v2-0``'s first segment copied again under :data:`RECOPY_ID`, as RemoteLogManager
    leaves it after a copy retried under a new segment id: (directory, first copy's stem, re-copy's stem)."""
    d = trees.tiered / "plain-v2-0"
    first = sorted(d.glob("*.log"))[0].name[: -len(files.LOG)]
    again = f"{first.split('-')[0]}-{RECOPY_ID}"
    for f in sorted(d.glob(first + ".*")):
        shutil.copyfile(f, d / f.name.replace(first, again))
    return d, first, again


def test_two_copies_at_one_base_offset_are_two_segments(trees: Trees) -> None:
    """Never merged into one Segment (one copy's .log with the other's .index): each its own, named by its stem."""
    from kseg.storage.partition import scan_partition

    d, first, again = _recopy(trees)
    notes: list[str] = []
    part = scan_partition(str(d), notes, store=local())
    assert [s.name for s in part.segments] == [again, first, f"{251:020d}"]  # base offset, then segment id
    for seg in part.segments[:2]:
        assert {files.stem(p) for p in (seg.log, seg.index, seg.timeindex) if p} == {seg.name}
    assert len(notes) == 1 and f"{again}.log, {first}.log" in notes[0] and "base offset 0" in notes[0]


@pytest.mark.parametrize(
    "args",
    [
        ["verify-index", "{}"],
        ["lookup-offset", "5", "{}"],
        ["txn", "{}"],
        ["compaction", "{}"],
        ["rebuild-index", "--check", "{}"],
        ["diff", "{}", "{}"],
        ["logdir", "{}"],
    ],
    ids=lambda a: a[0],
)
def test_every_command_names_both_copies(trees: Trees, args: list[str]) -> None:
    d, first, again = _recopy(trees)
    r = run_cli([a.format(d) for a in args])
    assert "Traceback" not in r.errtext and r.exit_code in (0, 1), r.errtext
    noted = [line for line in r.errtext.splitlines() if "tiered copies of the segment at base offset 0" in line]
    assert noted and all(f"{again}.log, {first}.log" in line for line in noted), r.errtext


def test_verify_index_verifies_each_copy_and_names_both_in_the_overlap(trees: Trees) -> None:
    d, first, again = _recopy(trees)
    r = run_cli(["verify-index", "--format", "json", str(d)])
    assert r.exit_code == 1, r.errtext
    rows = [json.loads(line) for line in r.text.splitlines()]
    segments = [row for row in rows if row["type"] == "segment"]
    assert [row["segment"] for row in segments] == [again, first, f"{251:020d}"]
    (overlap,) = [row for row in rows if row["type"] == "problem"]
    assert overlap["kind"] == "segment-overlap" and first in overlap["file"] and again in overlap["expected"]
