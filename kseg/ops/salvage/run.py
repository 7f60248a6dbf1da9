"""A salvage from a command line's ``SRC`` (a partition directory or one segment's ``.log``) to a new
partition directory: the input resolved, the output checked before any read, built, committed."""

from __future__ import annotations

from kseg.errors import InputError, UsageError
from kseg.ops.salvage.model import Salvage
from kseg.ops.salvage.output import Output, discard_quietly
from kseg.ops.salvage.salvage import salvage_partition
from kseg.storage import files
from kseg.storage.context import ReadContext
from kseg.storage.partition import Partition
from kseg.storage.stores.discover import store_of
from kseg.storage.stores.find import discover


def resolve(source: str, notes: list[str], context: ReadContext) -> tuple[Partition, set[int] | None]:
    """The partition ``source`` names and the base offsets to salvage (None: every segment).  A segment is
    read with its directory's listing, so the next segment's base offset bounds its offsets."""
    store = store_of(source)  # the path given: its store, chosen once
    if not files.exists(source, store=store):
        raise InputError("no such file or directory", path=source)
    if files.isdir(source, store=store):
        parts = discover([source], notes, context)
        if len(parts) != 1:
            raise UsageError(
                f"{source} holds {len(parts)} partition directories; salvage reads one",
                hint="give one partition directory (orders-3/) or one segment's .log",
            )
        if parts[0].error is not None:
            raise InputError(parts[0].error)
        return parts[0], None
    if files.suffix(source) != files.LOG:
        raise UsageError(f"{source} is not a .log file: salvage reads a partition directory or a segment's .log")
    base = files.base_offset_from_name(source)
    if base is None:
        raise InputError("not a segment file: the name carries no base offset", path=source)
    directory = source.rsplit("/", 1)[0] if "/" in source.rstrip("/") else "."  # as given (a URI's too)
    parts = discover([directory], notes, context)
    if len(parts) != 1 or parts[0].error is not None:
        raise InputError("cannot list the segment's directory", path=directory)
    return parts[0], {base}


def salvage(
    part: Partition,
    selected: set[int] | None,
    output: str | None,
    *,
    force: bool,
    from_offset: int | None,
    limit: int,
) -> Salvage:
    """Salvage ``part`` into ``output`` (None: ``--dry-run``): built beside it, renamed into place when
    whole; on any failure nothing is left."""
    out = None if output is None else Output(output, force=force, limit=limit)
    try:
        result = salvage_partition(part, selected, out, from_offset=from_offset, limit=limit)
        if out is not None:
            result.copied = out.finish(part)
            out.commit()
    except BaseException:
        discard_quietly(out)
        raise
    return result
