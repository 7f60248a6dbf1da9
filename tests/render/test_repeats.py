"""A long note explained once a run (issue 33): ``verify-index --verbose`` prints every note under its segment,
but a long explanation only the first time its kind comes; later ones are named by their first words."""

from __future__ import annotations

import shutil
from pathlib import Path

from kseg.ops.verify.time_index import PRE_37_NOTE
from kseg.render.notes import LONG_NOTE, Repeats
from tests.cli.test_verify_versions import _build
from tests.conftest import run_cli


def test_the_first_note_of_a_kind_whole_later_long_ones_short() -> None:
    repeats = Repeats()
    first = "a/0.timeindex: " + PRE_37_NOTE.format(n=11)
    again = "b/0.timeindex: " + PRE_37_NOTE.format(n=3)
    assert repeats.line(first) == first
    short = repeats.line(again)
    assert short.startswith("b/0.timeindex: 3 entries name the offset of the record holding the largest timestamp")
    assert short.endswith("(as above)") and len(short) < len(again)
    assert len(short) - len("b/0.timeindex: ") <= LONG_NOTE + len(" (as above)")


def test_short_notes_repeat_as_they_are() -> None:
    repeats = Repeats()
    note = "a/leader-epoch-checkpoint: absent: the batches' leader epochs not checked"
    assert repeats.line(note) == note and repeats.line(note.replace("a/", "b/")) == note.replace("a/", "b/")


def test_verify_index_verbose_explains_the_pre_37_time_index_once(tmp_path: Path) -> None:
    part = _build(tmp_path, "leader_uncompressed", "3.6")
    shutil.copytree(part, tmp_path / "copy" / part.name)
    r = run_cli(["verify-index", "--verbose", str(part), str(tmp_path / "copy" / part.name)])
    assert r.exit_code == 0, r.text
    assert r.text.count("LogValidator.assignOffsetsNonCompressed") == 1
    assert r.text.count("name the offset of the record holding the largest timestamp") == 2
    assert r.text.count("(as above)") == 1
