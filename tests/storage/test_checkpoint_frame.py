"""``CheckpointFile``'s frame, read once (:func:`kseg.storage.offset_checkpoints.read_frame`) for the offset
checkpoints and ``leader-epoch-checkpoint``: the same faults of the frame, each in its kind's words."""

from __future__ import annotations

import pytest

from kseg.errors import CheckpointError, CorruptIndexError, InputError, KsegError
from kseg.storage import leader_epochs
from kseg.storage import offset_checkpoints as cp


def _offsets(text: str) -> list[cp.OffsetEntry]:
    return list(cp.iter_offsets(text, "f"))


def _epochs(text: str) -> list[leader_epochs.EpochEntry]:
    return leader_epochs.parse(text, "f")


#: (the file, Kafka's text for an offset checkpoint, kseg's for a leader-epoch-checkpoint)
FAULTS = [
    ("x\n1\n", "line 1: Malformed line in checkpoint file: 'x'", "malformed line 1 in leader-epoch-checkpoint: 'x'"),
    ("1\n1\n", "line 1: Unrecognised version: 1, expecting: 0", "unrecognised version 1 in leader-epoch-checkpoint"),
    ("0\n+\n", "line 2: Malformed line in checkpoint file: '+'", "malformed line 2 in leader-epoch-checkpoint: '+'"),
    ("0\n2\n", "Expected [2] entries in checkpoint file, but found only [0]", "expected 2 entries in leader-epoch"),
    ("0\n-1\n", "Expected [-1] entries in checkpoint file, but found only [0]", "expected -1 entries in leader-epoch"),
]


@pytest.mark.parametrize(("text", "offsets", "epochs"), FAULTS)
def test_one_frame_two_kinds_of_words(text: str, offsets: str, epochs: str) -> None:
    with pytest.raises(CheckpointError) as kafka:
        _offsets(text)
    with pytest.raises(CorruptIndexError) as kseg:
        _epochs(text)
    assert offsets in kafka.value.describe() and epochs in kseg.value.describe()


@pytest.mark.parametrize("text", ["", "0\n", "0\r", "0\n0\n"])
def test_no_entry_is_an_empty_checkpoint(text: str) -> None:
    assert _offsets(text) == [] and _epochs(text) == []


@pytest.mark.parametrize(("parse", "bound"), [(_offsets, cp.MAX_OFFSET_ENTRIES), (_epochs, cp.MAX_EPOCH_ENTRIES)])
def test_a_count_above_the_bound_is_refused_before_an_entry_is_read(parse, bound: int) -> None:
    assert parse(f"0\n{bound}\n" + "\n".join(["0 0", "t 0 0"][parse is _offsets] for _ in range(bound))) != []
    with pytest.raises(InputError, match=f"{bound + 1} entries declared on line 2"):
        parse(f"0\n{bound + 1}\nnot an entry\n")


def test_the_entry_parser_sees_every_line_the_caller_only_the_counted_ones() -> None:
    seen: list[int] = []

    def entry(n: int, line: str) -> str:
        seen.append(n)
        return line

    frame = cp.OFFSET_FRAME
    read = cp.read_frame("0\n1\na\nb\n", "f", frame, entry)
    assert next(read) == "a"
    with pytest.raises(CheckpointError, match=r"Expected \[1\] entries in checkpoint file, but found only \[2\]"):
        next(read)  # the count checked after the last line
    assert seen == [3, 4]  # (the line past the count parsed, to count it and to refuse it were it malformed)
    given = cp.read_frame("0\n2\na\nb\n", "f", frame, entry)
    assert next(given) == "a" and seen[-1] == 3  # streamed: an entry given before the next line is read
    assert list(given) == ["b"]


def test_a_malformed_line_past_the_count_is_malformed_in_both() -> None:
    with pytest.raises(KsegError, match="line 4: Malformed line in checkpoint file"):
        _offsets("0\n1\nt 0 5\nt 0\n")
    with pytest.raises(KsegError, match="malformed line 4 in leader-epoch-checkpoint"):
        _epochs("0\n1\n0 5\n0\n")
