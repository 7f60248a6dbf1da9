"""Version ranges and the version checks Kafka's generated code performs.

Facts mirrored from Kafka's message generator (``org.apache.kafka.message``):

* ``Versions``: an inclusive range of 16-bit versions; ``"A+"`` means
  ``A..32767``, ``"none"`` is the empty range (lowest 0, highest -1).
  ``subtract`` returns ``None`` when the difference would be two ranges.
* ``VersionConditional``: every version test in a generated ``read``/``write``
  is simplified against the range of versions the generator thinks is
  *possible* at that point.  A test whose range covers every possible version
  is dropped entirely; a test bounded on one side only checks that side.  So
  for a version outside the message's valid range (a record written by a newer
  Kafka) the generated code takes branches that a plain ``lo <= v <= hi`` test
  would not.  :func:`branch` reproduces the exact generated test.
"""

from __future__ import annotations

from typing import NamedTuple

SHORT_MAX = 32767


class Versions(NamedTuple):
    """An inclusive version range; ``NONE`` is ``(0, -1)``."""

    lowest: int
    highest: int

    @staticmethod
    def parse(text: str | None, default: "Versions | None" = None) -> "Versions":
        """Parse ``"3"``, ``"1-4"``, ``"2+"`` or ``"none"`` (Kafka's ``Versions.parse``)."""
        if text is None or not text.strip():
            if default is None:
                raise ValueError("a version range is required")
            return default
        t = text.strip()
        if t == "none":
            return NONE
        if t.endswith("+"):
            return Versions(int(t[:-1]), SHORT_MAX)
        if "-" in t:
            lo, hi = t.split("-", 1)
            return Versions(int(lo), int(hi))
        return Versions(int(t), int(t))

    @property
    def empty(self) -> bool:
        return self.lowest > self.highest

    def contains(self, version: int) -> bool:
        return self.lowest <= version <= self.highest

    def intersect(self, other: "Versions") -> "Versions":
        lo = max(self.lowest, other.lowest)
        hi = min(self.highest, other.highest)
        return NONE if lo > hi else Versions(lo, hi)

    def subtract(self, other: "Versions") -> "Versions | None":
        """Kafka's ``Versions.subtract``: ``None`` when the result is two ranges."""
        if other.lowest <= self.lowest:
            if other.highest >= self.highest:
                return NONE
            if other.highest < self.lowest:
                return self
            return Versions(other.highest + 1, self.highest)
        if other.highest >= self.highest:
            new_high = other.lowest - 1
            if new_high < 0:
                return self
            if new_high < self.highest:
                return Versions(self.lowest, new_high)
            return self
        return None

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.lowest == self.highest:
            return str(self.lowest)
        if self.highest == SHORT_MAX:
            return f"{self.lowest}+"
        return f"{self.lowest}-{self.highest}"


NONE = Versions(0, -1)
ALL = Versions(0, SHORT_MAX)


def branch(containing: Versions, possible: Versions, version: int) -> tuple[bool, Versions]:
    """Which side of ``VersionConditional.forVersions(containing, possible)`` runs for ``version``.

    Returns ``(taken, narrowed)``: ``taken`` is True when the generated code
    runs its "member" clause, and ``narrowed`` is the range of possible versions
    the generator passed into that clause (used by nested conditionals).
    """
    if_versions = possible.intersect(containing)
    if_not = possible.subtract(containing)
    if if_not is None:
        if_not = possible
    pl, ph = possible
    cl, ch = containing
    if pl < cl:
        if ph > ch:
            taken = cl <= version <= ch
        elif ph >= cl:
            taken = version >= cl
        else:
            taken = False
    elif ph >= cl and pl <= ch:
        taken = version <= ch if ph > ch else True
    else:
        taken = False
    return taken, (if_versions if taken else if_not)
