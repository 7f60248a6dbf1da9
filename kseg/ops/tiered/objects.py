"""A finished segment's objects: every expected key listed, each of the size the metadata and manifest state.

The objects a finished segment must have (``kseg.storage.remote_keys``): Aiven's ``log``, ``rsm-manifest``
and ``indexes`` (or, before October 2023, the per-index objects); ``LocalTieredStorage``'s six files
(``txnindex`` optional).  A missing one is data loss: a fetch of the segment's offsets fails.

Sizes: a ``LocalTieredStorage`` ``.log`` is the segment byte for byte (``segmentSizeInBytes``).  Aiven's
manifest (``SegmentManifestV1``, read once per finished segment, not kept) states the segment's size
(``chunkIndex.originalFileSize``, which must be ``segmentSizeInBytes``), the transformed ``.log``'s size
(where its last chunk ends) and the ``.indexes`` object's (where its last index ends); the objects together
must hold the custom metadata's ``remote_size`` (``SegmentCustomMetadataBuilder.totalSize``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kseg.errors import InputError, KsegError
from kseg.format.rsm_manifest import Manifest
from kseg.ops.tiered.keys import expected_key
from kseg.ops.tiered.reconcile import FINISHED, PartitionCheck, Problem
from kseg.ops.tiered.state import RemoteSegment
from kseg.ops.tiered.store import StoredObject, StoreListing
from kseg.storage.remote_keys import AIVEN_LEGACY_SUFFIXES, LOCAL_SUFFIXES, OPTIONAL_SUFFIXES, Layout
from kseg.words import plural

if TYPE_CHECKING:
    from kseg.storage.context import Store

_AIVEN_INDEXES = frozenset(AIVEN_LEGACY_SUFFIXES) - {"log", "rsm-manifest", "txnindex"}
#: reads a manifest object (:func:`read_manifest`): raises InputError or KsegError
ReadManifest = Callable[[str], Manifest]


def read_manifest(path: str, store: Store) -> Manifest:
    """The Aiven manifest object at ``path``, read through its store and parsed, not kept (sizes are checked by
    it): an :class:`InputError` when it cannot be read, a ``ManifestError`` naming it when it is no manifest."""
    from kseg.storage import tiered

    return tiered.read_manifest(store.open, path)


def _missing_suffixes(have: set[str], layout: Layout) -> list[str]:
    if layout == "local":
        return sorted(set(LOCAL_SUFFIXES) - OPTIONAL_SUFFIXES["local"] - have)
    missing = sorted({"log", "rsm-manifest"} - have)
    if "indexes" not in have and not _AIVEN_INDEXES <= have:
        missing.append("indexes")
    return missing


def object_problems(
    check: PartitionCheck,
    store: StoreListing,
    default: Layout,
    read_manifest: ReadManifest | None,
    errors: list[str],
) -> None:
    """Missing objects and wrong sizes of ``check``'s finished segments (their objects matched by key in
    ``check.objects``), each in the layout of the objects listed under its id (``default`` when none is); a
    manifest that cannot be read is an error (exit 2) in ``errors``."""
    for seg in check.tp.live():
        if seg.state != FINISHED:
            continue
        objects = check.objects.get(seg.segment_id, [])
        listed = objects or store.by_segment.get(seg.segment_id)
        layout = listed[0].key.layout if listed else default
        have = {o.key.suffix: o for o in objects}
        missing = _missing_suffixes(set(have), layout)
        if missing:
            key = expected_key(check.tp, seg, layout, store, missing[0])
            what = "no object" if not objects else "no " + ", ".join("." + s for s in missing) + " object"
            check.problems.append(
                Problem(
                    "missing",
                    f"segment {seg.segment_id} (offsets {seg.start}-{seg.end}) is COPY_SEGMENT_FINISHED but the "
                    f"store holds {what} of it at its key (expected {key}): data loss, fetches of these offsets fail",
                )
            )
        if layout == "local":
            log = have.get("log")
            if log is not None and log.size != seg.size:
                _size(check, log, seg, "LocalTieredStorage copies the segment byte for byte")
            continue
        if read_manifest is not None and "rsm-manifest" in have:
            _manifest_sizes(check, seg, have, read_manifest, errors)
        if not missing:
            _remote_size(check, seg, objects)


def _size(check: PartitionCheck, obj: StoredObject, seg: RemoteSegment, why: str, expected: int | None = None) -> None:
    expected = seg.size if expected is None else expected
    check.problems.append(
        Problem(
            "size",
            f"{obj.path}: {obj.size} bytes, expected {expected} (segment {seg.segment_id}, segmentSizeInBytes="
            f"{seg.size}): {why}",
        )
    )


def _manifest_sizes(
    check: PartitionCheck,
    seg: RemoteSegment,
    have: dict[str, StoredObject],
    read_manifest: ReadManifest,
    errors: list[str],
) -> None:
    manifest_object = have["rsm-manifest"]
    try:
        manifest = read_manifest(manifest_object.path)
    except InputError as exc:
        errors.append(exc.describe())
        return
    except KsegError as exc:
        check.problems.append(
            Problem(
                "manifest",
                f"{exc.describe()}: the RSM cannot read segment {seg.segment_id} (offsets {seg.start}-{seg.end})",
            )
        )
        return
    index = manifest.chunk_index
    if index.original_file_size != seg.size:
        check.problems.append(
            Problem(
                "size",
                f"{manifest_object.path}: chunkIndex.originalFileSize {index.original_file_size}, the metadata says "
                f"segmentSizeInBytes={seg.size} (segment {seg.segment_id})",
            )
        )
    log = have.get("log")
    if log is not None and log.size != index.transformed_file_size:
        _size(check, log, seg, "the size its manifest's chunk index states", index.transformed_file_size)
    spans = [span for span in (manifest.segment_indexes or {}).values() if span is not None]
    indexes = have.get("indexes")
    if indexes is not None and spans:
        end = max(position + size for position, size in spans)
        if indexes.size != end:
            _size(check, indexes, seg, "where its manifest's segmentIndexes end", end)


def _remote_size(check: PartitionCheck, seg: RemoteSegment, objects: list[StoredObject]) -> None:
    """Aiven's ``remote_size`` is the bytes it uploaded for the segment (``SegmentCustomMetadataBuilder.totalSize``:
    the sum over its objects): a whole set of objects of another total was changed after the copy."""
    remote_size = None if seg.custom is None else seg.custom.remote_size
    if remote_size is None:
        return
    total = sum(o.size for o in objects)
    if total != remote_size:
        n = len(objects)
        check.problems.append(
            Problem(
                "size",
                f"segment {seg.segment_id}: its {plural(n, 'object')} hold {total} bytes, the custom "
                f"metadata's remote_size (the bytes Aiven's RSM uploaded) says {remote_size}",
            )
        )
