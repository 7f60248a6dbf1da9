"""The compact listing (kseg/storage/listing.py): the same segments back as discover's, in less memory."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

from kseg.storage.listing import Listed
from kseg.storage.stores.find import discover, discover_as
from tests.conftest import CORPUS_DATA


def as_tuples(segments) -> list[tuple]:
    return [(s.base_offset, s.log, s.index, s.timeindex, s.txnindex, s.log_size()) for s in segments]


def test_every_corpus_partition_comes_back_the_same() -> None:
    parts = discover([str(CORPUS_DATA)], [])
    compact = discover_as([str(CORPUS_DATA)], [], Listed)
    assert [(p.path, p.log_dir, p.name) for p in parts] == [(c.path, c.log_dir, c.name) for c in compact]
    assert [as_tuples(p.segments) for p in parts] == [as_tuples(c.segments) for c in compact]
    again = pickle.loads(pickle.dumps(compact))
    assert [as_tuples(c.segments) for c in again] == [as_tuples(c.segments) for c in compact]
    assert all(c.odd is None for c in compact)  # Kafka's names: nothing kept whole


def test_names_that_are_not_kafkas_are_kept_whole(tmp_path: Path) -> None:
    """A LocalTieredStorage segment ``<offset>-<segment id>.log`` (and its indexes) keeps its real name."""
    part = tmp_path / "orders-0"
    part.mkdir()
    for f in (CORPUS_DATA / "plain-v2-0").iterdir():
        if f.suffix in (".log", ".index", ".timeindex"):
            shutil.copy(f, part / f"{f.stem}-AAAAAAAAAAAAAAAAAAAAAA{f.suffix}")
    (one,) = discover([str(part)], [])
    compact = Listed(one)
    assert as_tuples(compact.segments) == as_tuples(one.segments) and compact.odd
    assert all("-AAAA" in (s.log or "") for s in compact.segments)


def test_tiered_copies_at_one_base_offset_stay_two_segments(tmp_path: Path) -> None:
    """Two LocalTieredStorage copies of one segment (two segment ids): two segments, each its own files and
    named by its stem (``Segment.copies``), as discover gives them."""
    part = tmp_path / "orders-0"
    part.mkdir()
    for uuid in ("AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBB"):
        for f in (CORPUS_DATA / "plain-v2-0").glob("00000000000000000000.*"):
            if f.suffix in (".log", ".index", ".timeindex"):
                shutil.copy(f, part / f"{f.stem}-{uuid}{f.suffix}")
    (one,) = discover([str(part)], [])
    assert len(one.segments) == 2 and all(s.copies for s in one.segments)
    compact = Listed(one)
    assert as_tuples(compact.segments) == as_tuples(one.segments)
    assert [s.name for s in compact.segments] == [s.name for s in one.segments]


def test_a_cut_is_the_same_segments_packed(tmp_path: Path) -> None:
    """:meth:`Listed.cut` (an export task's share of a partition): the whole's segments ``lo`` to ``hi``,
    names kept whole by exception included (re-numbered), through a pickle too."""
    part = tmp_path / "orders-0"
    shutil.copytree(CORPUS_DATA / "plain-v2-0", part)
    kafka = sorted(part.glob("*.log"))[0]
    for f in list(part.glob(f"{kafka.stem}.*")):  # its first segment under a tiered copy's name
        f.rename(part / f"{f.stem}-AAAAAAAAAAAAAAAAAAAAAA{f.suffix}")
    for base in (900, 1800):  # and more segments after it
        for suffix in (".log", ".index"):
            shutil.copy(next(part.glob(f"*{suffix}")), part / f"{base:020d}{suffix}")
    (one,) = discover([str(part)], [])
    whole = Listed(one)
    assert len(whole) >= 3 and whole.odd
    for lo, hi in ((0, 1), (0, 2), (1, len(whole)), (2, 3), (1, 1)):
        cut = pickle.loads(pickle.dumps(whole.cut(lo, hi)))
        assert as_tuples(cut.segments) == as_tuples(whole.segments[lo:hi]) and cut.path == whole.path
        assert (cut.odd is None) == (lo > 0) and cut.head_left_out == (lo > 0)  # a cut's head left out
