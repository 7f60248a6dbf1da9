"""Every listed object matched by its full key: the key a ``RemoteStorageManager`` fetches, or an orphan.

An RSM finds a segment's objects by computing their keys from the segment's metadata, never by listing:
Aiven's plugin from ``ObjectKeyFactory.key(fields, metadata, suffix)`` (the custom metadata's
``object_prefix`` else the configured prefix, ``object_key`` else the main path
``<topic>-<topicId>/<partition>/<20-digit start offset>-<segmentId>``, then ``.`` and the suffix),
Kafka's ``LocalTieredStorage`` from ``RemoteLogSegmentFileset`` (``<topic>-<partition>-<topicId>/<start
offset>-<segmentId>.<suffix>``).  So an object belongs to a live segment only when its whole key is the one
the segment's metadata gives -- topic-id prefix, partition, start offset, segment id and suffix: a copy under
another partition's prefix, a rename to another start offset, a move to another partition are objects no
fetch reads (orphans), and the segment's own key is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kseg.ops.tiered.reconcile import FINISHED, ORPHAN_WHY, Orphan, PartitionCheck, Problem, orphan_state
from kseg.ops.tiered.state import RemoteSegment, TopicPartition
from kseg.ops.tiered.store import StoredObject, StoreListing
from kseg.storage import location
from kseg.storage.remote_keys import Layout, custom_key, object_key, parse_key
from kseg.words import plural

if TYPE_CHECKING:
    from kseg.storage.context import Names


def expected_key(
    tp: TopicPartition,
    seg: RemoteSegment,
    layout: Layout = "aiven",
    listed: StoreListing | None = None,
    suffix: str = "log",
) -> str:
    """The key the RSM fetches ``seg``'s ``suffix`` object from: the layout's rule under the root of the store
    ``listed`` (when given), with Aiven's custom metadata applied as the plugin's fetch path does
    (:func:`kseg.storage.remote_keys.custom_key`): an ``object_prefix`` starts the key in the bucket (the
    root's bucket; a local root is its own), an ``object_key`` is its main path."""
    key = object_key(layout, "", tp.topic, tp.topic_id, tp.partition, seg.start, seg.segment_id, suffix)
    custom = seg.custom
    default = parse_key(key) if layout == "aiven" and custom is not None else None
    if custom is not None and default is not None:
        key = custom_key(custom, default)
        if custom.object_prefix is not None and listed is not None:
            root = listed.root
            return location.join(location.bucket(root) if listed.store.remote else root, key)
    return key if listed is None else location.join(listed.root, key)


def _same(listed: str, expected: str, names: Names) -> bool:
    """One object named two ways: a listed path (or URI) and an expected key under the same root (both in its
    store's grammar, ``names``)."""
    return listed == expected or names.canonical(listed) == names.canonical(expected)


@dataclass
class _Owner:
    check: PartitionCheck
    seg: RemoteSegment


def match_objects(
    checks: dict[tuple[str, int], PartitionCheck],
    store: StoreListing,
    known: Callable[[str, int], bool],
) -> None:
    """Each listed segment object given to its live segment when its key is the segment's expected key
    (``check.objects``; a finished segment's only: the others' objects are orphans, as a copy that never
    finished), else to an :class:`Orphan` in the check of the topic-partition it lies under (one made for a
    topic-partition the metadata never names)."""
    owners = {seg.segment_id: _Owner(check, seg) for check in checks.values() for seg in check.tp.live()}
    names = store.store.names  # the listed root's grammar, chosen once where --remote is given
    for check in checks.values():
        for seg in check.tp.live():
            check.objects[seg.segment_id] = []
    for seg_id, objects in store.by_segment.items():
        owner = owners.get(seg_id)
        strays: dict[tuple[str, int, bool], list[StoredObject]] = {}
        for obj in objects:
            at_key = owner is not None and _same(
                obj.path, expected_key(owner.check.tp, owner.seg, obj.key.layout, store, obj.key.suffix), names
            )
            if at_key and owner is not None:
                owner.check.objects[seg_id].append(obj)
            if not at_key or owner is None or owner.seg.state != FINISHED:
                strays.setdefault((obj.key.topic_id, obj.key.partition, not at_key), []).append(obj)
        for (topic_id, partition, misplaced), found in strays.items():
            _orphan(checks, (topic_id, partition), seg_id, found, owner if misplaced else None, store, known)


def _orphan(
    checks: dict[tuple[str, int], PartitionCheck],
    place: tuple[str, int],
    seg_id: str,
    objects: list[StoredObject],
    owner: _Owner | None,
    listed: StoreListing,
    known: Callable[[str, int], bool],
) -> None:
    first = objects[0].key
    check = checks.get(place)
    if check is None:
        tp = TopicPartition(first.topic, first.topic_id, first.partition, "")
        check = checks[place] = PartitionCheck(tp, known=known(*place))
    if owner is not None:
        orphan = Orphan(seg_id, owner.seg.state, objects, expected_key(owner.check.tp, owner.seg, first.layout, listed))
        judged = owner.check.known
        why = (
            f"not the key the RSM fetches segment {seg_id} of {owner.check.tp.name} ({owner.seg.state}, offsets "
            f"{owner.seg.start}-{owner.seg.end}) from: {orphan.expected}"
        )
    else:
        state = orphan_state(check.tp, seg_id)
        orphan = Orphan(seg_id, state, objects)
        judged = check.known
        why = ORPHAN_WHY[state]
    check.orphans.append(orphan)
    if not judged:
        return  # its metadata partition was not read (to its end): listed, not judged
    n = len(objects)
    check.problems.append(
        Problem(
            "orphan",
            f"segment {seg_id}: {plural(n, 'object')}, {orphan.bytes} bytes, under {first.partition_prefix}: {why}",
        )
    )
