"""Notes grouped by kind: a note that repeats across segments or partitions prints once, with its count.

A note is ``<where>: <text>`` (``where`` a file or a partition).  Two notes are of one kind when
their texts are the same once their counts are taken out (``12 entries`` and ``3 entries`` are one
kind; the counts are added up).  A kind seen once prints as it came; a kind seen in many places
prints one line: how many places, the text with the total count, the first few places.  Memory is
constant: counts and those first places, whatever the number of notes (``--verbose`` prints every
note where it comes instead, and JSON rows keep every note).  See ``docs/verify-index.md``.

Notes may come out of order (a Spark run's bins finish in any order): each then comes with its place in
the run's order (``at``), and the lines are those that adding them in that order would give -- kinds by
their first note, the first places by order, the counts added up (which order does not change).
"""

from __future__ import annotations

import re
from bisect import insort
from types import MappingProxyType

from kseg.words import plural

FIRST_PLACES = 3  # places named on a grouped line
_COUNT = re.compile(r"\b(\d+) (entr(?:y|ies)|batch(?:es)?|segments?|bytes?)\b")
_SINGULAR = MappingProxyType(
    {
        "entries": "entry",
        "entry": "entry",
        "batches": "batch",
        "batch": "batch",
        "segments": "segment",
        "segment": "segment",
        "bytes": "byte",
        "byte": "byte",
    }
)
__all__ = ["NoteGroups", "Repeats", "plural", "split"]  # plural: kseg.words's, the one rule

LONG_NOTE = 120  # characters: a longer note is explained once a run, then named by its first words


class Repeats:
    """Notes printed where they come (``--verbose``), each kind's long explanation once a run: the first
    note of a kind as it came, a later long one by its first words and ``(as above)``."""

    def __init__(self) -> None:
        self.seen: set[str] = set()  # the kinds met (bounded by the kinds, never by the notes)

    def line(self, note: str) -> str:
        where, text = split(note)
        key = _COUNT.sub("{}", text)
        if key not in self.seen:
            self.seen.add(key)
            return note
        if len(text) <= LONG_NOTE:
            return note
        cut = min((i for i in (text.find(": ", 20), text.find(", ", 20), text.find(" (", 20)) if i > 0), default=-1)
        short = text[:cut] if 0 < cut <= LONG_NOTE else text[:LONG_NOTE].rsplit(" ", 1)[0]
        return f"{where}: {short} (as above)" if where else f"{short} (as above)"


def split(note: str) -> tuple[str, str]:
    """``(where, text)`` of ``<where>: <text>``; ``where`` empty when the note names no place."""
    where, sep, text = note.partition(": ")
    if not sep or " " in where.strip("/"):
        return "", note
    return where, text


Order = tuple[int, ...]  # a note's place in the run's order (``NoteGroups.add``'s ``at``)


class _Kind:
    __slots__ = ("first_note", "first_at", "count", "totals", "places")

    def __init__(self, note: str, at: Order) -> None:
        self.first_note, self.first_at, self.count = note, at, 0
        self.totals: dict[int, tuple[int, str]] = {}  # the i-th count of the text -> (sum, its noun)
        self.places: list[tuple[Order, str]] = []  # the first few, by order


class NoteGroups:
    """Collects notes as they come; :meth:`lines` gives one line per kind, in order of first sight."""

    def __init__(self, noun: str = "place", hint: str = "") -> None:
        self.noun = noun  # what a note's ``where`` is: a file, a partition
        self.hint = hint  # after "and N more": where every place is listed
        self.kinds: dict[str, _Kind] = {}
        self.added = 0  # notes added without ``at``: each after the one before

    def add(self, note: str, at: Order | None = None) -> None:
        """One note; ``at``: its place in the run's order when notes come out of order (give it for every
        note or for none)."""
        if at is None:
            at, self.added = (self.added,), self.added + 1
        where, text = split(note)
        counts = []

        def strip(m: re.Match) -> str:
            counts.append((int(m.group(1)), _SINGULAR[m.group(2)]))
            return "{%d}" % (len(counts) - 1)

        key = _COUNT.sub(strip, text)
        kind = self.kinds.get(key)
        if kind is None:
            kind = self.kinds[key] = _Kind(note, at)
        elif at < kind.first_at:
            kind.first_note, kind.first_at = note, at
        kind.count += 1
        for i, (n, word) in enumerate(counts):
            total = kind.totals.get(i, (0, word))
            kind.totals[i] = (total[0] + n, word)
        if where and (len(kind.places) < FIRST_PLACES or at < kind.places[-1][0]):
            insort(kind.places, (at, where))
            del kind.places[FIRST_PLACES:]

    def held(self) -> int:
        """What is kept: the kinds and their first places (bounded by the kinds, never by the notes)."""
        return sum(1 + len(kind.places) for kind in self.kinds.values())

    def __len__(self) -> int:
        return len(self.kinds)

    def lines(self) -> list[str]:
        """``note: ...`` lines, one per kind."""
        return [f"note: {text}" for text in self.texts()]

    def texts(self) -> list[str]:
        """One text per kind (a kind seen once: its note as it came)."""
        out = []
        for key, kind in sorted(self.kinds.items(), key=lambda kv: kv[1].first_at):
            if kind.count == 1:
                out.append(kind.first_note)
                continue
            text = key
            for i, (n, word) in kind.totals.items():
                text = text.replace("{%d}" % i, plural(n, word), 1)
            if kind.places:
                more = kind.count - len(kind.places)
                where = ", ".join(place for _, place in kind.places) + (
                    f" and {more} more{'; ' + self.hint if self.hint else ''}" if more else ""
                )
                out.append(f"{plural(kind.count, self.noun)}: {text} ({where})")
            else:
                out.append(f"{text} ({kind.count} times)")
        return out

    def write(self, out) -> None:
        """The lines, UTF-8, on the binary stream ``out``."""
        if self.kinds:
            out.write(("\n".join(self.lines()) + "\n").encode("utf-8", "replace"))
