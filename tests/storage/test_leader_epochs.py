"""``kseg.storage.leader_epochs``: the checkpoint format as ``CheckpointFile`` reads it."""

from __future__ import annotations

import pytest

from kseg.errors import CorruptIndexError
from kseg.ops.diff.diff import end_offset_for
from kseg.storage.leader_epochs import EpochEntry, epoch_at, parse, read
from kseg.storage.stores.discover import store_of


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
    assert read(str(tmp_path), store=store_of(str(tmp_path))) is None


def test_epoch_at_and_end_offset_for() -> None:
    cache = [EpochEntry(0, 0), EpochEntry(1, 50), EpochEntry(3, 100)]
    assert [epoch_at(cache, o) for o in (0, 49, 50, 99, 100, 500)] == [0, 0, 1, 1, 3, 3]
    # LeaderEpochFileCache.endOffsetFor: the latest epoch ends at the log end; an older one where
    # the next higher epoch starts (epoch 2 was never used here: it ends where 3 starts)
    assert end_offset_for(cache, 3, 130) == 130
    assert end_offset_for(cache, 1, 130) == 100
    assert end_offset_for(cache, 2, 130) == 100
    assert end_offset_for(cache, 4, 130) is None


@pytest.mark.parametrize(
    "line, tokens",
    # Pattern.compile("\\s+").split(line), as java 17 printed it: trailing empty strings removed, a leading
    # one kept, Java's blanks only (U+00A0 is not one)
    [("a 0 5 ", 3), ("  a 0 5", 4), ("a\u00a00 5", 2), ("   ", 0), ("", 1), (" 1", 2), ("3\u00a0", 1)],
)
def test_java_split_counts_tokens_as_java(line: str, tokens: int) -> None:
    from kseg.storage.checkpoints import java_split

    assert len(java_split(line)) == tokens


def test_java_split_of_single_spaces_is_the_patterns() -> None:
    """The common line (single spaces its only blanks) is split by ``str.split``: the same pieces as the
    pattern's split, on every line of a small alphabet of blanks and others up to five characters."""
    import itertools
    import re

    from kseg.storage.checkpoints import java_split

    blanks = re.compile(r"[ \t\n\x0b\f\r]+")
    for n in range(6):
        for chars in itertools.product(" a0\t\u00a0\r", repeat=n):
            line = "".join(chars)
            assert java_split(line) == java_split(line, blanks), repr(line)


def test_a_trailing_blank_is_a_good_entry_a_leading_one_is_not() -> None:
    """LeaderEpochCheckpointFile.Formatter.fromString: ``"1 50 "`` splits into two tokens (an entry),
    ``" 1 50"`` into three (malformed); the version line is ``Integer.parseInt``'s, which trims nothing."""
    assert parse("0\n1\n1 50 \n") == [EpochEntry(1, 50)]
    with pytest.raises(CorruptIndexError, match="malformed line 3"):
        parse("0\n1\n 1 50\n")
    with pytest.raises(CorruptIndexError, match="malformed line 1"):
        parse(" 0\n1\n1 50\n")
    assert parse("0\r\n1\r\n1\t50\r\n") == [EpochEntry(1, 50)]  # BufferedReader.readLine's line ends
