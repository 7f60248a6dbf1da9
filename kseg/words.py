"""Counted words: one rule for the plurals of every line kseg prints (``1 entry``, ``2 entries``).

Kafka's own messages that kseg repeats word for word (``Found 1 byte(s) of garbage``) keep Kafka's
words; everything kseg says itself counts with :func:`plural` (``tests/test_rules_once.py`` finds
hand-made plurals).
"""

from __future__ import annotations

_IRREGULAR = {
    "entry": "entries",
    "batch": "batches",
    "match": "matches",
    "loss": "losses",
    "directory": "directories",
    "index": "indexes",
    ".txnindex": ".txnindex files",
    ".index": ".index files",
    ".timeindex": ".timeindex files",
    "its": "their",
    "it": "them",
    "was": "were",
    "is": "are",
    "has": "have",
}


def noun(n: int, word: str) -> str:
    """``word`` (singular) as counted by ``n``: ``entry`` for 1, ``entries`` otherwise."""
    return word if n == 1 else _IRREGULAR.get(word, word + "s")


def plural(n: int, word: str) -> str:
    """``1 entry``, ``2 entries``, ``0 segments``: the count and the word it counts."""
    return f"{n} {noun(n, word)}"
