"""Kafka's default partitioner for a keyed record: which partition a producer sent a key to.

``BuiltInPartitioner.partitionForKey(serializedKey, numPartitions)`` is
``Utils.toPositive(Utils.murmur2(serializedKey)) % numPartitions`` (the producer's rule for every record
with a key when no custom partitioner is set, ``KafkaProducer.partition``); the hash is
:mod:`kseg.format.murmur2`.

:func:`prune` keeps, of each topic's partitions, the one the key was sent to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kseg.format.murmur2 import murmur2, to_positive
from kseg.storage.checkpoints import topic_partition


def partition_for_key(key: bytes, partitions: int) -> int:
    """``BuiltInPartitioner.partitionForKey(key, partitions)``."""
    return to_positive(murmur2(key)) % partitions


def counts_seen(partitions: Sequence[Any]) -> dict[str, int | None]:
    """Each topic's partition count as the inputs show it: N when its partitions 0..N-1 are all there (a
    log root of every partition, a fleet's root), else None (a broker holding some of them: the count is
    not known).  Partitions whose directory name is not ``<topic>-<n>`` are left out."""
    numbers: dict[str, set[int]] = {}
    for part in partitions:
        tp = topic_partition(part.name)
        if tp is not None:
            numbers.setdefault(tp[0], set()).add(tp[1])
    return {topic: len(seen) if seen == set(range(len(seen))) else None for topic, seen in numbers.items()}


def prune(
    partitions: Sequence[Any],
    key: bytes,
    count: int | None,
    given: Sequence[Any] = (),
    known: Mapping[str, int] | None = None,
) -> tuple[list[Any], list[str]]:
    """The partitions a producer with Kafka's default partitioner sent ``key`` to, one per topic (every
    replica of it among ``partitions``), and notes saying what was kept and why.  The count of a topic's
    partitions: ``count`` (``--partitions``) for every topic; else the topic's in ``known`` (the cluster
    metadata's: what a producer's metadata says, so it wins over the directories, a disagreement noted);
    else the topic's as the inputs show it (:func:`counts_seen`, leaving out the partitions in ``given``:
    those named on the command line are read whole, as asked).  A topic whose count is not known is read
    whole, and a directory not named ``<topic>-<n>`` is kept."""
    chosen: dict[str, int | None] = {}
    notes: list[str] = []
    known = known or {}
    named = {id(p) for p in given}
    found = [p for p in partitions if id(p) not in named] if count is None else list(partitions)
    seen = counts_seen(found)
    present = counts_seen(partitions)
    for topic in present:
        n, how = _count(topic, count, known, seen, notes)
        many = sum(1 for p in found if (topic_partition(p.name) or ("",))[0] == topic) > 1
        if n is None:
            chosen[topic] = None
            if many:
                notes.append(
                    f"{topic}: the topic's partitions here are not 0..N-1, so its partition count is not known: "
                    "every partition read (give --partitions N to read only the key's)"
                )
            continue
        target = partition_for_key(key, n)
        chosen[topic] = target
        if count is not None or topic in known or many:
            notes.append(
                f"{topic}: only partition {target} of the topic read, where Kafka's default partitioner sends this "
                f"key (murmur2 of the key mod {n} partitions, {how}; --no-prune for a custom partitioner)"
            )
    kept = []
    for part in partitions:
        tp = topic_partition(part.name)
        if tp is None or chosen.get(tp[0]) is None or chosen[tp[0]] == tp[1] or part.error is not None:
            kept.append(part)
        elif count is None and id(part) in named:
            kept.append(part)
    for topic, wanted in chosen.items():
        if wanted is not None and not any(topic_partition(p.name) == (topic, wanted) for p in kept):
            notes.append(f"{topic}: partition {wanted} of the topic, the key's, is not in the inputs: none of it read")
    return kept, notes


def _count(
    topic: str, count: int | None, known: Mapping[str, int], seen: Mapping[str, int | None], notes: list[str]
) -> tuple[int | None, str]:
    """A topic's partition count and where it comes from (the rule of :func:`prune`)."""
    if count is not None:
        return count, "--partitions"
    if topic in known:
        here = seen.get(topic)
        if here is not None and here != known[topic]:
            notes.append(
                f"{topic}: the cluster metadata says {known[topic]} partitions, the directories here "
                f"0..{here - 1}: the metadata's count used (what a producer's metadata says)"
            )
        return known[topic], "the cluster metadata's count"
    return seen.get(topic), "the partitions found; --partitions N if it has more"
