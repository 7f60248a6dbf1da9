"""Notes grouped by kind (:mod:`kseg.render.notes`): one line per kind, counts added up, the first places."""

from __future__ import annotations

import io

from kseg.render.notes import NoteGroups, plural, split


def test_one_kind_from_many_places_is_one_line_with_summed_counts() -> None:
    groups = NoteGroups("file", "--verbose lists every one")
    for i, n in enumerate((3, 1, 7, 2, 5)):
        groups.add(f"d/0000{i}.timeindex: {n} {'entry' if n == 1 else 'entries'} name the offset of a record")
    assert groups.lines() == [
        "note: 5 files: 18 entries name the offset of a record (d/00000.timeindex, "
        "d/00001.timeindex, d/00002.timeindex and 2 more; --verbose lists every one)"
    ]


def test_a_note_seen_once_prints_as_it_came_and_kinds_keep_their_order() -> None:
    groups = NoteGroups("path")
    groups.add("a/x-delete: skipped, a partition directory in transition")
    groups.add("b/00.index: preallocated zero tail of 1 entry (an active segment's index)")
    groups.add("c/00.index: preallocated zero tail of 4 entries (an active segment's index)")
    assert groups.texts() == [
        "a/x-delete: skipped, a partition directory in transition",
        "2 paths: preallocated zero tail of 5 entries (an active segment's index) (b/00.index, c/00.index)",
    ]
    out = io.BytesIO()
    groups.write(out)
    assert out.getvalue().decode().count("\n") == 2


def test_a_note_without_a_place_counts_its_times() -> None:
    groups = NoteGroups()
    for _ in range(3):
        groups.add("no usable .snapshot: state rebuilt from the first segment")
    assert groups.texts() == ["no usable .snapshot: state rebuilt from the first segment (3 times)"]
    assert split("no usable .snapshot: state rebuilt") == ("", "no usable .snapshot: state rebuilt")


def test_plural() -> None:
    assert [plural(n, w) for n, w in ((1, "entry"), (2, "entry"), (1, "batch"), (0, "batch"), (2, "file"))] == [
        "1 entry",
        "2 entries",
        "1 batch",
        "0 batches",
        "2 files",
    ]


def test_notes_out_of_order_give_the_lines_of_the_order_they_name() -> None:
    """A Spark run's bins finish in any order: each note with its place (``at``) gives the lines adding
    them in that order gives -- the kinds' order, a kind's first note, its first places, the counts."""
    import random

    notes = [f"d/{i:02d}.timeindex: {i % 3 + 1} entries name the offset of a record" for i in range(12)]
    notes[5] = "d/05.index: preallocated zero tail of 1 entry (an active segment's index)"
    notes[9] = "no usable .snapshot: state rebuilt from the first segment"
    in_order = NoteGroups("file", "--verbose lists every one")
    for note in notes:
        in_order.add(note)
    for seed in range(5):
        shuffled = list(enumerate(notes))
        random.Random(seed).shuffle(shuffled)
        groups = NoteGroups("file", "--verbose lists every one")
        for i, note in shuffled:
            groups.add(note, at=(i, 0))
        assert groups.lines() == in_order.lines()
    assert groups.held() == 1 + 3 + 1 + 1 + 1  # three kinds: the timeindex kind's first three places
