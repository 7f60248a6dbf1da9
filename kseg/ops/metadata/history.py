"""``--history TOPIC[-PARTITION]``: every change of a partition's registration, as the images a broker
publishes show it -- a change is seen when a delta is applied (``MetadataDelta.apply``), with the records of
that delta that touched the topic (an aborted transaction's never show: its delta is dropped).

A topic's history follows its name: deleted and created again, it goes on under the new topic ID.
``orders-3`` asks for partition 3 of ``orders``, unless no topic ``orders`` ever appears and ``orders-3``
does: then every partition of the topic ``orders-3``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kseg.ops.metadata.image import Image, PartitionState, Provenance, Topic

TOPIC_RECORDS = frozenset({"TopicRecord", "PartitionRecord", "PartitionChangeRecord", "RemoveTopicRecord"})


@dataclass(frozen=True)
class Change:
    """One partition's registration before and after a delta (None: it did not exist / no longer does)."""

    offset: int  # the image's offset once the delta was applied
    time: int
    topic: str
    topic_id: bytes
    partition: int
    records: tuple[tuple[int | None, str], ...]  # (offset, record name) of the delta's records touching it
    before: PartitionState | None
    after: PartitionState | None


@dataclass
class History:
    """The changes to the partitions asked about, gathered as the loader publishes images."""

    names: frozenset[str]  # the topic names watched (the one asked, and its prefix for TOPIC-PARTITION)
    changes: list[Change] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # the watched names that were ever a topic
    snapshot: bool = False  # records of a snapshot have no log offset

    def __post_init__(self) -> None:
        self._last: dict[str, Topic | None] = {name: None for name in self.names}
        self._pending: dict[str, list[tuple[int | None, str, int | None]]] = {}  # offset, record, partition

    def touches(self, name: str, values: dict, image: Image) -> list[str]:
        """The watched topic names a record (not yet applied) touches."""
        if name == "ClearElrRecord":
            target = values["topicName"]
            return [n for n in self.names if not target or n == target]
        if name not in TOPIC_RECORDS:
            return []
        if name == "TopicRecord":
            return [values["name"]] if values["name"] in self.names else []
        t = image.topics.get(values["topicId"])
        return [t.name] if t is not None and t.name in self.names else []

    def applied(self, offset: int, record: str, values: dict, names: list[str]) -> None:
        partition = values.get("partitionId") if record in ("PartitionRecord", "PartitionChangeRecord") else None
        for n in names:
            self._pending.setdefault(n, []).append((None if self.snapshot else offset, record, partition))

    def dropped(self) -> None:
        """The delta was dropped (an aborted transaction): its records changed nothing."""
        self._pending.clear()

    def published(self, image: Image, provenance: Provenance) -> None:
        """A delta applied: each watched topic whose registration object changed is compared."""
        for name in self.names:
            now = image.topic_named(name)
            before = self._last[name]
            if now is before:
                continue
            if now is not None:
                self.seen.add(name)
            self._last[name] = now
            self._compare(name, before, now, provenance, self._pending.get(name, []))
        self._pending.clear()

    def _compare(
        self,
        name: str,
        before: Topic | None,
        now: Topic | None,
        at: Provenance,
        records: list[tuple[int | None, str, int | None]],
    ) -> None:
        old = before.partitions if before is not None and (now is None or now.id == before.id) else {}
        if before is not None and now is not None and now.id != before.id:  # deleted and created again
            self._removed(name, before, at, records)
        elif before is not None and now is None:
            self._removed(name, before, at, records)
            return
        assert now is not None
        for pid in sorted(set(old) | set(now.partitions)):
            a, b = old.get(pid), now.partitions.get(pid)
            if a != b:
                self.changes.append(Change(at.offset, at.time, name, now.id, pid, _of(records, pid), a, b))

    def _removed(
        self, name: str, topic: Topic, at: Provenance, records: list[tuple[int | None, str, int | None]]
    ) -> None:
        for pid, state in sorted(topic.partitions.items()):
            self.changes.append(Change(at.offset, at.time, name, topic.id, pid, _of(records, pid), state, None))


def _of(records: list[tuple[int | None, str, int | None]], partition: int) -> tuple[tuple[int | None, str], ...]:
    """The records of a partition: its own, and those of its whole topic."""
    return tuple((offset, name) for offset, name, p in records if p is None or p == partition)


def watched(asked: str) -> frozenset[str]:
    """The topic names ``--history`` watches for ``asked``: itself, and ``TOPIC`` of ``TOPIC-N``."""
    topic, sep, number = asked.rpartition("-")
    return frozenset({asked, topic}) if sep and topic and number.isdigit() and number.isascii() else frozenset({asked})


def chosen(history: History, asked: str) -> tuple[str, int | None] | None:
    """The topic (and partition) ``asked`` names, by what the replay saw; None: neither was ever a topic."""
    topic, _, number = asked.rpartition("-")
    if len(history.names) == 2 and topic in history.seen:
        return topic, int(number)
    if asked in history.seen:
        return asked, None
    return None


def selected(history: History, asked: str) -> list[Change]:
    pick = chosen(history, asked)
    if pick is None:
        return []
    topic, partition = pick
    return [c for c in history.changes if c.topic == topic and (partition is None or c.partition == partition)]
