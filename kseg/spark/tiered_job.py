"""``kseg tiered --remote URI --spark``: the store listed on the cluster.

A bucket of millions of objects takes thousands of sequential ``ListObjectsV2`` pages from one machine.
The driver lists only the store's top level (one listing with a delimiter: a prefix per topic in Aiven's
layout, ``<prefix><topic>-<topicId>/``, per topic-partition in ``LocalTieredStorage``'s,
``<topic>-<partition>-<topicId>/``), deals the prefixes into tasks (four per core present), and each task
lists its prefixes recursively (:func:`kseg.ops.tiered.store.list_objects`) and keeps the keys that are a
segment's (``remote_keys.parse_key``), sending back ``(key, size)`` pairs and the count and size of the
others.  The driver joins them with the metadata as the local command does (:mod:`kseg.ops.tiered.reconcile`):
the same rows.  A local store must be on a mount every executor sees.  A prefix that cannot be listed makes
the listing fail (exit 2): no verdict on a store not wholly listed.
"""

from __future__ import annotations

import socket
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kseg.storage.context import Store

Listed = tuple[list[tuple[str, int]], int, int, str | None]  # segment objects, other count, other bytes, error


def list_prefixes(prefixes: list[str], store: Store) -> Listed:
    """Runs on an executor: every segment object under ``prefixes`` of ``store`` (the driver's, carried in the
    task) or the first error line."""
    from kseg.errors import KsegError
    from kseg.ops.tiered.store import list_objects
    from kseg.storage.remote_keys import parse_key

    found: list[tuple[str, int]] = []
    others = other_bytes = 0
    try:
        for prefix in prefixes:
            for entry in list_objects(prefix, store):
                if parse_key(entry.path) is None:
                    others, other_bytes = others + 1, other_bytes + (entry.size or 0)
                else:
                    found.append((entry.path, entry.size or 0))
    except KsegError as exc:
        return [], 0, 0, exc.describe()
    except Exception as exc:  # never let a prefix not listed look like an empty one
        return [], 0, 0, f"executor {socket.gethostname()}: {type(exc).__name__}: {exc}"
    return found, others, other_bytes, None


def list_store(spark: Any, root: str, store: Store) -> Any:
    """The :class:`~kseg.ops.tiered.store.StoreListing` of ``root`` of ``store``, its prefixes listed by the
    executors; raises :class:`~kseg.errors.InputError` when a prefix could not be listed."""
    from kseg.errors import InputError
    from kseg.ops.tiered.store import index_entries, top_level
    from kseg.storage.location import Entry

    prefixes, files = top_level(root, store)
    listing = index_entries(root, files, store)
    if not prefixes:
        return listing
    sc = spark.sparkContext
    tasks = max(1, min(len(prefixes), 4 * sc.defaultParallelism))
    groups = [prefixes[g::tasks] for g in range(tasks)]
    results = sc.parallelize(groups, tasks).map(partial(list_prefixes, store=store)).collect()
    errors = [error for _, _, _, error in results if error is not None]
    if errors:
        more = f" (and {len(errors) - 1} more tasks)" if len(errors) > 1 else ""
        raise InputError(f"the store was not wholly listed: {errors[0]}{more}", path=root)
    found = sorted(Entry(path, size) for objects, _, _, _ in results for path, size in objects)
    segments = index_entries(root, found, store)
    listing.by_segment.update(segments.by_segment)
    listing.objects += segments.objects + sum(r[1] for r in results)
    listing.other_objects += sum(r[1] for r in results)
    listing.other_bytes += sum(r[2] for r in results)
    return listing
