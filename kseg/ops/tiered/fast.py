"""The fold's fast road: a segment's records applied from their fixed layout, without the decoder's dicts.

Of the millions of records a ``__remote_log_metadata`` partition can hold, nearly all are a segment added
(``RemoteLogSegmentMetadataRecord``) or moved on (``...UpdateRecord``) by a transition Kafka accepts, of a
topic-partition met before.  For those the caller's :data:`ReadView` (``kseg.decoders.remote_view.view``:
decoders are a layer above this one) hands the values the fold uses as one tuple
(:data:`~kseg.ops.tiered.state.View`), and :func:`fold_records` applies them by the fold's own writes
(:meth:`~kseg.ops.tiered.state.Fold.add_segment`, :meth:`~kseg.ops.tiered.state.Fold.update_segment`).  Every
other record -- no view, a topic-partition not yet met with those bytes, an event Kafka refuses, a partition
deletion -- takes the general road: the record-reading rule (``kseg.decoders.remote.read_record``) and
:meth:`Fold.apply <kseg.ops.tiered.state.Fold.apply>`, the reference, which also says every problem.
``tests/ops/tiered/test_fast.py`` folds varied partitions both ways and compares all the fold holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kseg.errors import KsegError
from kseg.format.strings import uuid_to_string
from kseg.format.v2_records import RawRecord
from kseg.ops.tiered.state import PARTITION_DELETED, STARTED, UPDATE, Fold, View, next_states

#: the record-reading rule: a value -> (record name, its values); raises KsegError for one it cannot read
ReadRecord = Callable[[bytes | None], tuple[str, dict]]
#: ``(data, at, end)``: the :data:`~kseg.ops.tiered.state.View` of the record value ``data[at:end]``, or None:
#: the record-reading rule reads it
ReadView = Callable[[bytes | memoryview, int, int], View | None]

_MASK = 0xFFFFFFFF
_NEXT = next_states()


def fold_records(
    fold: Fold,
    name: str,
    data: bytes | memoryview,
    records: Sequence[RawRecord],
    view: ReadView,
    read_record: ReadRecord,
) -> None:
    """Fold ``records`` (``decode_records``' tuples, values as spans in ``data``) of metadata partition
    ``name``, each on the fast road when it can take it, else on the general one."""
    by_topic = fold.by_topic
    applied = 0
    for offset, _, _, _, span, _ in records:
        found = None
        if span is not None:
            at = span >> 32
            end = at + (span & _MASK)
            found = view(data, at, end)
            if found is not None:
                tp = by_topic.get(found[1])
                if tp is not None:
                    if found[0] == UPDATE:
                        seg = tp.by_raw.get(found[2])
                        if seg is not None and found[3] in _NEXT[seg.state]:
                            fold.update_segment(tp, seg, found, f"{name}@{offset}")
                            applied += 1
                            continue
                    elif found[3] == 0 and tp.delete_state != PARTITION_DELETED:
                        seg_id = uuid_to_string(found[2])
                        existing = tp.segments.get(seg_id)
                        if existing is None or existing.state == STARTED:
                            fold.add_segment(tp, seg_id, found, f"{name}@{offset}")
                            applied += 1
                            continue
        _general(fold, f"{name}@{offset}", None if span is None else bytes(data[at:end]), found, read_record)
    fold.records += applied


def _general(fold: Fold, where: str, value: bytes | None, found: View | None, read_record: ReadRecord) -> None:
    """A record on the general road; the topic-partition it names is then known by its bytes too."""
    try:
        kind, message = read_record(value)
    except KsegError as exc:
        fold.undecodable(where, exc.message)
        return
    tp = fold.apply(kind, message, where)
    if found is not None and tp is not None:
        fold.by_topic[found[1]] = tp
