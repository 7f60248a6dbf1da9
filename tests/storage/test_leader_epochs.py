"""``kseg.storage.leader_epochs``: the checkpoint format as ``CheckpointFile`` reads it."""

from __future__ import annotations

import pytest

from kseg.errors import CorruptIndexError
from kseg.ops.diff.diff import end_offset_for
from kseg.storage.leader_epochs import EpochEntry, epoch_at, parse, read


def test_parse_entries() -> None:
    assert parse("0\n3\n0 0\n1 50\n2\t100\n") == [EpochEntry(0, 0), EpochEntry(1, 50), EpochEntry(2, 100)]


@pytest.mark.parametrize("text", ["", "0\n", "0\n0\n"])
def test_empty_forms_are_an_empty_cache(text: str) -> None:
    assert parse(text) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("1\n0\n", "unrecognised version 1"),
        ("0\n2\n0 0\n", "expected 2 entries in leader-epoch-checkpoint, found 1"),
        ("0\n1\n0 0 7\n", "malformed line 3"),
        ("0\nx\n", "malformed line 2"),
    ],
)
def test_malformed_files(text: str, message: str) -> None:
    with pytest.raises(CorruptIndexError, match=message):
        parse(text)


def test_read_absent_file_is_none(tmp_path) -> None:
    assert read(str(tmp_path)) is None


def test_epoch_at_and_end_offset_for() -> None:
    cache = [EpochEntry(0, 0), EpochEntry(1, 50), EpochEntry(3, 100)]
    assert [epoch_at(cache, o) for o in (0, 49, 50, 99, 100, 500)] == [0, 0, 1, 1, 3, 3]
    # LeaderEpochFileCache.endOffsetFor: the latest epoch ends at the log end; an older one where
    # the next higher epoch starts (epoch 2 was never used here: it ends where 3 starts)
    assert end_offset_for(cache, 3, 130) == 130
    assert end_offset_for(cache, 1, 130) == 100
    assert end_offset_for(cache, 2, 130) == 100
    assert end_offset_for(cache, 4, 130) is None
