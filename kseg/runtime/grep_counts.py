"""``kseg grep --key``: the topics' partition counts from the cluster metadata, for Kafka's partitioner.

A producer picks a key's partition among the partitions its metadata lists, and a KRaft cluster's
metadata is the ``__cluster_metadata`` log: the image a broker replays from it (``kseg metadata``,
:func:`kseg.ops.metadata.read.replay`) holds every topic with its partitions.  The log is the one
``--metadata`` names, else a ``__cluster_metadata-0`` directory among the inputs (a KRaft node's
``metadata.log.dir``); of several copies (a fleet's nodes), the one whose log reaches furthest (the
highest base offset of its segments).

A replay that stops short (a corrupt batch, a record the loader refuses) may miss partitions added later:
its counts are not used, said in a note.  So is a log found among the inputs that cannot be read; one
given with ``--metadata`` that cannot be read is the run's error (exit 2).
"""

from __future__ import annotations

from typing import Any

from kseg.errors import KsegError
from kseg.runtime.run import Run
from kseg.storage.stores.discover import store_of


def metadata_counts(run: Run, found: list[Any], given: str | None, bytes_limit: int) -> dict[str, int]:
    """Each topic's partition count in the cluster metadata (empty: no metadata, or none usable)."""
    from kseg.decoders.metadata import read_record
    from kseg.ops.metadata.read import METADATA_PARTITION, Target, replay
    from kseg.storage import files

    if given is not None:
        source, store = given, store_of(given)  # --metadata: its store chosen once, here
    else:
        copies = [p for p in found if p.name == METADATA_PARTITION and p.error is None and p.segments]
        if not copies:
            return {}
        best = max(copies, key=lambda p: max(s.base_offset for s in p.segments))
        source, store = best.path, best.store
    shown = files.display(source, store=store)
    if given is None and len(copies) > 1:
        run.note(
            f"{shown}: of {len(copies)} {METADATA_PARTITION} copies, the one whose log "
            "reaches furthest read for the topics' partition counts"
        )
    try:
        result = replay([source], read_record, Target(), bytes_limit)
    except KsegError as exc:
        if given is not None:
            run.fail(_for_option(exc))
        run.note(f"{shown}: the cluster metadata could not be read ({exc.describe()}): its counts not used")
        return {}
    if result.partial:
        why = result.halt.reason if result.halt is not None else result.damaged.describe()  # type: ignore[union-attr]
        run.note(
            f"{shown}: the cluster metadata's replay stopped short ({why}): its partition counts not used "
            "(a partition added after it would be missed)"
        )
        return {}
    image = result.image
    at = image.provenance.offset
    run.note(f"{shown}: the topics' partition counts from the cluster metadata (as of offset {at})")
    return {topic.name: len(topic.partitions) for topic in image.topics.values()}


def _for_option(exc: KsegError) -> KsegError:
    """``--metadata``'s own error: the option named, its hint (not the data inputs' layout hint)."""
    new = exc.at()
    new.message = f"--metadata: {exc.message}"
    new.args = (new.message,)
    new.hint = "give the __cluster_metadata-0 directory, or the log directory holding it"
    return new
